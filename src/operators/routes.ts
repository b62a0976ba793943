import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { NoContent, noContent } from '../platform/http/common-schemas.js';
import { adminCaller, requestContext } from '../platform/http/planes.js';
import type { OperatorAccounts } from './service.js';
import { CreatedOperator, CreateOperatorBody, ListOperatorsQuery, OperatorList, SetOperatorPasswordBody } from './schemas.js';

const tags = ['Admin: operators'];

/** Admin plane, no credentials: the one-time link's page sets a first password. */
export function operatorPasswordRoutes(accounts: OperatorAccounts): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/operators/set-password', {
      schema: {
        operationId: 'setOperatorPassword', summary: 'Set an operator\'s first password with the one-time link\'s token', tags, body: SetOperatorPasswordBody, response: { 204: NoContent },
        description: 'The dashboard\'s /dashboard/set-password page calls this. The password policy is checked first (400 weak_password leaves the link working); '
          + 'an unknown, used or expired token is 400 invalid_token. The link works once.',
      },
    }, async (req, reply) => { await accounts.setPassword(req.body.token, req.body.password, requestContext(req)); return noContent(reply); });
  };
}

const baseUrlOf = (req: FastifyRequest, configured: string | undefined) => configured ?? `${req.protocol}://${req.host}`;

/** Admin plane, the admin token or an operator's session: create and list operators. `baseUrl` is GATEHOUSE_BASE_URL, else the request's origin. */
export function operatorAccountRoutes(accounts: OperatorAccounts, baseUrl?: string): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/operators', {
      schema: {
        operationId: 'createOperator', summary: 'Create an operator', tags, body: CreateOperatorBody, response: { 201: CreatedOperator },
        description: 'With a password (the end-users\' policy: 400 weak_password), the operator can sign in at once; without one, the answer carries a '
          + 'one-time link to set it, valid 7 days. An email that is already an operator\'s is 409 email_taken.',
      },
    }, async (req, reply) => reply.code(201).send(await accounts.create(req.body, adminCaller(req), baseUrlOf(req, baseUrl))));
    app.get('/operators', { schema: { operationId: 'listOperators', summary: 'List operators, oldest first', tags, querystring: ListOperatorsQuery, response: { 200: OperatorList } } },
      (req) => accounts.list(req.query));
  };
}

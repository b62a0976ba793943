import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Page } from '../platform/http/common-schemas.js';
import { serverCaller } from '../platform/http/planes.js';
import { UserParams } from '../users/schemas.js';
import { Impersonation, ImpersonationParams, ListImpersonationsQuery, MintBody, MintedToken, Usage } from './schemas.js';
import type { ImpersonationService } from './service.js';

const tags = ['Impersonation'];
const MINT = 'A single-use token to sign in as the user, attributed to `actorUserId` and counted against the plan\'s monthly quota. '
  + 'Failures: 400 `invalid_request` (lifetime outside 60..600, empty reason, actor = target), 400 `redirect_url_not_allowed`; '
  + '403 `impersonation_disabled`, `impersonation_not_in_plan`, `user_deleted`, `user_banned` (target or actor); 404 `user_not_found` '
  + '(target or actor missing or of another environment); 429 `impersonation_quota_exhausted` with Retry-After until the next UTC month.';
/** Server API: mint impersonation tokens, read the usage ledger and this month's usage, revoke. */
export function impersonationServerRoutes(impersonation: ImpersonationService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/users/:userId/impersonation-token', {
      schema: { operationId: 'createImpersonationToken', summary: 'Mint an impersonation token for a user', description: MINT, tags, params: UserParams, body: MintBody, response: { 201: MintedToken } },
    }, async (req, reply) => reply.code(201).send(await impersonation.mint(req.environmentId, req.params.userId, req.body, serverCaller(req))));
    app.get('/impersonations', {
      schema: { operationId: 'listImpersonations', summary: 'List the impersonation ledger (by month, actor, target)', tags, querystring: ListImpersonationsQuery, response: { 200: Page(Impersonation) } },
    }, (req) => impersonation.list(req.environmentId, req.query));
    app.get('/impersonations/usage', { schema: { operationId: 'getImpersonationUsage', summary: "This month's impersonation tokens against the quota", tags, response: { 200: Usage } } },
      (req) => impersonation.usage(req.environmentId));
    app.get('/impersonations/:impersonationId', { schema: { operationId: 'getImpersonation', summary: 'Get one impersonation of the ledger', tags, params: ImpersonationParams, response: { 200: Impersonation } } },
      (req) => impersonation.get(req.environmentId, req.params.impersonationId));
    app.post('/impersonations/:impersonationId/revoke', {
      schema: { operationId: 'revokeImpersonation', summary: 'Revoke an impersonation: its token stops working, and the session it started ends', tags, params: ImpersonationParams, response: { 200: Impersonation } },
    }, (req) => impersonation.revoke(req.environmentId, req.params.impersonationId, serverCaller(req)));
  };
}

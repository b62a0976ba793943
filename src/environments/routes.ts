import type { FastifyPluginAsync } from 'fastify';
import type { MailMode } from '../platform/mail/mailer.js';
import type { OutboxMessage as OutboxEntry } from '../platform/mail/outbox-store.js';
import { NoContent, noContent } from '../platform/http/common-schemas.js';
import { adminCaller } from '../platform/http/planes.js';
import {
  AllowedOrigins, EscapeHatchOrigins, CreatedEnvironment, CreatedSecretKey, CreateEnvironmentBody, Environment, EnvironmentList,
  EnvironmentParams, KeyParams, Outbox, OutboxQuery, PublicEnvironment, SecretKeyList, UpdateEnvironmentBody,
} from './schemas.js';
import type { EnvironmentsService } from './service.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

const tags = ['Admin'];

/** Admin plane: environments, secret keys and the mail outbox. Mounted under /api/admin/v1. */
export function environmentsAdminRoutes(deps: {
  environments: EnvironmentsService; outbox: (envId: string, to?: string) => Promise<OutboxEntry[]>; mailMode: MailMode;
}): FastifyPluginAsync {
  const { environments } = deps;
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/environments', { schema: { operationId: 'createEnvironment', summary: 'Create an environment and its first secret key', tags, body: CreateEnvironmentBody, response: { 201: CreatedEnvironment } } },
      async (req, reply) => reply.code(201).send(await environments.create(req.body, adminCaller(req))));
    app.get('/environments', { schema: { operationId: 'listEnvironments', summary: 'List environments', tags, response: { 200: EnvironmentList } } },
      async () => ({ items: await environments.list() }));
    app.get('/environments/:id', { schema: { operationId: 'getEnvironment', summary: 'Get an environment', tags, params: EnvironmentParams, response: { 200: Environment } } },
      (req) => environments.get(req.params.id));
    app.patch('/environments/:id', { schema: { operationId: 'updateEnvironment', summary: 'Update an environment (settings deep-merge)', tags, params: EnvironmentParams, body: UpdateEnvironmentBody, response: { 200: Environment } } },
      (req) => environments.update(req.params.id, req.body));
    app.post('/environments/:id/secret-keys', { schema: { operationId: 'createSecretKey', summary: 'Issue another secret key', tags, params: EnvironmentParams, response: { 201: CreatedSecretKey } } },
      async (req, reply) => reply.code(201).send(await environments.createSecretKey(req.params.id, adminCaller(req))));
    app.get('/environments/:id/secret-keys', { schema: { operationId: 'listSecretKeys', summary: "List the environment's secret keys (hints only, never the keys)", tags, params: EnvironmentParams, response: { 200: SecretKeyList } } },
      (req) => environments.listSecretKeys(req.params.id));
    app.delete('/secret-keys/:keyId', { schema: { operationId: 'revokeSecretKey', summary: 'Revoke a secret key', tags, params: KeyParams, response: { 204: NoContent } } },
      async (req, reply) => { await environments.revokeSecretKey(req.params.keyId, adminCaller(req)); return noContent(reply); });
    app.get('/environments/:id/outbox', { schema: { operationId: 'readOutbox', summary: 'Read the mail outbox', tags, params: EnvironmentParams, querystring: OutboxQuery, response: { 200: Outbox } } },
      async (req) => { await environments.get(req.params.id); return { items: await deps.outbox(req.params.id, req.query.to), mode: deps.mailMode }; });
  };
}

/** Server API: the environment's allowed origins. */
export function allowedOriginsServerRoutes(environments: EnvironmentsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const schema = { tags: ['Allowed origins'], response: { 200: AllowedOrigins } };
    app.get('/allowed-origins', { schema: { operationId: 'getAllowedOrigins', ...schema, summary: 'Get the allowed origins' } }, (req) => environments.getAllowedOrigins(req.environmentId));
    app.put('/allowed-origins', { schema: { operationId: 'setAllowedOrigins', ...schema, summary: 'Replace the allowed origins', body: AllowedOrigins } },
      (req) => environments.setAllowedOrigins(req.environmentId, req.body.origins));
    app.get('/allowed-origins/escape-hatch', {
      schema: {
        operationId: 'listEscapeHatchOrigins', tags: ['Allowed origins'], summary: 'List the origins accepted beyond the allowed list',
        description: "Read-only: the environment's own frontend host over http and https. A cookie-authenticated change from them passes "
          + 'the Origin check, as from an allowed origin (hosted pages, an app on the frontend host). They are not CORS origins and not redirect targets.',
        response: { 200: EscapeHatchOrigins },
      },
    }, (req) => environments.getEscapeHatchOrigins(req.environmentId));
  };
}

/** The providers a sign-in UI offers, as the external sign-in lists them (given by the composition root). */
type EnabledProviders = (environmentId: string) => Promise<{ items: PublicEnvironment['oauthProviders'] }>;

/** Client plane, no session: the environment's public configuration, cacheable for a minute. */
export function environmentClientRoutes(environments: EnvironmentsService, enabledProviders: EnabledProviders): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/environment', {
      schema: {
        operationId: 'getEnvironmentConfiguration', tags: ['Client: environment'], summary: 'The public configuration a sign-in UI draws itself from',
        description: 'Sign-up rules, password policy, external providers, second-factor policy, passkeys, organization self-service, '
          + 'self-deletion and locales. No secret and no allowed-origin list. Cache-Control: public, max-age=60; it follows a settings change within that minute.',
        response: { 200: PublicEnvironment },
      },
    }, async (req, reply) => {
      reply.header('cache-control', 'public, max-age=60');
      return environments.publicConfiguration(req.environmentId, (await enabledProviders(req.environmentId)).items);
    });
  };
}

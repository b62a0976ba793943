import { recordOwnEvent } from '../audit/service.js';
import { frontendUrl } from '../environments/origins.js';
import type { EnvironmentsService } from '../environments/service.js';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/encryption.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { ClientEnvironment } from '../platform/http/planes.js';
import { invalidProviderConfig, providerNotFound } from './errors.js';
import { endpointProblem, missingEndpoints, resolveEndpoints } from './presets.js';
import type { Provider, PutProviderBody } from './schemas.js';
import { createProvidersStore, type ProviderRecord } from './store.js';

/** The redirect URI of a provider in an environment: {frontend_url}/_svc/auth/oauth2/{providerId}/callback. */
export const callbackUrl = (env: Pick<ClientEnvironment, 'frontendHost'>, providerId: string) =>
  `${frontendUrl(env.frontendHost)}/_svc/auth/oauth2/${providerId}/callback`;

const toProvider = (row: ProviderRecord, frontendHost: string): Provider => ({
  id: row.id, type: row.type, name: row.name, clientId: row.client_id, issuer: row.issuer, authorizationUrl: row.authorization_url,
  tokenUrl: row.token_url, userInfoUrl: row.user_info_url, scopes: row.scopes, enabled: row.enabled, callbackUrl: callbackUrl({ frontendHost }, row.id),
  createdAt: row.created_at.toISOString(), updatedAt: row.updated_at.toISOString(),
});

export interface ProvidersAdminDeps { db: Db; clock: Clock; sealer: Sealer; environments: Pick<EnvironmentsService, 'record'> }

/** The admin side: an environment's providers, their client secrets sealed. Used by the admin API and the CLI. */
export function createOAuthProvidersAdmin({ db, clock, sealer, environments }: ProvidersAdminDeps) {
  const providers = createProvidersStore(db);
  return {
    async putProvider(environmentId: string, providerId: string, body: PutProviderBody, by: Caller) {
      const env = await environments.record(environmentId);
      const endpoints = resolveEndpoints(body.type, body);
      const errors = (['issuer', 'authorizationUrl', 'tokenUrl', 'userInfoUrl'] as const)
        .flatMap((field) => { const problem = body[field] && endpointProblem(body[field]); return problem ? [{ path: `/${field}`, message: problem }] : []; });
      errors.push(...missingEndpoints(body.type, endpoints));
      const existing = await providers.find(environmentId, providerId);
      if (!body.clientSecret && !existing) errors.push({ path: '/clientSecret', message: 'is required when the provider is created' });
      if (errors.length > 0) throw invalidProviderConfig(errors);
      const row = await inTransaction(db, async (trx) => {
        const saved = await createProvidersStore(trx).upsert(environmentId, providerId, {
          type: body.type, name: body.name, clientId: body.clientId,
          clientSecretSealed: body.clientSecret ? sealer.seal(Buffer.from(body.clientSecret, 'utf8')) : existing!.client_secret_sealed,
          issuer: body.issuer ?? null, authorizationUrl: body.authorizationUrl ?? null, tokenUrl: body.tokenUrl ?? null, userInfoUrl: body.userInfoUrl ?? null,
          scopes: endpoints.scopes, enabled: body.enabled,
        }, clock.now());
        await recordOwnEvent(trx, environmentId, {
          action: 'oauth_provider.saved', ...by, targets: [{ type: 'oauth_provider', id: providerId }],
          metadata: { type: body.type, enabled: body.enabled, created: !existing, secretChanged: body.clientSecret !== undefined },
        }, clock.now());
        return saved;
      });
      return { created: !existing, provider: toProvider(row, env.frontendHost) };
    },
    async getProvider(environmentId: string, providerId: string) {
      const env = await environments.record(environmentId);
      const row = await providers.find(environmentId, providerId);
      if (!row) throw providerNotFound();
      return toProvider(row, env.frontendHost);
    },
    async listProviders(environmentId: string) {
      const env = await environments.record(environmentId);
      return { items: (await providers.list(environmentId)).map((row) => toProvider(row, env.frontendHost)) };
    },
    /** Removes the provider; identities linked through it stay, and work again if a provider with the same id comes back. */
    async deleteProvider(environmentId: string, providerId: string, by: Caller) {
      await environments.record(environmentId);
      const deleted = await inTransaction(db, async (trx) => {
        if (!(await createProvidersStore(trx).delete(environmentId, providerId))) return false;
        await recordOwnEvent(trx, environmentId, { action: 'oauth_provider.deleted', ...by, targets: [{ type: 'oauth_provider', id: providerId }] }, clock.now());
        return true;
      });
      if (!deleted) throw providerNotFound();
    },
  };
}
export type OAuthProvidersAdmin = ReturnType<typeof createOAuthProvidersAdmin>;

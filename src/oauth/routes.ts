import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { NoContent, noContent } from '../platform/http/common-schemas.js';
import { adminCaller, clientCaller, signedIn } from '../platform/http/planes.js';
import {
  IdentityList, IdentityParams, Provider, ProviderList, ProviderParams, PutProviderBody, UserIdentityParams,
} from './schemas.js';
import type { OAuthProvidersAdmin } from './provider-admin.js';
import type { OAuthService } from './service.js';
import { EnvironmentParams } from '../environments/schemas.js';

const PUT = 'Creates (201) or replaces (200) the provider. `oidc` needs `issuer`; `oauth2` needs `authorizationUrl`, `tokenUrl` and `userInfoUrl`; '
  + 'the presets fill in their own. The client secret is sealed at rest and never returned; on a replace it may be left out to keep it. '
  + 'Register `callbackUrl` at the provider as the redirect URI.';

/** Client plane, signed in: the user's own identities. */
export function oauthSessionRoutes(oauth: OAuthService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Client: external sign-in'];
    app.get('/me/identities', { schema: { operationId: 'listMyIdentities', summary: "The signed-in user's external identities", tags, response: { 200: IdentityList } } },
      (req) => oauth.listOwnIdentities(req.environmentId, signedIn(req).userId));
    app.delete('/me/identities/:identityId', {
      schema: { operationId: 'unlinkMyIdentity', summary: 'Unlink an identity (409 last_sign_in_method when it is the only way left to sign in)', tags, params: IdentityParams, response: { 204: NoContent } },
    }, async (req, reply) => {
      await oauth.unlink(req.environmentId, signedIn(req), req.params.identityId, clientCaller(req));
      return noContent(reply);
    });
  };
}

/** Server API: a user's identities. */
export function oauthServerRoutes(oauth: OAuthService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/users/:userId/identities', { schema: { operationId: 'listUserIdentities', summary: "List a user's external identities", tags: ['Users'], params: UserIdentityParams, response: { 200: IdentityList } } },
      (req) => oauth.listIdentities(req.environmentId, req.params.userId));
  };
}

/** Admin plane: an environment's external providers. */
export function oauthAdminRoutes(oauth: OAuthProvidersAdmin): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Admin: OAuth providers'];
    app.get('/environments/:id/oauth-providers', { schema: { operationId: 'listOAuthProviders', summary: "List the environment's external providers", tags, params: EnvironmentParams, response: { 200: ProviderList } } },
      (req) => oauth.listProviders(req.params.id));
    app.put('/environments/:id/oauth-providers/:providerId', {
      schema: { operationId: 'putOAuthProvider', summary: 'Create or replace an external provider', description: PUT, tags, params: ProviderParams, body: PutProviderBody, response: { 200: Provider, 201: Provider } },
    }, async (req, reply) => {
      const { created, provider } = await oauth.putProvider(req.params.id, req.params.providerId, req.body, adminCaller(req));
      return reply.code(created ? 201 : 200).send(provider);
    });
    app.get('/environments/:id/oauth-providers/:providerId', { schema: { operationId: 'getOAuthProvider', summary: 'Get an external provider (never its secret)', tags, params: ProviderParams, response: { 200: Provider } } },
      (req) => oauth.getProvider(req.params.id, req.params.providerId));
    app.delete('/environments/:id/oauth-providers/:providerId', {
      schema: { operationId: 'deleteOAuthProvider', summary: 'Delete an external provider (its identities stay linked)', tags, params: ProviderParams, response: { 204: NoContent } },
    }, async (req, reply) => {
      await oauth.deleteProvider(req.params.id, req.params.providerId, adminCaller(req));
      return noContent(reply);
    });
  };
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { frontendUrl } from '../environments/origins.js';
import { EnvironmentParams } from '../environments/schemas.js';
import { adminCaller, signedIn } from '../platform/http/planes.js';
import { Jwks, OpenIdConfiguration, SessionJwt, SigningKeyList, SigningKeyParams, VerifiedToken, VerifyTokenBody } from './schemas.js';
import { DISCOVERY_MAX_AGE_SECONDS, JWKS_MAX_AGE_SECONDS, type SessionTokensService } from './service.js';

const MINT = 'An ES256 JWT of the current session, valid `session.jwtLifetimeSeconds` (default 60). Claims: `iss` (the frontend URL), '
  + '`sub` (user id), `sid` (session id), `iat`, `nbf`, `exp`, `jti`, `azp` (the request\'s Origin when it is an allowed origin), '
  + '`act: {sub: <operator>}` on an impersonated session, `amr`, `public_metadata` when its JSON fits 1 KiB, `aud` when the setting '
  + '`session.jwtAudience` is set, and `org_id`, `org_role`, `org_slug` while the session has an active organization '
  + '(POST /sessions/current/active-organization). Never private metadata.';
const VERIFY = 'For a backend that prefers a call to local verification: the claims of a token of this environment whose session is '
  + 'still live. 401 `token_expired`, `token_invalid` (malformed, bad signature, another environment\'s, a revoked key) or `session_revoked`.';
const JWKS_CACHE = `public, max-age=${JWKS_MAX_AGE_SECONDS}`;
const DISCOVERY_CACHE = `public, max-age=${DISCOVERY_MAX_AGE_SECONDS}`;
const JWKS = 'The signing key and any rotated-out key whose tokens may still be valid; cacheable for 60 seconds, as long as the SDK trusts '
  + 'a fetched key set, so a revoked key stops verifying within a minute or two. A backend verifies a '
  + "session token in five lines (Node, jose):\n\n```ts\nimport { createRemoteJWKSet, jwtVerify } from 'jose';\n"
  + "const issuer = 'https://auth.example.com'; // the environment's frontend URL\n"
  + 'const jwks = createRemoteJWKSet(new URL(`${issuer}/_svc/.well-known/jwks.json`));\n'
  + "const { payload } = await jwtVerify(token, jwks, { issuer, algorithms: ['ES256'] });\n"
  + 'const userId = payload.sub, sessionId = payload.sid;\n```';

/** Client plane, signed in: a JWT of the current session. */
export function sessionTokensClientRoutes(tokens: SessionTokensService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/sessions/current/token', { schema: { operationId: 'createSessionToken', summary: 'Get a JWT of the current session', description: MINT, tags: ['Client: sessions'], response: { 200: SessionJwt } } },
      (req) => tokens.mint(req.clientEnvironment, signedIn(req), req.headers.origin));
  };
}

/**
 * The two places the key set and the discovery document are served, with the same bodies: the client plane
 * (`/_svc/.well-known/...`) and the issuer's root (`/.well-known/...`), where OpenID Connect Discovery and
 * API gateways look. Each has its own operation ids.
 */
const WELL_KNOWN = {
  clientPlane: { jwks: 'getJwks', discovery: 'getOpenIdConfiguration', where: '' },
  issuerRoot: { jwks: 'getIssuerJwks', discovery: 'getIssuerOpenIdConfiguration', where: ' (at the issuer\'s root)' },
} as const;

const CLAIMS_SUPPORTED = ['iss', 'sub', 'aud', 'sid', 'iat', 'nbf', 'exp', 'jti', 'azp', 'act', 'amr', 'public_metadata', 'org_id', 'org_role', 'org_slug'];

/** Public: the key set and the discovery document a verifier reads, on the client plane or at the issuer's root. */
export function sessionTokensPublicRoutes(tokens: SessionTokensService, at: keyof typeof WELL_KNOWN = 'clientPlane'): FastifyPluginAsync {
  const ids = WELL_KNOWN[at];
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Client: session tokens'];
    app.get('/.well-known/jwks.json', { schema: { operationId: ids.jwks, summary: `The environment's public signing keys (JWKS)${ids.where}`, description: JWKS, tags, response: { 200: Jwks } } },
      async (req, reply) => reply.header('cache-control', JWKS_CACHE).send(await tokens.jwks(req.environmentId)));
    app.get('/.well-known/openid-configuration', { schema: { operationId: ids.discovery, summary: `OpenID Connect discovery${ids.where}`, tags, response: { 200: OpenIdConfiguration } } },
      async (req, reply) => {
        const issuer = frontendUrl(req.clientEnvironment.frontendHost);
        return reply.header('cache-control', DISCOVERY_CACHE).send({
          issuer, jwks_uri: `${issuer}/_svc/.well-known/jwks.json`, response_types_supported: ['id_token'], subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['ES256'], claims_supported: CLAIMS_SUPPORTED,
        });
      });
  };
}

/** Server API: verify a session token by a call. */
export function sessionTokensServerRoutes(tokens: SessionTokensService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/sessions/verify', { schema: { operationId: 'verifySessionToken', summary: 'Verify a session token', description: VERIFY, tags: ['Sessions'], body: VerifyTokenBody, response: { 200: VerifiedToken } } },
      (req) => tokens.verify(req.environmentId, req.body.token));
  };
}

/** Admin plane: an environment's signing keys, rotation and revocation. */
export function sessionTokensAdminRoutes(tokens: SessionTokensService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Admin: signing keys'];
    app.get('/environments/:id/signing-keys', { schema: { operationId: 'listSigningKeys', summary: "List the environment's signing keys", tags, params: EnvironmentParams, response: { 200: SigningKeyList } } },
      (req) => tokens.list(req.params.id));
    app.post('/environments/:id/signing-keys/rotate', {
      schema: { operationId: 'rotateSigningKey', summary: 'Rotate: a new key signs at once, the old one stays published until its tokens expire', tags, params: EnvironmentParams, response: { 200: SigningKeyList } },
    }, (req) => tokens.rotate(req.params.id, adminCaller(req)));
    app.delete('/environments/:id/signing-keys/:keyId', {
      schema: { operationId: 'revokeSigningKey', summary: 'Revoke a signing key: it leaves the JWKS at once (a revoked signing key is replaced)', tags, params: SigningKeyParams, response: { 200: SigningKeyList } },
    }, (req) => tokens.revoke(req.params.id, req.params.keyId, adminCaller(req)));
  };
}

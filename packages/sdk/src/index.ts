export { createServerClient, type ServerClient, type ServerClientOptions } from './server.js';
export { createClientPlane, type ClientPlane, type ClientPlaneOptions } from './client-plane.js';
export { GatehouseError, type FieldError } from './errors.js';
export type { CallOptions, Input, Output, components } from './types.js';
export {
  createSessionVerifier, expressSession, fastifySession, sessionTokenOf,
  type RequestLike, type SessionVerifier, type SessionVerifierOptions, type VerifiedSession,
} from './verify.js';
export { createSessionTokenCache, JWT_COOKIE_NAME, type CachedToken, type SessionTokenCache, type SessionTokenCacheOptions } from './token-cache.js';

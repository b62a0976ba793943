export { createServerClient, ENVIRONMENT_HEADER, type ServerClient, type ServerClientOptions } from './server.js';
export { createAdminClient, type AdminClient, type AdminClientOptions } from './admin.js';
export { createClientPlane, type ClientPlane, type ClientPlaneOptions } from './client-plane.js';
export { GatehouseError, type FieldError } from './errors.js';
export type { CallOptions, Input, Output, components } from './types.js';
export { environmentSettingsSchema } from './generated/settings-schema.js';
export {
  createSessionVerifier, sessionTokenOf, SESSION_JWT_COOKIE,
  type RequestLike, type SessionVerifier, type SessionVerifierOptions, type VerifiedSession,
} from './verify.js';
export { createSessionTokenCache, type CachedToken, type SessionTokenCache, type SessionTokenCacheOptions } from './token-cache.js';
export {
  expressSession, fastifySession, sessionOf, unauthenticatedProblem, type ReplyLike, type RequestWithSession, type ResponseLike,
} from './middleware.js';
export { localhostFetch } from './localhost-fetch.js';
export {
  verifyWebhook, webhookEventTypes, WebhookVerificationError,
  type GatehouseWebhookEvent, type WebhookEvent, type WebhookEventData, type WebhookEventTarget, type WebhookEventType,
  type WebhookHeaders, type WebhookVerificationFailure,
} from './webhooks.js';

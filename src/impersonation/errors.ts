import { ProblemError } from '../platform/http/problem.js';

export const impersonationDisabled = () =>
  new ProblemError(403, 'impersonation_disabled', 'Impersonation is turned off for this environment (setting impersonationEnabled).');
export const impersonationNotInPlan = () =>
  new ProblemError(403, 'impersonation_not_in_plan', "The environment's plan does not include impersonation.");
export const quotaExhausted = (retryAfterSeconds: number, quota: number) =>
  new ProblemError(429, 'impersonation_quota_exhausted', `This month's ${quota} impersonation tokens are used up; the quota starts over on the first of next month (UTC).`,
    { retryAfterSeconds, quota }, { 'Retry-After': String(retryAfterSeconds) });
export const redirectUrlNotAllowed = () =>
  new ProblemError(400, 'redirect_url_not_allowed', "redirectUrl must be an absolute URL whose origin is one of the environment's allowed origins.");
// The setting is checked where it is used: an allowed origin can be removed after the setting was saved.
export const landingUrlNotAllowed = () =>
  new ProblemError(400, 'redirect_url_not_allowed', "The impersonationLandingUrl setting's origin is not one of the environment's allowed origins: "
    + 'add the origin, change the setting, or send redirectUrl.');
export const selfImpersonation = () =>
  new ProblemError(400, 'invalid_request', 'A user cannot impersonate themselves: actorUserId must differ from the target.',
    { errors: [{ path: '/body/actorUserId', message: 'must differ from the target user' }] });
/** A secret-key caller (a user of the environment acts) sent no actorUserId: only an operator's session names its own actor. */
export const actorRequired = () =>
  new ProblemError(400, 'invalid_request', 'actorUserId is required: name the user of this environment who impersonates.',
    { errors: [{ path: '/body/actorUserId', message: "must have required property 'actorUserId'" }] });
export const actorNotFound = () => new ProblemError(404, 'user_not_found', 'No user with the actorUserId in this environment.');
/** A banned target or actor; `who` says which of the two. */
export const userBanned = (who: 'target' | 'actor') =>
  new ProblemError(403, 'user_banned', who === 'target' ? 'The user is banned and cannot be impersonated.' : 'The actor is banned and cannot impersonate.');
export const actorDeleted = () => new ProblemError(403, 'user_deleted', 'The actor user is deleted and cannot impersonate.');
export const impersonationNotFound = () => new ProblemError(404, 'resource_not_found', 'No impersonation with this id in this environment.');
// Expired, used, revoked, unknown and another environment's tokens: one answer, so none can be told apart.
export const invalidToken = () => new ProblemError(401, 'invalid_token', 'The impersonation token is invalid, expired or already used.');
export const userNotActive = () =>
  new ProblemError(403, 'user_not_active', 'The user was banned or deleted after the token was minted: no session was started.');
export const noLandingUrl = () =>
  new ProblemError(400, 'landing_url_not_configured', 'This token was minted without a landing URL: redeem it with POST, or mint it with a redirectUrl.');

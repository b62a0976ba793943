import { ProblemError } from '../platform/http/problem.js';

export const tokenExpired = () => new ProblemError(401, 'token_expired', 'The session token has expired: ask the client for a fresh one.');
export const tokenInvalid = (detail = 'The session token is malformed, not signed by this environment, or signed with a key that was revoked.') =>
  new ProblemError(401, 'token_invalid', detail);
export const sessionRevoked = () => new ProblemError(401, 'session_revoked', 'The token is valid, but its session has ended since (signed out, revoked, banned or deleted).');
export const signingKeyNotFound = () => new ProblemError(404, 'resource_not_found', 'No signing key with this id in this environment.');

import { ProblemError } from '../platform/http/problem.js';

export const providerNotFound = () => new ProblemError(404, 'resource_not_found', 'No OAuth provider with this id in this environment.');
export const invalidProviderConfig = (errors: { path: string; message: string }[]) =>
  new ProblemError(400, 'invalid_request', 'The provider configuration is incomplete or invalid.', { errors: errors.map((e) => ({ ...e, path: `/body${e.path}` })) });
export const redirectUrlNotAllowed = () =>
  new ProblemError(400, 'redirect_url_not_allowed', "redirect_url must be an absolute URL whose origin is one of the environment's allowed origins.");
// An unknown, expired or used state: the service does not know where the browser came from, so it cannot send it back.
export const invalidState = () =>
  new ProblemError(400, 'invalid_state', 'This sign-in link is invalid, expired or was already used. Start the sign-in again from the application.');
export const identityNotFound = () => new ProblemError(404, 'resource_not_found', 'No identity with this id for this user.');
export const lastSignInMethod = () =>
  new ProblemError(409, 'last_sign_in_method', 'This identity is the only way left to sign in: set a password or link another identity first.');
export const impersonatedUnlink = () =>
  new ProblemError(403, 'forbidden', 'An impersonated session cannot remove a way to sign in.');

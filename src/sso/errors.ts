import { ProblemError } from '../platform/http/problem.js';

export const connectionNotFound = () => new ProblemError(404, 'resource_not_found', 'No SSO connection with this id in this organization.');
export const invalidConnection = (errors: { path: string; message: string }[]) =>
  new ProblemError(400, 'invalid_request', 'The SSO connection is incomplete or invalid.', { errors: errors.map((e) => ({ ...e, path: `/body${e.path}` })) });
export const idpMetadataUnavailable = (url: string, reason: string) =>
  new ProblemError(422, 'idp_metadata_unavailable', `The IdP metadata at ${url} could not be read: ${reason}`);
export const ssoRequired = () => new ProblemError(403, 'sso_required',
  "This email's organization signs its users in through its identity provider: start at GET /_svc/auth/sso/authorize?email=<email>&redirect_url=<url>.");
// An unknown, expired or used request: the service does not know where the browser came from, so it cannot send it back.
export const invalidSsoState = () =>
  new ProblemError(400, 'invalid_state', 'This sign-in response is invalid, expired or was already used. Start the sign-in again from the application.');
export const missingSsoTarget = () => new ProblemError(400, 'invalid_request', 'Give `email` or `organization_id`.');
export const unknownSamlConnection = () => new ProblemError(404, 'resource_not_found', 'No SAML connection with this id in this environment.');

import { ProblemError } from '../platform/http/problem.js';

export const environmentNotFound = () => new ProblemError(404, 'resource_not_found', 'No environment with this id.');
export const secretKeyNotFound = () => new ProblemError(404, 'resource_not_found', 'No secret key with this id.');
export const frontendHostTaken = (host: string) =>
  new ProblemError(409, 'frontend_host_taken', `Another environment already serves the frontend host "${host}".`);
export const invalidSettings = (errors: { path: string; message: string }[]) =>
  new ProblemError(400, 'invalid_request', 'The settings are invalid.', { errors });
export const invalidOrigins = (errors: { path: string; message: string }[]) =>
  new ProblemError(400, 'invalid_request', 'Each entry must be a full origin: scheme://host[:port], without path, query, fragment, credentials or wildcard.', { errors });

import { ProblemError } from '../platform/http/problem.js';

export const dataRequestNotFound = () => new ProblemError(404, 'data_request_not_found', 'No data request with this id in this environment.');
/** One export and one erasure at a time per user: a second while one is pending or scheduled is refused. */
export const dataRequestInProgress = (type: string) => new ProblemError(409, 'data_request_in_progress',
  `The user already has an ${type} request in progress: wait for it, or cancel it (an erasure, during its grace period).`);
export const notCancellable = (status: string) => new ProblemError(409, 'data_request_not_cancellable',
  `Only an erasure during its grace period (status scheduled) can be cancelled; this request is ${status}.`);
export const exportNotReady = () => new ProblemError(409, 'export_not_ready', 'The export is still being prepared: download it once its status is ready.');
export const exportExpired = () => new ProblemError(410, 'export_expired', 'The download link of this export has expired (after 7 days) and the archive is deleted: request a new export.');
export const graceDaysForErasureOnly = () => new ProblemError(400, 'invalid_request', '`graceDays` applies to erasure requests only.',
  { errors: [{ path: '/body/graceDays', message: 'applies to erasure requests only' }] });

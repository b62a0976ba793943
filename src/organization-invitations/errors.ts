import { ProblemError } from '../platform/http/problem.js';
import { rateLimited } from '../platform/http/problems.js';
import type { InvitationStatus } from '../platform/db/tables.js';

export { tokenUnusable } from '../invitations/errors.js';

export const invitationNotFound = () => new ProblemError(404, 'invitation_not_found', 'No invitation with this id in this organization.');
export const invitationNotPending = (status: InvitationStatus) =>
  new ProblemError(409, 'invitation_not_pending', `The invitation is ${status}; only a PENDING invitation can be revoked.`, { status });
export const emailMismatch = () =>
  new ProblemError(403, 'forbidden', 'This invitation is for another email address: sign in with the invited, verified address to accept it.');
export const organizationInvitationRateLimited = (retryAfterSeconds: number) =>
  rateLimited(retryAfterSeconds, "The environment's hourly invitation limit is reached; try again later.");

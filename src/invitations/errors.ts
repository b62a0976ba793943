import { ProblemError } from '../platform/http/problem.js';
import { rateLimited } from '../platform/http/problems.js';
import type { InvitationStatus } from './schemas.js';

export const invitationNotFound = () => new ProblemError(404, 'invitation_not_found', 'No invitation with this id in this environment.');
export const signUpUrlNotConfigured = () =>
  new ProblemError(400, 'sign_up_url_not_configured', "Set the environment's signUpUrl setting (or turn hostedPages on) before inviting: invitation emails link to it.");
export const redirectUrlNotAllowed = () =>
  new ProblemError(400, 'redirect_url_not_allowed', "redirectUrl must be an absolute URL whose origin is one of the environment's allowed origins or the signUpUrl's.");
export const invitationNotPending = (status: InvitationStatus) =>
  new ProblemError(409, 'invitation_not_pending', `The invitation is ${status}; only a PENDING invitation can be revoked or resent.`, { status });
export const invitationRateLimited = (retryAfterSeconds: number) =>
  rateLimited(retryAfterSeconds, "The environment's hourly invitation limit is reached; try again later.");
export const legalConsentRequired = () => new ProblemError(400, 'legal_consent_required', 'legalConsentAccepted must be true to sign up.');

/** Why an invitation token cannot be redeemed; each state has its own code so the sign-up page can say what happened. */
export function tokenUnusable(status: InvitationStatus | undefined): ProblemError {
  switch (status) {
    case undefined: return new ProblemError(404, 'invitation_not_found', 'The invitation link is not valid.');
    case 'ACCEPTED': return new ProblemError(409, 'invitation_already_accepted', 'This invitation has already been used to sign up.');
    case 'REVOKED': return new ProblemError(410, 'invitation_revoked', 'This invitation was revoked.');
    default: return new ProblemError(410, 'invitation_expired', 'This invitation has expired.');
  }
}

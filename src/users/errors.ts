import { ProblemError } from '../platform/http/problem.js';

export const userNotFound = () => new ProblemError(404, 'user_not_found', 'No user with this id in this environment.');
/** Banning or deleting the last active owner would leave organizations nobody can manage. */
export const lastOwner = (organizationIds: string[]) => new ProblemError(409, 'last_owner',
  `The user is the only active owner of ${organizationIds.length === 1 ? 'an organization' : `${organizationIds.length} organizations`}: `
  + 'make another member owner, or delete the organization, first.', { organizationIds });
export const userDeleted = () => new ProblemError(403, 'user_deleted', 'The user is deleted; a deleted user cannot be changed.');
export const emailTaken = () => new ProblemError(409, 'email_taken', 'Another user in this environment has this email.');
export const weakPassword = (reason: string) => new ProblemError(400, 'weak_password', reason);
export const emailRequired = () => new ProblemError(400, 'email_required', 'This environment requires an email address.');
export const nameRequired = () => new ProblemError(400, 'name_required', 'This environment requires a first and a last name.');

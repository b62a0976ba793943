import { ProblemError } from '../platform/http/problem.js';

export const organizationNotFound = () => new ProblemError(404, 'organization_not_found', 'No organization with this id in this environment.');
export const membershipNotFound = () => new ProblemError(404, 'resource_not_found', 'This user is not a member of the organization.');
export const alreadyMember = () => new ProblemError(409, 'already_member', 'This user is already a member of the organization.');
export const slugTaken = () => new ProblemError(409, 'slug_taken', 'Another organization in this environment has this slug.');
export const lastOwner = () =>
  new ProblemError(409, 'last_owner', 'The organization would be left without an owner: make another member owner first.');
export const forbidden = (detail: string) => new ProblemError(403, 'forbidden', detail);
export const invalidRole = (role: string, allowed: string[]) =>
  new ProblemError(400, 'invalid_role', `"${role}" is not a role of this organization; the roles are ${allowed.join(', ')}.`, { allowed });
export const invalidRoleSet = (detail: string) => new ProblemError(400, 'invalid_request', detail, { errors: [{ path: '/body/roles', message: detail }] });
export const roleSetNotFound = () => new ProblemError(400, 'role_set_not_found', 'No role set with this id in this environment.');
export const userNotActive = () => new ProblemError(409, 'user_not_active', 'Only an active user can join an organization (this one is banned or deleted).');

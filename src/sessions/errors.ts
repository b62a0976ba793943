import { ProblemError } from '../platform/http/problem.js';

/** The organization a session would make active is not one of the user's: answered as for an organization that does not exist. */
export const activeOrganizationNotFound = () => new ProblemError(404, 'organization_not_found', 'No organization with this id in this environment.');

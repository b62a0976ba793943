import { ProblemError } from '../platform/http/problem.js';

export const mfaDisabled = () => new ProblemError(403, 'mfa_disabled', 'Second factors are turned off in this environment (setting mfa.policy).');
export const factorNotFound = () => new ProblemError(404, 'resource_not_found', 'No second factor with this id for this user.');
export const totpAlreadyEnrolled = () =>
  new ProblemError(409, 'totp_already_enrolled', 'The account has an authenticator app already: remove it first to enrol another.');
export const noSecondFactor = () => new ProblemError(409, 'no_second_factor', 'The account has no second factor: enrol one first.');
export const requiredByPolicy = () => new ProblemError(409, 'mfa_required_by_policy',
  'This environment requires a second factor: the last one cannot be removed (an administrator can reset them through the Server API).');
export const invalidTotpCode = () => new ProblemError(400, 'invalid_code', 'The code is wrong or was used already.');

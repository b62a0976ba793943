import { ProblemError } from '../platform/http/problem.js';

// 400, not 401: the session stands; only this password check failed (a 401 would read as "signed out").
export const invalidPassword = () => new ProblemError(400, 'invalid_password', 'The password is incorrect.');
export const currentPasswordRequired = () =>
  new ProblemError(400, 'current_password_required', 'The account has a password: send it as currentPassword to change it.');
export const passwordNotSet = () => new ProblemError(409, 'password_not_set',
  'The account has no password to confirm: sign in again through its external provider, which counts as a recent sign-in.');
export const selfDeletionDisabled = () =>
  new ProblemError(403, 'self_deletion_disabled', 'This environment does not let users delete their own account; ask its administrator.');
export const invalidCode = () => new ProblemError(400, 'invalid_code', 'The code is wrong or was used already (or the account has no second factor).');

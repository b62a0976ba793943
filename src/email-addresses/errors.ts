import { ProblemError } from '../platform/http/problem.js';

export const emailAddressNotFound = () => new ProblemError(404, 'email_address_not_found', 'The signed-in user has no email address with this id.');
export const emailTaken = () => new ProblemError(409, 'email_taken', 'This email address is already in use: verified by another account, or already one of yours.');
export const emailNotVerified = () => new ProblemError(409, 'email_not_verified', 'Only a verified address can become primary: verify it with the mailed code first.');
export const primaryEmail = () => new ProblemError(409, 'primary_email', 'The primary address cannot be removed: make another verified address primary first.');
export const emailAddressLimit = (max: number) =>
  new ProblemError(409, 'email_address_limit', `A user can have at most ${max} email addresses: remove one first.`, { max });
export const invalidCode = () => new ProblemError(400, 'invalid_code', 'The code is wrong, expired or already used.');

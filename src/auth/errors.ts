import { ProblemError } from '../platform/http/problem.js';

// One answer for unknown email, wrong password and locked account, so none of them can be told apart.
export const invalidCredentials = () => new ProblemError(401, 'invalid_credentials', 'The email or password is incorrect.');
export const userBanned = () => new ProblemError(403, 'user_banned', 'This account is banned.');
export const emailNotVerified = () =>
  new ProblemError(403, 'email_not_verified', 'Confirm your email address with the code we sent before signing in.');
export const invalidCode = () => new ProblemError(400, 'invalid_code', 'The code is wrong, expired or already used.');
export const userNotActive = () =>
  new ProblemError(403, 'user_not_active', 'The account was banned or deleted while signing in: no session was started.');
export const invalidChallenge = () =>
  new ProblemError(400, 'invalid_challenge', 'The sign-in challenge is unknown, expired or used up: sign in again.');

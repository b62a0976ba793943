import { ProblemError } from '../platform/http/problem.js';

export const invalidSetPasswordToken = () =>
  new ProblemError(400, 'invalid_token', 'The link is invalid, expired or used: ask for a new one (npx gatehouse operators create, or POST /api/admin/v1/operators).');
export const operatorExists = () => new ProblemError(409, 'email_taken', 'An operator with this email already exists.');

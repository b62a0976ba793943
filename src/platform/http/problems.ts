import { ProblemError } from './problem.js';

/** Problems every domain may raise; a domain's own codes stay in its errors.ts. */

export const rateLimited = (retryAfterSeconds: number, detail = 'Too many attempts; try again later.', headers: Record<string, string> = {}) =>
  new ProblemError(429, 'rate_limited', detail, { retryAfterSeconds }, { ...headers, 'Retry-After': String(retryAfterSeconds) });

export const metadataTooLarge = (bytes: number, limit: number, subject = 'The three metadata bags together take') =>
  new ProblemError(400, 'metadata_too_large', `${subject} ${bytes} bytes; the limit is ${limit}.`, { bytes, limit });

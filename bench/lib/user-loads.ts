/**
 * The users bench's GET user and sign-in loads, shared with the history bench so that both measure
 * exactly the same requests.
 */
import type { LoadSpec } from './load.js';

/** What a bench environment needs for sign-in loads: no email verification, and no IP lockout (all load comes from one IP). */
export const USERS_ENVIRONMENT_SETTINGS = { emailVerificationRequired: false, lockout: { ipMaxFailures: 1_000_000 } };

/** Every seeded user has this password. */
export const USERS_PASSWORD = 'bench-Password-42!';

/** A shuffled endless walk over `count` items, so consecutive requests hit unrelated rows. */
export function rotation(count: number): () => number {
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  let k = 0;
  return () => order[k++ % count];
}

/** `GET /api/server/v1/users/:id` with the secret key, over every seeded user. */
export function getUserLoad(secretKey: string, ids: string[]): LoadSpec {
  const next = rotation(ids.length);
  return {
    name: 'GET user by id', method: 'GET', headers: { authorization: `Bearer ${secretKey}` },
    next: () => ({ path: `/api/server/v1/users/${ids[next()]}` }),
  };
}

/** `POST /_svc/auth/sign-in?_is_native=true` on the environment's frontend host, over every seeded user. */
export function signInLoad(frontendHost: string, emails: string[], password = USERS_PASSWORD): LoadSpec {
  const next = rotation(emails.length);
  return {
    name: 'client sign-in (password)', method: 'POST', headers: { host: frontendHost },
    next: () => ({ path: '/_svc/auth/sign-in?_is_native=true', body: JSON.stringify({ email: emails[next()], password }) }),
  };
}

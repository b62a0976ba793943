import { hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/** A secret with 256 random bits, base64url, behind a readable prefix (`sk_`, `sess_`, ...). */
export const randomToken = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;

/**
 * Secrets are stored as SHA-256: a database leak does not leak usable tokens. The one-shot `hash` costs
 * half of a `createHash` object, and every authenticated request hashes its key or token.
 */
export const sha256 = (value: string) => hash('sha256', value, 'buffer');

/** A 6-digit code for mail, from the CSPRNG. */
export const randomCode = () => randomInt(0, 1_000_000).toString().padStart(6, '0');

/** Compares two strings in time independent of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const [ha, hb] = [sha256(a), sha256(b)];
  return timingSafeEqual(ha, hb);
}

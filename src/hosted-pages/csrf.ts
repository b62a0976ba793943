import { createHmac, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../platform/crypto/tokens.js';
import { ProblemError } from '../platform/http/problem.js';

/** The browser's CSRF secret: HttpOnly, never sent by another site (Strict), on the frontend host only. */
export const CSRF_COOKIE = '__hosted_csrf';
export const CSRF_COOKIE_OPTIONS = { httpOnly: true, sameSite: 'strict', secure: true, path: '/' } as const;
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export const csrfFailed = () => new ProblemError(403, 'csrf_failed', 'The form carries no valid CSRF token: reload the page and send it again.');

/**
 * Signed double-submit tokens: the cookie holds a random secret, each form a MAC of it with the environment.
 * A page on a sibling subdomain that tosses its own cookie cannot make the token that goes with it, and a
 * token is worth nothing in another environment or browser.
 */
export function csrfTokens(encryptionKey: Buffer) {
  // A key of its own, derived from the sealing key: a token never doubles as anything sealed.
  const key = createHmac('sha256', encryptionKey).update('gatehouse hosted-pages csrf').digest();
  const tokenOf = (environmentId: string, secret: string) =>
    createHmac('sha256', key).update(`${environmentId}.${secret}`).digest('base64url');
  return {
    /** The browser's secret (a fresh one when it has none or a malformed one) and the token forms carry. */
    issue(environmentId: string, cookie: string | undefined) {
      const secret = cookie && SECRET_SHAPE.test(cookie) ? cookie : randomBytes(32).toString('base64url');
      return { secret, fresh: secret !== cookie, token: tokenOf(environmentId, secret) };
    },
    check(environmentId: string, cookie: string | undefined, token: unknown) {
      if (!cookie || !SECRET_SHAPE.test(cookie) || typeof token !== 'string' || !constantTimeEqual(token, tokenOf(environmentId, cookie))) throw csrfFailed();
    },
  };
}
export type CsrfTokens = ReturnType<typeof csrfTokens>;

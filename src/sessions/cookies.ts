import type { FastifyReply } from 'fastify';
import { SESSION_COOKIE } from '../platform/http/planes.js';

/**
 * HttpOnly, SameSite=Lax, Path=/ and always Secure. Behind a TLS-terminating proxy the request reaches us
 * over http, and the proxy may not be configured as trusted, so the request's scheme cannot decide: a
 * non-local host is served over https in any real deployment. Local hosts (localhost, *.localhost,
 * 127.0.0.1, [::1]) are secure contexts, where browsers keep Secure cookies over plain http too.
 */
const COOKIE_OPTIONS = { httpOnly: true, sameSite: 'lax', path: '/', secure: true } as const;

/** The HttpOnly session cookie, expiring with the session. */
export function setSessionCookie(reply: FastifyReply, token: string, expiresAt: string) {
  reply.setCookie(SESSION_COOKIE, token, { ...COOKIE_OPTIONS, expires: new Date(expiresAt) });
}

export function clearSessionCookie(reply: FastifyReply) {
  reply.clearCookie(SESSION_COOKIE, COOKIE_OPTIONS);
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../platform/http/planes.js';

const isLocalHost = (hostname: string) => hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '127.0.0.1' || hostname === '[::1]';

/** HttpOnly, SameSite=Lax, Path=/, and Secure on https or localhost (where browsers accept it over http). */
const cookieOptions = (request: FastifyRequest) => ({
  httpOnly: true, sameSite: 'lax' as const, path: '/', secure: request.protocol === 'https' || isLocalHost(request.hostname),
});

function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, expiresAt: string) {
  reply.setCookie(SESSION_COOKIE, token, { ...cookieOptions(request), expires: new Date(expiresAt) });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply) {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
}

/** The session answer: a cookie for browsers, or the token in the body for native apps. */
export function sendSession(
  request: FastifyRequest, reply: FastifyReply, native: boolean,
  result: { user: unknown; session: { expiresAt: string }; token: string }, status = 200,
) {
  const body = { user: result.user, session: result.session };
  if (native) return reply.code(status).send({ ...body, sessionToken: result.token });
  setSessionCookie(request, reply, result.token, result.session.expiresAt);
  return reply.code(status).send(body);
}

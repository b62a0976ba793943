import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallbackResult } from '../../oauth/service.js';
import { setSessionCookie } from '../../sessions/cookies.js';
import type { SignedIn, SignInResult } from '../service/issue-session.js';

/**
 * How a route answers a sign-in: the JSON body with the session cookie (browsers), the JSON body with
 * `sessionToken` (native apps, `_is_native=true`), or the cookie and a 303 to a URL exactly as given
 * (browser links and external sign-in).
 */
export type AnswerMode = { native: boolean } | { redirectTo: string };

function answerSession(reply: FastifyReply, signedIn: SignedIn, mode: AnswerMode, status: number) {
  if ('redirectTo' in mode) {
    setSessionCookie(reply, signedIn.token, signedIn.session.expiresAt);
    return reply.redirect(mode.redirectTo, 303);
  }
  const body = { user: signedIn.user, session: signedIn.session };
  if (mode.native) return reply.code(status).send({ ...body, sessionToken: signedIn.token });
  setSessionCookie(reply, signedIn.token, signedIn.session.expiresAt);
  return reply.code(status).send(body);
}

/**
 * The second step a user with a factor must take: the challenge in the body, or for a browser link (OAuth)
 * a 303 to the URL with `mfa_challenge` added, where the app asks for the code. No session, no cookie.
 */
function answerChallenge(reply: FastifyReply, challengeToken: string, factors: string[], mode: AnswerMode) {
  if ('redirectTo' in mode) {
    const url = new URL(mode.redirectTo);
    url.searchParams.set('mfa_challenge', challengeToken);
    return reply.redirect(url.href, 303);
  }
  return reply.code(200).send({ mfaRequired: true, challengeToken, factors });
}

/** The one answer of every route that ends in a sign-in, whatever the sign-in ended in. `status` is a started session's (201 for a sign-up). */
export function answerSignIn(reply: FastifyReply, result: SignInResult, mode: AnswerMode, status = 200) {
  switch (result.status) {
    case 'complete': return answerSession(reply, result, mode, status);
    case 'pending_verification': return reply.code(201).send({ user: result.user, verification: { status: 'pending' } });
    case 'mfa_required': return answerChallenge(reply, result.challengeToken, result.factors, mode);
  }
}

/** `redirect_url` with `error=<code>` added to its query (its fragment stays where it is). */
function withError(redirectUrl: string, code: string) {
  const url = new URL(redirectUrl);
  url.searchParams.set('error', code);
  return url.href;
}

/**
 * The end of a browser's trip through another site (an OAuth provider, an organization's IdP): the cookie that
 * bound the trip to this browser goes, then the session and 303 to the URL the trip started with, or 303 there
 * with `?error=<code>` (the reason only in the log).
 */
export function answerReturnTrip(request: FastifyRequest, reply: FastifyReply, result: CallbackResult<SignInResult, string>,
  browserCookie: { name: string; options: CookieSerializeOptions }) {
  reply.clearCookie(browserCookie.name, browserCookie.options);
  if (result.outcome === 'signed_in') return answerSignIn(reply, result.signedIn, { redirectTo: result.redirectUrl });
  request.log.warn({ signInError: result.code, reason: result.reason }, 'external sign-in failed');
  return reply.redirect(withError(result.redirectUrl, result.code), 303);
}

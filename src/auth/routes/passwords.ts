import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { NoContent, noContent } from '../../platform/http/common-schemas.js';
import { clientCaller, OPEN_DURING_ENROLMENT, requestContext, signedIn } from '../../platform/http/planes.js';
import { clearSessionCookie } from '../../sessions/cookies.js';
import type { SessionsService } from '../../sessions/service.js';
import { Accepted, EmailOnlyBody, MfaRequired, NativeQuery, PendingVerification, ResetPasswordBody, SessionResponse, SignInBody, SignUpBody, VerifyEmailBody } from '../schemas.js';
import type { EmailedCodesService } from '../service/codes.js';
import type { PasswordAuthService } from '../service/passwords.js';
import { answerSignIn } from './answer.js';

const tags = ['Client: authentication'];

const FORGOT_PASSWORD = 'Answers 202 with the same body for any email (unknown, deleted, banned or live). Only a live account '
  + 'gets a mail: a 6-digit code, valid 10 minutes, that replaces any earlier one. 5 requests per email (account or not) '
  + 'and 30 per client IP per hour; beyond that 429 rate_limited with Retry-After.';
const SIGN_IN = 'A session; or, for a user with a second factor, `{mfaRequired: true, challengeToken, factors}` and no session until '
  + 'POST /_svc/auth/mfa/verify answers the challenge with a code. A wrong password answers the same whether or not the account has a factor.';
const RESET_PASSWORD = 'The password policy is checked first (400 weak_password; the code is not used up and no try is counted). '
  + 'A wrong, expired, used, superseded or burnt code, an unknown email and a banned account all answer 400 invalid_code; '
  + 'the fifth wrong try burns the code. Success, in one transaction: the code is used up, the password set, the sign-in '
  + 'lockout cleared, a pending registration completed, every session of the user revoked and a new one started (for a user with a second factor, '
  + 'the sign-in\'s challenge instead: the mailbox alone is no way past the factor). '
  + 'A "password changed" mail follows. 100 attempts per client IP per hour (429).';

/** Client plane, no session needed: sign-up, email verification, sign-in, password reset. */
export function passwordAuthRoutes(passwords: PasswordAuthService, codes: EmailedCodesService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();

    app.post('/auth/sign-up', {
      schema: { operationId: 'signUp', summary: 'Sign up with email and password', tags, querystring: NativeQuery, body: SignUpBody, response: { 201: Type.Union([SessionResponse, PendingVerification]) } },
    }, async (req, reply) => answerSignIn(reply, await passwords.signUp(req.clientEnvironment, req.body, requestContext(req)), { native: req.query._is_native }, 201));
    app.post('/auth/verify-email', { schema: { operationId: 'verifyEmail', summary: 'Confirm the email with the mailed code and start a session', tags, querystring: NativeQuery, body: VerifyEmailBody, response: { 200: SessionResponse } } },
      async (req, reply) => answerSignIn(reply, await codes.verifyEmail(req.clientEnvironment, req.body, requestContext(req)), { native: req.query._is_native }));
    app.post('/auth/verify-email/send', { schema: { operationId: 'sendVerificationCode', summary: 'Mail a new verification code', tags, body: EmailOnlyBody, response: { 202: Accepted } } },
      async (req, reply) => {
        await codes.resendVerificationCode(req.clientEnvironment, req.body.email, req.ip);
        return reply.code(202).send({ status: 'accepted', message: 'If a pending account has this email, a new code is on its way.' });
      });
    app.post('/auth/sign-in', { schema: { operationId: 'signIn', summary: 'Sign in with email and password', description: SIGN_IN, tags, querystring: NativeQuery, body: SignInBody, response: { 200: Type.Union([SessionResponse, MfaRequired], { description: 'A session, or (a user with a second factor) the challenge to answer' }) } } },
      async (req, reply) => answerSignIn(reply, await passwords.signIn(req.clientEnvironment, req.body, requestContext(req)), { native: req.query._is_native }));
    app.post('/auth/forgot-password', { schema: { operationId: 'forgotPassword', summary: 'Mail a password reset code', description: FORGOT_PASSWORD, tags, body: EmailOnlyBody, response: { 202: Accepted } } },
      async (req, reply) => {
        await codes.requestPasswordReset(req.clientEnvironment, req.body.email, req.ip);
        return reply.code(202).send({ status: 'accepted', message: 'If an account has this email, a password reset code is on its way.' });
      });
    app.post('/auth/reset-password', {
      schema: { operationId: 'resetPassword', summary: 'Set a new password with the mailed code and start a session', description: RESET_PASSWORD, tags, querystring: NativeQuery, body: ResetPasswordBody, response: { 200: Type.Union([SessionResponse, MfaRequired], { description: 'A session, or (a user with a second factor) the challenge to answer' }) } },
    }, async (req, reply) => answerSignIn(reply, await codes.resetPassword(req.clientEnvironment, req.body, requestContext(req)), { native: req.query._is_native }));
  };
}

/** Client plane, signed in: sign-out. */
export function signOutRoutes(sessions: SessionsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/auth/sign-out', { config: OPEN_DURING_ENROLMENT, schema: { operationId: 'signOut', summary: 'Sign out: revoke the current session', tags, response: { 204: NoContent } } }, async (req, reply) => {
      const { userId, id } = signedIn(req);
      await sessions.revoke(req.environmentId, userId, id, clientCaller(req), 'sign_out');
      clearSessionCookie(reply);
      return noContent(reply);
    });
  };
}

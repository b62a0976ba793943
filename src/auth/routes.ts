import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { EnvironmentSettings } from '../environments/settings.js';
import { NoContent, noContent } from '../platform/http/common-schemas.js';
import { clientCaller } from '../platform/http/planes.js';
import { clearSessionCookie, sendSession } from '../sessions/cookies.js';
import type { SessionsService } from '../sessions/service.js';
import { Accepted, EmailOnlyBody, NativeQuery, PendingVerification, SessionResponse, SignInBody, SignUpBody, VerifyEmailBody } from './schemas.js';
import type { AuthService } from './service.js';

const tags = ['Client: authentication'];

type SettingsOf = (request: FastifyRequest) => EnvironmentSettings;
const originOf = (req: FastifyRequest) => ({ ipAddress: req.ip, userAgent: req.headers['user-agent'] ?? null });

/** Client plane, no session needed: sign-up, email verification, sign-in. */
export function authPublicRoutes(auth: AuthService, settingsOf: SettingsOf): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const envOf = (req: FastifyRequest) => ({ id: req.environmentId, settings: settingsOf(req) });

    app.post('/auth/sign-up', {
      schema: { summary: 'Sign up with email and password', tags, querystring: NativeQuery, body: SignUpBody, response: { 201: Type.Union([SessionResponse, PendingVerification]) } },
    }, async (req, reply) => {
      const result = await auth.signUp(envOf(req), req.body, originOf(req));
      if (result.pending) return reply.code(201).send({ user: result.user, verification: { status: 'pending' } });
      return sendSession(req, reply, req.query._is_native, result, 201);
    });
    app.post('/auth/verify-email', { schema: { summary: 'Confirm the email with the mailed code and start a session', tags, querystring: NativeQuery, body: VerifyEmailBody, response: { 200: SessionResponse } } },
      async (req, reply) => sendSession(req, reply, req.query._is_native, await auth.verifyEmail(envOf(req), req.body, originOf(req))));
    app.post('/auth/verify-email/send', { schema: { summary: 'Mail a new verification code', tags, body: EmailOnlyBody, response: { 202: Accepted } } },
      async (req, reply) => {
        await auth.resendVerificationCode(envOf(req), req.body.email, req.ip);
        return reply.code(202).send({ status: 'accepted', message: 'If a pending account has this email, a new code is on its way.' });
      });
    app.post('/auth/sign-in', { schema: { summary: 'Sign in with email and password', tags, querystring: NativeQuery, body: SignInBody, response: { 200: SessionResponse } } },
      async (req, reply) => sendSession(req, reply, req.query._is_native, await auth.signIn(envOf(req), req.body, originOf(req))));
  };
}

/** Client plane, signed in: sign-out and the user's own sessions. */
export function authSessionRoutes(sessions: SessionsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/auth/sign-out', { schema: { summary: 'Sign out: revoke the current session', tags, response: { 204: NoContent } } }, async (req, reply) => {
      await sessions.revoke(req.environmentId, req.session!.userId, req.session!.id, clientCaller(req), 'sign_out');
      clearSessionCookie(req, reply);
      return noContent(reply);
    });
  };
}

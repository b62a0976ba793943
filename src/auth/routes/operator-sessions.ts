import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { BackupCodes, ConfirmTotpBody, FactorParams, TotpEnrolment } from '../../factors/schemas.js';
import { Operator, OperatorMfaRequired, OperatorSecondFactorBody, OperatorSession, OperatorSignInBody } from '../../operators/schemas.js';
import { toOperator } from '../../operators/service.js';
import { NoContent, noContent } from '../../platform/http/common-schemas.js';
import { adminCaller, OPERATOR_COOKIE, requestContext, signedInOperator } from '../../platform/http/planes.js';
import type { SignInResult } from '../service/issue-session.js';
import type { OperatorSessions } from '../service/operator-sessions.js';

const tags = ['Admin: operators'];

/**
 * HttpOnly (no script reads it), always Secure (local hosts are secure contexts, see sessions/cookies.ts),
 * SameSite=Strict (no other site's page sends it), and Path=/api: the admin API and the Server API, nothing else.
 */
const COOKIE_OPTIONS = { httpOnly: true, secure: true, sameSite: 'strict', path: '/api' } as const;

/** A sign-in's answer: the session in the cookie, or the second-factor challenge. */
function answer(reply: FastifyReply, result: SignInResult) {
  if (result.status === 'mfa_required') return { mfaRequired: true as const, challengeToken: result.challengeToken, factors: result.factors };
  if (result.status !== 'complete') throw new Error('an operator sign-in never waits for an emailed code');
  reply.setCookie(OPERATOR_COOKIE, result.token, { ...COOKIE_OPTIONS, expires: new Date(result.session.expiresAt) });
  const { id, createdAt, expiresAt } = result.session;
  return { operator: toOperator(result.user), session: { id, createdAt, expiresAt } };
}

const SIGN_IN = 'The end-users\' password sign-in, in the operators\' own environment: a wrong password and an unknown email answer the same '
  + '401 invalid_credentials. Failures count per client network, never locking the account (a right password from another network still signs '
  + 'in): 5 for one email from one network within the hour answer 429 rate_limited with Retry-After until the hour is over, even for the right '
  + 'password; per client IP, 100 failures across operators in 15 minutes answer 429 rate_limited. Success sets the `gatehouse_operator` cookie (HttpOnly, Secure, SameSite=Strict, Path=/api); an operator '
  + 'with a second factor gets `{mfaRequired: true, challengeToken, factors}` instead, and POSTs a code to /operator-sessions/mfa.';

/** Admin plane, no credentials: operator sign-in and its second step. */
export function operatorSignInRoutes(sessions: OperatorSessions): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/operator-sessions', {
      schema: { operationId: 'signInOperator', summary: 'Sign an operator in', description: SIGN_IN, tags, body: OperatorSignInBody, response: { 200: Type.Union([OperatorSession, OperatorMfaRequired]) } },
    }, async (req, reply) => answer(reply, await sessions.signIn(req.body, requestContext(req))));
    app.post('/operator-sessions/mfa', {
      schema: {
        operationId: 'verifyOperatorSecondFactor', summary: 'Answer an operator sign-in\'s second-factor challenge', tags, body: OperatorSecondFactorBody, response: { 200: OperatorSession },
        description: 'A 6-digit TOTP code or a backup code; a wrong one is 400 invalid_code and counts against the lockout; the challenge lasts 5 minutes. Success sets the cookie.',
      },
    }, async (req, reply) => answer(reply, await sessions.verifySecondFactor(req.body, requestContext(req))) as OperatorSession);
  };
}

/** Admin plane, an operator's session: who is signed in, sign-out, and enrolling an authenticator app. */
export function operatorSessionRoutes(sessions: OperatorSessions): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/operator-sessions/current', {
      schema: {
        operationId: 'getCurrentOperator', summary: 'The signed-in operator', tags, description: '403 operator_session_required with the admin token.',
        response: { 200: Type.Object({ operator: Operator, sessionId: Type.String({ format: 'uuid' }), secondFactorEnrolled: Type.Boolean() }, { title: 'CurrentOperator' }) },
      },
    }, (req) => sessions.current(signedInOperator(req)));
    app.delete('/operator-sessions/current', { schema: { operationId: 'signOutOperator', summary: 'Sign the operator out', tags, response: { 204: NoContent } } }, async (req, reply) => {
      await sessions.signOut(signedInOperator(req), adminCaller(req));
      reply.clearCookie(OPERATOR_COOKIE, COOKIE_OPTIONS);
      return noContent(reply);
    });
    app.post('/operators/me/mfa/totp', {
      schema: { operationId: 'enrolOperatorTotp', summary: 'Start enrolling an authenticator app for the signed-in operator', description: 'As POST /_svc/me/mfa/totp; 409 totp_already_enrolled with a confirmed one.', tags, response: { 201: TotpEnrolment } },
    }, async (req, reply) => reply.code(201).send(await sessions.enrolTotp(signedInOperator(req))));
    app.post('/operators/me/mfa/totp/:factorId/confirm', {
      schema: { operationId: 'confirmOperatorTotp', summary: 'Confirm the operator\'s authenticator app with its first code', description: 'Answers 10 backup codes, shown once; from then on sign-in asks for a code.', tags, params: FactorParams, body: ConfirmTotpBody, response: { 200: BackupCodes } },
    }, (req) => sessions.confirmTotp(signedInOperator(req), req.params.factorId, req.body.code, adminCaller(req)));
  };
}

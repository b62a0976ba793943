import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { requestContext } from '../../platform/http/planes.js';
import { MfaVerifyBody, NativeQuery, SessionResponse } from '../schemas.js';
import type { SecondFactorStep } from '../service/second-factor.js';
import { answerSignIn } from './answer.js';

const VERIFY = 'The second step of a sign-in: the `challengeToken` a sign-in (or password reset, or the OAuth redirect\'s `mfa_challenge`) answered '
  + 'and a code: a 6-digit TOTP code (accepted once per 30-second step; one step of clock skew either way) or an unused backup code. Success: a '
  + 'session whose amr adds otp and mfa. A wrong, replayed or used code: 400 invalid_code, counted against the account\'s lockout (the attempt '
  + 'that fills it locks the account; a locked account answers the same); a challenge is good for 5 minutes and 5 wrong codes: then, or once '
  + 'used, 400 invalid_challenge.';

/** Client plane, no session: the second step of a sign-in. */
export function secondFactorRoutes(secondStep: SecondFactorStep): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/auth/mfa/verify', {
      schema: { operationId: 'verifySecondFactor', summary: 'Answer the sign-in challenge with a second-factor code', description: VERIFY, tags: ['Client: authentication'], querystring: NativeQuery, body: MfaVerifyBody, response: { 200: SessionResponse } },
    }, async (req, reply) => answerSignIn(reply, await secondStep.verify(req.clientEnvironment, req.body, requestContext(req)), { native: req.query._is_native }));
  };
}

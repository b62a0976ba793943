import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { FastifyPluginAsync } from 'fastify';
import { RequestOptions } from '../../passkeys/schemas.js';
import { requestContext } from '../../platform/http/planes.js';
import { NativeQuery, PasskeyOptionsBody, PasskeySignInBody, SessionResponse } from '../schemas.js';
import type { PasskeySignIn } from '../service/passkeys.js';
import { answerSignIn } from './answer.js';

const tags = ['Client: authentication'];
const OPTIONS = 'Options for navigator.credentials.get() on a page of the frontend host, with a challenge good once for 5 minutes. Always '
  + 'discoverable (no allowCredentials): the browser offers the passkeys it holds for this RP ID, and the answer is the same for any email, '
  + 'known or not. An `email` binds the challenge to that account: a passkey of another account is refused. The challenge is signed, not '
  + 'stored: nothing is written until a sign-in uses it. Per client IP, 60 calls a minute (429 rate_limited with Retry-After past them). '
  + '403 passkeys_disabled when the setting passkeys.enabled is false.';
const SIGN_IN = 'The response of navigator.credentials.get() (PublicKeyCredential.toJSON()). Success: a session, complete without a second '
  + 'factor and recently authenticated, whose amr is swk (a synced passkey) or hwk (one bound to its authenticator) with user and mfa. '
  + '400 invalid_passkey_challenge for an unknown, expired, used or another environment\'s challenge (spent by the sign-in that '
  + 'uses it); 400 invalid_passkey when the credential is unknown here or a check fails (origin, RP ID, signature, user '
  + 'verification, a counter that did not move forward); 403 user_banned.';

/** Client plane, no session: sign in with a passkey. */
export function passkeySignInRoutes(passkeys: PasskeySignIn): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/auth/passkey/options', {
      // The body is optional as a whole ({email?}): a bare POST means no email.
      preValidation: async (req) => { req.body ??= {}; },
      schema: { operationId: 'passkeySignInOptions', summary: 'Start a passkey sign-in', description: OPTIONS, tags, body: PasskeyOptionsBody, response: { 200: RequestOptions } },
    }, (req) => passkeys.options(req.clientEnvironment, req.body.email, requestContext(req)));
    app.post('/auth/passkey', { schema: { operationId: 'signInWithPasskey', summary: 'Sign in with a passkey', description: SIGN_IN, tags, querystring: NativeQuery, body: PasskeySignInBody, response: { 200: SessionResponse } } },
      async (req, reply) => answerSignIn(reply, await passkeys.signIn(req.clientEnvironment, req.body.response as AuthenticationResponseJSON, requestContext(req)), { native: req.query._is_native }));
  };
}

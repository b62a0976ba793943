import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { RedeemBody, RedeemQuery } from '../../impersonation/schemas.js';
import { requestContext } from '../../platform/http/planes.js';
import { NativeQuery, SessionResponse } from '../schemas.js';
import type { ImpersonationSignIn } from '../service/impersonation.js';
import { answerSignIn } from './answer.js';

const tags = ['Client: authentication'];
const REDEEM = 'Starts a session of the target carrying `actor`, answered like sign-in (cookie, or `sessionToken` with `_is_native=true`). '
  + 'It lasts at most the impersonationSessionLifetimeSeconds setting (default 1 hour). A token works once; an expired, used, revoked, '
  + "unknown or another environment's token answers 401 `invalid_token`; a target banned or deleted since the mint 403 `user_not_active`.";
const REDEEM_LINK = 'The browser link of the mint: sets the HttpOnly session cookie and answers 303 to the landing URL exactly as stored. '
  + 'Refusals as for POST; a token minted without a landing URL answers 400 `landing_url_not_configured` (redeem it with POST).';

/** Client plane, no session needed: redeem an impersonation token by POST or by the browser link. */
export function impersonationRedeemRoutes(impersonation: ImpersonationSignIn): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/auth/session/impersonate', {
      schema: { operationId: 'redeemImpersonationToken', summary: 'Redeem an impersonation token', description: REDEEM, tags, querystring: NativeQuery, body: RedeemBody, response: { 200: SessionResponse } },
    }, async (req, reply) => {
      const { result } = await impersonation.redeem(req.clientEnvironment, req.body.token, requestContext(req), 'post');
      return answerSignIn(reply, result, { native: req.query._is_native });
    });
    app.get('/auth/session/impersonate', {
      schema: { operationId: 'redeemImpersonationLink', summary: 'Redeem an impersonation link in a browser', description: REDEEM_LINK, tags, querystring: RedeemQuery, response: { 303: Type.Null({ description: 'To the landing URL' }) } },
    }, async (req, reply) => {
      // A link is redeemed only when the token has a landing URL (else 400 landing_url_not_configured).
      const { result, landingUrl } = await impersonation.redeem(req.clientEnvironment, req.query.token, requestContext(req), 'link');
      return answerSignIn(reply, result, { redirectTo: landingUrl! });
    });
  };
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { NativeQuery, SessionResponse } from '../auth/schemas.js';
import { Page } from '../platform/http/common-schemas.js';
import { requestContext, serverCaller } from '../platform/http/planes.js';
import { redirectWithSession, sendSession } from '../sessions/cookies.js';
import { UserParams } from '../users/schemas.js';
import { Impersonation, ImpersonationParams, ListImpersonationsQuery, MintBody, MintedToken, RedeemBody, RedeemQuery, Usage } from './schemas.js';
import type { ImpersonationService } from './service.js';

const tags = ['Impersonation'];
const MINT = 'A single-use token to sign in as the user, attributed to `actorUserId` and counted against the plan\'s monthly quota. '
  + 'Failures: 400 `invalid_request` (lifetime outside 60..600, empty reason, actor = target), 400 `redirect_url_not_allowed`; '
  + '403 `impersonation_disabled`, `impersonation_not_in_plan`, `user_deleted`, `user_banned` (target or actor); 404 `user_not_found` '
  + '(target or actor missing or of another environment); 429 `impersonation_quota_exhausted` with Retry-After until the next UTC month.';
const REDEEM = 'Starts a session of the target carrying `actor`, answered like sign-in (cookie, or `sessionToken` with `_is_native=true`). '
  + 'It lasts at most the impersonationSessionLifetimeSeconds setting (default 1 hour). A token works once; an expired, used, revoked, '
  + "unknown or another environment's token answers 401 `invalid_token`; a target banned or deleted since the mint 403 `user_not_active`.";
const REDEEM_LINK = 'The browser link of the mint: sets the HttpOnly session cookie and answers 303 to the landing URL exactly as stored. '
  + 'Refusals as for POST; a token minted without a landing URL answers 400 `landing_url_not_configured` (redeem it with POST).';

/** Server API: mint impersonation tokens, read the usage ledger and this month's usage, revoke. */
export function impersonationServerRoutes(impersonation: ImpersonationService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/users/:userId/impersonation-token', {
      schema: { operationId: 'createImpersonationToken', summary: 'Mint an impersonation token for a user', description: MINT, tags, params: UserParams, body: MintBody, response: { 201: MintedToken } },
    }, async (req, reply) => reply.code(201).send(await impersonation.mint(req.environmentId, req.params.userId, req.body, serverCaller(req))));
    app.get('/impersonations', {
      schema: { operationId: 'listImpersonations', summary: 'List the impersonation ledger (by month, actor, target)', tags, querystring: ListImpersonationsQuery, response: { 200: Page(Impersonation) } },
    }, (req) => impersonation.list(req.environmentId, req.query));
    app.get('/impersonations/usage', { schema: { operationId: 'getImpersonationUsage', summary: "This month's impersonation tokens against the quota", tags, response: { 200: Usage } } },
      (req) => impersonation.usage(req.environmentId));
    app.get('/impersonations/:impersonationId', { schema: { operationId: 'getImpersonation', summary: 'Get one impersonation of the ledger', tags, params: ImpersonationParams, response: { 200: Impersonation } } },
      (req) => impersonation.get(req.environmentId, req.params.impersonationId));
    app.post('/impersonations/:impersonationId/revoke', {
      schema: { operationId: 'revokeImpersonation', summary: 'Revoke an impersonation: its token stops working, and the session it started ends', tags, params: ImpersonationParams, response: { 200: Impersonation } },
    }, (req) => impersonation.revoke(req.environmentId, req.params.impersonationId, serverCaller(req)));
  };
}

/** Client plane, no session needed: redeem an impersonation token by POST or by the browser link. */
export function impersonationClientRoutes(impersonation: ImpersonationService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const clientTags = ['Client: authentication'];
    app.post('/auth/session/impersonate', {
      schema: { operationId: 'redeemImpersonationToken', summary: 'Redeem an impersonation token', description: REDEEM, tags: clientTags, querystring: NativeQuery, body: RedeemBody, response: { 200: SessionResponse } },
    }, async (req, reply) =>
      sendSession(reply, req.query._is_native, await impersonation.redeem(req.clientEnvironment, req.body.token, requestContext(req), 'post')));
    app.get('/auth/session/impersonate', {
      schema: { operationId: 'redeemImpersonationLink', summary: 'Redeem an impersonation link in a browser', description: REDEEM_LINK, tags: clientTags, querystring: RedeemQuery, response: { 303: Type.Null({ description: 'To the landing URL' }) } },
    }, async (req, reply) => {
      const redeemed = await impersonation.redeem(req.clientEnvironment, req.query.token, requestContext(req), 'link');
      return redirectWithSession(reply, redeemed, redeemed.landingUrl!);
    });
  };
}

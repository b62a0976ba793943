import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AuthorizeQuery, CallbackQuery, ClientProviderList, ClientProviderParams } from '../../oauth/schemas.js';
import { STATE_LIFETIME_SECONDS, type CallbackResult } from '../../oauth/service.js';
import { requestContext } from '../../platform/http/planes.js';
import type { SignInResult } from '../service/issue-session.js';
import type { ExternalSignIn } from '../service/external.js';
import { answerReturnTrip } from './answer.js';

/** Binds a started sign-in to the browser that started it; sent only to the OAuth routes. */
const BROWSER_COOKIE = '__oauth_browser';
// Lax: the provider sends the browser back with a top-level GET, on which Lax cookies are sent.
const BROWSER_COOKIE_OPTIONS = { httpOnly: true, sameSite: 'lax', secure: true, path: '/_svc/auth/oauth2/' } as const;

const AUTHORIZE = 'Starts a sign-in with the provider: 302 to its authorization page with a single-use `state` (valid 10 minutes, bound to this '
  + 'browser by an HttpOnly cookie), PKCE (S256) and, for OpenID Connect, a `nonce`. `redirect_url` must have an allowed origin (`400 redirect_url_not_allowed`). '
  + 'When the provider is unknown, disabled or unreachable the browser goes straight back to `redirect_url` with `?error=`.';
const CALLBACK = 'Where the provider sends the browser back. The state is checked and used up, then the RFC 9207 `iss` parameter (when sent), the code '
  + 'is exchanged (with the PKCE verifier) and the ID token validated (issuer, audience, nonce, expiry, algorithm) or the profile read. The user is the '
  + "one the identity belongs to; else the live user with the provider's verified email (setting `oauthLinkVerifiedEmails`, default true); else a new "
  + 'user. Success: the session cookie and 303 to `redirect_url`. Failure: 303 to `redirect_url?error=<code>`, one of `access_denied`, `provider_error`, '
  + '`provider_unavailable`, `invalid_response`, `state_mismatch`, `provider_not_found`, `email_required`, `name_required`, `email_taken`, `user_banned`, `sso_required`. '
  + 'An unknown, expired or used state answers `400 invalid_state` (there is no safe place to send the browser).';

const sendResult = (request: FastifyRequest, reply: FastifyReply, result: CallbackResult<SignInResult, string>) =>
  answerReturnTrip(request, reply, result, { name: BROWSER_COOKIE, options: BROWSER_COOKIE_OPTIONS });

/** Client plane, no session: the providers to offer, and the redirect dance. */
export function externalSignInRoutes(external: ExternalSignIn): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Client: external sign-in'];
    app.get('/auth/oauth2/providers', { schema: { operationId: 'listSignInProviders', summary: 'The enabled external providers', tags, response: { 200: ClientProviderList } } },
      (req) => external.providers(req.environmentId));
    app.get('/auth/oauth2/:provider/authorize', {
      schema: { operationId: 'startOAuthSignIn', summary: 'Start signing in with a provider', description: AUTHORIZE, tags, params: ClientProviderParams, querystring: AuthorizeQuery, response: { 302: Type.Null({ description: 'To the provider' }), 303: Type.Null({ description: 'Back to redirect_url with ?error=' }) } },
    }, async (req, reply) => {
      const started = await external.authorize(req.clientEnvironment, req.params.provider, req.query.redirect_url);
      if ('outcome' in started) return sendResult(req, reply, started);
      reply.setCookie(BROWSER_COOKIE, started.browserToken, { ...BROWSER_COOKIE_OPTIONS, maxAge: STATE_LIFETIME_SECONDS });
      return reply.redirect(started.location, 302);
    });
    app.get('/auth/oauth2/:provider/callback', {
      schema: { operationId: 'finishOAuthSignIn', summary: 'The provider sends the browser back here', description: CALLBACK, tags, params: ClientProviderParams, querystring: CallbackQuery, response: { 303: Type.Null({ description: 'To redirect_url, signed in or with ?error=' }) } },
    }, async (req, reply) => {
      // The provider's parameters exactly as sent: openid-client checks them itself (iss, state, code).
      const rawQuery = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
      const result = await external.callback(req.clientEnvironment, req.params.provider, req.query, rawQuery, req.cookies[BROWSER_COOKIE], requestContext(req));
      return sendResult(req, reply, result);
    });
  };
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { CallbackResult } from '../../oauth/service.js';
import { requestContext } from '../../platform/http/planes.js';
import { unknownSamlConnection } from '../../sso/errors.js';
import { SamlRefusal } from '../../sso/saml.js';
import { CallbackQuery } from '../../oauth/schemas.js';
import { AcsBody, SsoAuthorizeQuery, SsoConnectionParams } from '../../sso/schemas.js';
import { SSO_REQUEST_LIFETIME_SECONDS } from '../../sso/sign-in.js';
import type { EnterpriseSignIn } from '../service/external.js';
import type { SignInResult } from '../service/issue-session.js';
import { answerReturnTrip } from './answer.js';

/**
 * Binds a started sign-in to the browser that started it. SameSite=None: the IdP's page posts the SAML response
 * to the ACS from its own site, and a Lax cookie would not come with that POST.
 */
const BROWSER_COOKIE = '__sso_browser';
const BROWSER_COOKIE_OPTIONS = { httpOnly: true, sameSite: 'none', secure: true, path: '/_svc/auth/sso/' } as const;
/** A SAML response with many groups outgrows the service's usual 64 KB body. */
const ACS_BODY_LIMIT_BYTES = 1024 * 1024;

const AUTHORIZE = "Starts an enterprise sign-in: the organization's SSO connection is found by the verified domain of `email` (or by `organization_id`), "
  + 'and the browser goes (302) to the IdP with a single-use request (valid 10 minutes, bound to this browser by an HttpOnly cookie): a SAML AuthnRequest '
  + '(HTTP-Redirect) or an OpenID Connect authorization request (PKCE, nonce). `redirect_url` must have an allowed origin (400 redirect_url_not_allowed). '
  + 'Without an enabled connection the browser goes straight back to `redirect_url?error=sso_connection_not_found`.';
const FINISH = 'Success: the session cookie and 303 to the `redirect_url` the sign-in started with (with `mfa_challenge` when the user has a second factor). '
  + 'A first sign-in links the live user with the email (ending its sessions and mailing its owner) or creates the user (email verified; it must be at one '
  + 'of the organization\'s verified domains, and not one the IdP says is unverified) and the membership, with the role the IdP\'s groups map to. '
  + 'Failure after the IdP: 303 to `redirect_url?error=<code>` (`state_mismatch`, `access_denied`, `provider_error`, `provider_unavailable`, '
  + '`invalid_response`, `email_required`, `email_invalid`, `email_domain_not_verified`, `email_not_verified`, `email_taken`, `user_banned`).';
const ACS = 'Where the IdP posts the SAML response (HTTP-POST binding). The assertion must be signed by a certificate of the IdP\'s metadata, issued by the '
  + 'IdP, for this audience and this ACS URL (Recipient), within its time window (60 s skew), and answer a live request of this service (InResponseTo); '
  + 'each assertion is accepted once. A response that fails these checks answers `400 invalid_state`. ' + FINISH;
const CALLBACK = 'Where an OpenID Connect IdP sends the browser back. The state is checked and used up, the code exchanged and the ID token validated. '
  + 'An unknown, expired or used state answers `400 invalid_state`. ' + FINISH;

const sendResult = (request: FastifyRequest, reply: FastifyReply, result: CallbackResult<SignInResult, string>) =>
  answerReturnTrip(request, reply, result, { name: BROWSER_COOKIE, options: BROWSER_COOKIE_OPTIONS });

/** The browser gets `400 invalid_state` only; why the response was refused (a wrong issuer, say) is for the operator. */
function logSamlRefusal(request: FastifyRequest, err: unknown) {
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  if (cause instanceof SamlRefusal) request.log.warn({ samlRefusal: cause.message }, 'SAML response refused');
}

/** Client plane, no session: the enterprise sign-in dance (contract §3d). */
export function enterpriseSignInRoutes(sso: EnterpriseSignIn): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Client: enterprise sign-in'];
    // The IdP's page posts the response as a form.
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: ACS_BODY_LIMIT_BYTES },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))));

    app.get('/auth/sso/authorize', {
      schema: { operationId: 'startSsoSignIn', summary: "Start signing in through the organization's IdP", description: AUTHORIZE, tags, querystring: SsoAuthorizeQuery,
        response: { 302: Type.Null({ description: 'To the IdP' }), 303: Type.Null({ description: 'Back to redirect_url with ?error=' }) } },
    }, async (req, reply) => {
      const started = await sso.authorize(req.clientEnvironment, req.query);
      if ('outcome' in started) return sendResult(req, reply, started);
      reply.setCookie(BROWSER_COOKIE, started.browserToken, { ...BROWSER_COOKIE_OPTIONS, maxAge: SSO_REQUEST_LIFETIME_SECONDS });
      return reply.redirect(started.location, 302);
    });

    app.post('/auth/sso/:connectionId/acs', {
      bodyLimit: ACS_BODY_LIMIT_BYTES,
      config: { postedByOtherSites: true },
      schema: { operationId: 'finishSamlSignIn', summary: 'The SAML Assertion Consumer Service', description: ACS, tags, params: SsoConnectionParams, body: AcsBody,
        consumes: ['application/x-www-form-urlencoded'], response: { 303: Type.Null({ description: 'To redirect_url, signed in or with ?error=' }) } },
    }, async (req, reply) => {
      const result = await sso.acs(req.clientEnvironment, req.params.connectionId, req.body.SAMLResponse, req.cookies[BROWSER_COOKIE], requestContext(req))
        .catch((err: unknown) => { logSamlRefusal(req, err); throw err; });
      return sendResult(req, reply, result);
    });

    app.get('/auth/sso/:connectionId/callback', {
      schema: { operationId: 'finishOidcSsoSignIn', summary: 'The OpenID Connect IdP sends the browser back here', description: CALLBACK, tags, params: SsoConnectionParams,
        querystring: CallbackQuery, response: { 303: Type.Null({ description: 'To redirect_url, signed in or with ?error=' }) } },
    }, async (req, reply) => {
      const rawQuery = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
      const result = await sso.callback(req.clientEnvironment, req.params.connectionId, req.query, rawQuery, req.cookies[BROWSER_COOKIE], requestContext(req));
      return sendResult(req, reply, result);
    });

    app.get('/auth/sso/:connectionId/metadata', {
      schema: { operationId: 'getSamlServiceProviderMetadata', summary: "A SAML connection's service provider metadata (XML)", tags, params: SsoConnectionParams,
        response: { 200: Type.String({ description: 'SAML 2.0 EntityDescriptor (application/samlmetadata+xml)' }) } },
    }, async (req, reply) => {
      const xml = await sso.metadata(req.clientEnvironment, req.params.connectionId);
      if (xml === undefined) throw unknownSamlConnection();
      return reply.type('application/samlmetadata+xml').send(xml);
    });
  };
}

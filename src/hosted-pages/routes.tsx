/** @jsxImportSource preact */
import { readFileSync } from 'node:fs';
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { TSchema } from 'typebox';
import { isAllowedRedirect, urlOrigin } from '../environments/origins.js';
import { HOSTED_ACCEPT_INVITATION_PATH, HOSTED_ACCEPT_ORGANIZATION_INVITATION_PATH } from '../environments/settings.js';
import { escapeHatchOrigins, requestContext, SESSION_COOKIE } from '../platform/http/planes.js';
import { ProblemError } from '../platform/http/problem.js';
import { clearSessionCookie, setSessionCookie } from '../sessions/cookies.js';
import { CSRF_COOKIE, CSRF_COOKIE_OPTIONS, type CsrfTokens } from './csrf.js';
import { pickLocale } from '../platform/i18n/locale.js';
import { LOCALES, problemMessageKey, translator } from '../platform/i18n/catalogue.js';
import { AcceptInvitationForm, CsrfOnlyForm, OrganizationInvitationForm, EmailForm, InvitationQuery, PageQuery, ResetPasswordForm, SignInForm, SignUpForm, VerifyEmailForm } from './schemas.js';
import { formTargets, hostedPagesDisabled, landing, SIGNED_IN_PATH, type HostedPages, type Outcome } from './service.js';
import { PASSKEYS_SCRIPT_PATH, STYLES_PATH, THEME_PATH, type PageContext } from './views/layout.js';
import {
  AcceptInvitationPage, AcceptOrganizationInvitationPage, ErrorPage, ForgotPasswordPage, ResetPasswordPage, SecondFactorPage, SignedInPage, SignInPage, SignOutPage, SignUpPage, VerifyEmailPage,
} from './views/pages.js';
import { renderDocument } from './views/render.js';
import { accountPages } from './account/routes.js';
import type { AccountPages } from './account/service.js';
import type { PageKit, PagesApp } from './kit.js';
import { securityPages } from './security/routes.js';
import type { SecurityPages } from './security/service.js';

export interface HostedPagesServices { pages: HostedPages; account: AccountPages; security: SecurityPages }

const STYLES = readFileSync(new URL('./assets/pages.css', import.meta.url), 'utf8');
const PASSKEYS_SCRIPT = readFileSync(new URL('./assets/passkeys.js', import.meta.url), 'utf8');
const hidden = { hide: true } as const;
const PASSKEY_SCRIPT = { passkeyScript: true } as const;
const forms = <Body extends TSchema>(body: Body) => ({ ...hidden, body, querystring: PageQuery });

/**
 * Only what Gatehouse serves itself: its stylesheets, the operator's logo, forms posting to the page and
 * ending on the allowed origins (form-action also governs a form's redirects). No frames, and no script but
 * Gatehouse's own passkeys script on a route that opts in (`passkeyScript`) while passkeys are enabled.
 */
function pageCsp(request: FastifyRequest) {
  const env = request.clientEnvironment;
  const logo = env.settings.hostedPages.branding.logoUrl;
  const images = ["'self'", ...(logo ? [urlOrigin(logo)!] : [])];
  const script = request.routeOptions.config.passkeyScript && env.settings.passkeys.enabled ? ["script-src 'self'", "connect-src 'self'"] : [];
  return ["default-src 'none'", ...script, "style-src 'self'", `img-src ${images.join(' ')}`, `form-action 'self' ${formTargets(env).join(' ')}`.trim(),
    "base-uri 'none'", "frame-ancestors 'none'"].join('; ');
}

const refusedOrigin = (origin: string) => new ProblemError(403, 'forbidden', `Origin ${origin} may not post to this environment's pages.`);

/** The query a page hands to the next one: where to land, and the language chosen in the link. */
function carried(query: { redirect_url?: string; locale?: string }, keepRedirect: boolean): string {
  const params = new URLSearchParams();
  if (keepRedirect && query.redirect_url) params.set('redirect_url', query.redirect_url);
  if (query.locale && (LOCALES as readonly string[]).includes(query.locale)) params.set('locale', query.locale);
  const text = params.toString();
  return text ? `?${text}` : '';
}

function sendPage(reply: FastifyReply, page: VNode, status = 200, headers: Record<string, string | string[]> = {}) {
  return reply.code(status).headers(headers).type('text/html; charset=utf-8').send(renderDocument(page));
}

/** The hosted pages on the frontend host's root (contract §3e): server-rendered forms over the sign-in wing's services. */
export function hostedPagesRoutes({ pages, account, security }: HostedPagesServices, csrf: CsrfTokens): FastifyPluginAsync {
  return async (base) => {
    const app: PagesApp = base.withTypeProvider<TypeBoxTypeProvider>();
    await app.register(cookie);
    // Forms post urlencoded fields; only the pages accept them.
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))));

    app.addHook('onRequest', async (request, reply) => {
      if (!request.clientEnvironment.settings.hostedPages.enabled) throw hostedPagesDisabled();
      reply.header('content-security-policy', pageCsp(request)).header('x-frame-options', 'DENY');
      const origin = request.headers.origin;
      if (request.method === 'POST' && origin !== undefined && !escapeHatchOrigins(request.clientEnvironment.frontendHost).includes(origin)) throw refusedOrigin(origin);
    });
    // The token is checked before any step runs, on top of the Origin check above.
    app.addHook('preHandler', async (request) => {
      if (request.method === 'POST') csrf.check(request.environmentId, request.cookies[CSRF_COOKIE], (request.body as { csrf?: unknown } | undefined)?.csrf);
    });

    async function pageContext(request: FastifyRequest, reply: FastifyReply, keepRedirect = true): Promise<PageContext> {
      const env = request.clientEnvironment;
      const query = (request.query ?? {}) as { redirect_url?: string; locale?: string };
      const sessionToken = request.cookies?.[SESSION_COOKIE];
      const viewer = sessionToken ? await pages.viewer(env, sessionToken) : null;
      const locale = pickLocale({ query: query.locale, user: viewer?.locale, acceptLanguage: request.headers['accept-language'] });
      const issued = csrf.issue(env.id, request.cookies?.[CSRF_COOKIE]);
      if (issued.fresh) reply.setCookie(CSRF_COOKIE, issued.secret, CSRF_COOKIE_OPTIONS);
      const { branding } = env.settings.hostedPages;
      return {
        locale, t: translator(locale), productName: branding.productName ?? env.name, logoUrl: branding.logoUrl, themed: branding.primaryColor !== null,
        csrfToken: issued.token, carried: carried(query, keepRedirect), impersonator: viewer?.impersonator ?? null, termsUrl: env.settings.hostedPages.termsUrl,
      };
    }

    // A refused link or form becomes a page in the reader's language; a server fault stays the plane's problem+json.
    app.setErrorHandler(async (err: FastifyError, request, reply) => {
      const problem = err instanceof ProblemError ? err
        : err.validation ? new ProblemError(400, 'invalid_request', err.message) : undefined;
      if (!problem || problem.status >= 500 || !request.clientEnvironment) throw err;
      const ctx = await pageContext(request, reply, problem.code !== 'redirect_url_not_allowed');
      return sendPage(reply, <ErrorPage ctx={ctx} error={ctx.t(problemMessageKey(problem.code))} />, problem.status, problem.headers);
    });

    /**
     * The page a step leads to: signed in (the client plane's cookie, then 303 to where the link asked), the
     * second factor, the emailed code, or the same form again with the refusal beside it.
     */
    async function answer(reply: FastifyReply, ctx: PageContext, outcome: Outcome, form: (error?: string) => VNode | Promise<VNode>, next?: (email: string) => VNode) {
      switch (outcome.kind) {
        case 'signed_in':
          setSessionCookie(reply, outcome.signedIn.token, outcome.signedIn.session.expiresAt);
          return reply.redirect(outcome.to, 303);
        case 'joined': return reply.redirect(outcome.to, 303);
        case 'second_factor': return sendPage(reply, <SecondFactorPage ctx={ctx} challengeToken={outcome.challengeToken} />);
        case 'verify_email': return sendPage(reply, next ? next(outcome.email) : <VerifyEmailPage ctx={ctx} email={outcome.email} />);
        case 'refused': {
          const { problem } = outcome;
          const message = ctx.t(problemMessageKey(problem.code));
          const page = problem.code === 'invalid_challenge' ? <SignInPage ctx={ctx} error={message} providers={[]} /> : await form(message);
          return sendPage(reply, page, problem.status, problem.headers);
        }
      }
    }

    app.get(STYLES_PATH, { schema: hidden }, async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(STYLES));
    app.get(PASSKEYS_SCRIPT_PATH, { schema: hidden }, async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=3600').type('text/javascript; charset=utf-8').send(PASSKEYS_SCRIPT));
    // The operator's colour, validated as #rrggbb by the settings schema.
    app.get(THEME_PATH, { schema: hidden }, async (request, reply) => {
      const color = request.clientEnvironment.settings.hostedPages.branding.primaryColor;
      return reply.header('cache-control', 'no-cache').type('text/css; charset=utf-8').send(color ? `:root { --primary: ${color}; }\n` : '');
    });

    /** The sign-in form, with the enabled providers when the landing place is one the OAuth start route sends the browser back to (an allowed origin). */
    async function signInForm(request: FastifyRequest, ctx: PageContext, to: string, email?: string, error?: string, ssoStart?: string) {
      const env = request.clientEnvironment;
      const providers = isAllowedRedirect(to, env.allowedOrigins)
        ? (await pages.providers(env)).map((p) => ({ name: p.name, href: `/_svc/auth/oauth2/${encodeURIComponent(p.id)}/authorize?${new URLSearchParams({ redirect_url: to })}` }))
        : [];
      return <SignInPage ctx={ctx} error={error} email={email} providers={providers} passkeys={env.settings.passkeys.enabled} sso={ssoStart} />;
    }

    /**
     * An email whose organization enforces its IdP: the sign-in page again, leading with a link to that IdP. A link,
     * not a redirect: CSP form-action also governs where a form's redirects go, and the IdP is on no list of ours.
     */
    async function answerOrOfferSso(request: FastifyRequest, reply: FastifyReply, ctx: PageContext, outcome: Outcome, to: string, email: string, form: (error?: string) => VNode | Promise<VNode>) {
      if (outcome.kind !== 'refused' || !outcome.ssoStart) return answer(reply, ctx, outcome, form);
      return sendPage(reply, await signInForm(request, ctx, to, email, ctx.t('error.sso_required'), outcome.ssoStart), outcome.problem.status);
    }

    app.get('/sign-in', { config: PASSKEY_SCRIPT, schema: { ...hidden, querystring: PageQuery } }, async (request, reply) => {
      const to = landing(request.clientEnvironment, request.query.redirect_url);
      return sendPage(reply, await signInForm(request, await pageContext(request, reply), to));
    });
    app.post('/sign-in', { config: PASSKEY_SCRIPT, schema: forms(SignInForm) }, async (request, reply) => {
      const { body } = request;
      const to = landing(request.clientEnvironment, request.query.redirect_url);
      const ctx = await pageContext(request, reply);
      const outcome = await pages.signIn(request.clientEnvironment, body, to, requestContext(request));
      if ('challengeToken' in body) return answer(reply, ctx, outcome, (error) => <SecondFactorPage ctx={ctx} error={error} challengeToken={body.challengeToken} />);
      return answerOrOfferSso(request, reply, ctx, outcome, to, body.email, (error) => signInForm(request, ctx, to, body.email, error));
    });

    const askName = (request: FastifyRequest) => request.clientEnvironment.settings.requiredFields.includes('name');
    app.get('/sign-up', { schema: { ...hidden, querystring: PageQuery } }, async (request, reply) => {
      landing(request.clientEnvironment, request.query.redirect_url);
      return sendPage(reply, <SignUpPage ctx={await pageContext(request, reply)} askName={askName(request)} />);
    });
    app.post('/sign-up', { schema: forms(SignUpForm) }, async (request, reply) => {
      const to = landing(request.clientEnvironment, request.query.redirect_url);
      const ctx = await pageContext(request, reply);
      const { email, name } = request.body;
      const outcome = await pages.signUp(request.clientEnvironment, request.body, ctx.locale, to, requestContext(request));
      return answerOrOfferSso(request, reply, ctx, outcome, to, email, (error) => <SignUpPage ctx={ctx} error={error} email={email} name={name} askName={askName(request)} />);
    });

    app.get('/verify-email', { schema: { ...hidden, querystring: PageQuery } }, async (request, reply) => {
      landing(request.clientEnvironment, request.query.redirect_url);
      return sendPage(reply, <VerifyEmailPage ctx={await pageContext(request, reply)} />);
    });
    app.post('/verify-email', { schema: forms(VerifyEmailForm) }, async (request, reply) => {
      const to = landing(request.clientEnvironment, request.query.redirect_url);
      const ctx = await pageContext(request, reply);
      const outcome = await pages.verifyEmail(request.clientEnvironment, request.body, to, requestContext(request));
      return answer(reply, ctx, outcome, (error) => <VerifyEmailPage ctx={ctx} error={error} email={request.body.email} />);
    });
    app.post('/verify-email/resend', { schema: forms(EmailForm) }, async (request, reply) => {
      landing(request.clientEnvironment, request.query.redirect_url);
      const ctx = await pageContext(request, reply);
      const { email } = request.body;
      const outcome = await pages.resendVerificationCode(request.clientEnvironment, email, requestContext(request));
      const page = (error?: string) => <VerifyEmailPage ctx={ctx} error={error} notice={error ? undefined : ctx.t('verifyEmail.resent')} email={email} />;
      return answer(reply, ctx, outcome, page, () => page());
    });

    app.get('/forgot-password', { schema: { ...hidden, querystring: PageQuery } }, async (request, reply) => {
      landing(request.clientEnvironment, request.query.redirect_url);
      return sendPage(reply, <ForgotPasswordPage ctx={await pageContext(request, reply)} />);
    });
    app.post('/forgot-password', { schema: forms(EmailForm) }, async (request, reply) => {
      landing(request.clientEnvironment, request.query.redirect_url);
      const ctx = await pageContext(request, reply);
      const outcome = await pages.requestPasswordReset(request.clientEnvironment, request.body.email, requestContext(request));
      return answer(reply, ctx, outcome, (error) => <ForgotPasswordPage ctx={ctx} error={error} email={request.body.email} />,
        (email) => <ResetPasswordPage ctx={ctx} email={email} />);
    });
    app.get('/reset-password', { schema: { ...hidden, querystring: PageQuery } }, async (request, reply) => {
      landing(request.clientEnvironment, request.query.redirect_url);
      return sendPage(reply, <ResetPasswordPage ctx={await pageContext(request, reply)} />);
    });
    app.post('/reset-password', { schema: forms(ResetPasswordForm) }, async (request, reply) => {
      const to = landing(request.clientEnvironment, request.query.redirect_url);
      const ctx = await pageContext(request, reply);
      const outcome = await pages.resetPassword(request.clientEnvironment, request.body, to, requestContext(request));
      return answer(reply, ctx, outcome, (error) => <ResetPasswordPage ctx={ctx} error={error} email={request.body.email} />);
    });

    app.get(HOSTED_ACCEPT_INVITATION_PATH, { schema: { ...hidden, querystring: InvitationQuery } }, async (request, reply) => {
      landing(request.clientEnvironment, request.query.redirect_url);
      const token = request.query.invitation_token ?? '';
      const email = await pages.invitedEmail(request.clientEnvironment, token);
      return sendPage(reply, <AcceptInvitationPage ctx={await pageContext(request, reply)} email={email} token={token} askName={askName(request)} />);
    });
    app.post(HOSTED_ACCEPT_INVITATION_PATH, { schema: forms(AcceptInvitationForm) }, async (request, reply) => {
      const env = request.clientEnvironment;
      const to = landing(env, request.query.redirect_url);
      const ctx = await pageContext(request, reply);
      const { token, name } = request.body;
      const outcome = await pages.acceptInvitation(env, request.body, to, requestContext(request));
      const email = outcome.kind === 'refused' ? await pages.invitedEmail(env, token) : '';
      return answer(reply, ctx, outcome, (error) => <AcceptInvitationPage ctx={ctx} error={error} email={email} token={token} name={name} askName={askName(request)} />);
    });

    const hasSession = async (request: FastifyRequest) => {
      const token = request.cookies[SESSION_COOKIE];
      return token !== undefined && await pages.sessionIsLive(request.clientEnvironment, token);
    };
    const sessionEnded = () => new ProblemError(401, 'unauthenticated', 'The session has ended: sign in again.');
    app.get(HOSTED_ACCEPT_ORGANIZATION_INVITATION_PATH, { schema: { ...hidden, querystring: InvitationQuery } }, async (request, reply) => {
      const env = request.clientEnvironment;
      landing(env, request.query.redirect_url);
      const token = request.query.invitation_token ?? '';
      const email = await pages.organizationInvitee(env, token);
      const signedIn = await hasSession(request);
      return sendPage(reply, <AcceptOrganizationInvitationPage ctx={await pageContext(request, reply)} email={email} token={token} signedIn={signedIn} askName={askName(request)} />);
    });
    app.post(HOSTED_ACCEPT_ORGANIZATION_INVITATION_PATH, { schema: forms(OrganizationInvitationForm) }, async (request, reply) => {
      const env = request.clientEnvironment;
      const { body } = request;
      const to = landing(env, request.query.redirect_url);
      const ctx = await pageContext(request, reply);
      const context = requestContext(request);
      const outcome = 'intent' in body && body.intent === 'join'
        ? await pages.joinSignedIn(env, request.cookies[SESSION_COOKIE], body.token, to, context) ?? { kind: 'refused' as const, problem: sessionEnded() }
        : 'intent' in body && body.intent === 'sign_up' ? await pages.signUpAndJoin(env, body, to, context)
          : await pages.signInAndJoin(env, body, body.token, to, context);
      if (outcome.kind === 'second_factor') {
        return sendPage(reply, <SecondFactorPage ctx={ctx} challengeToken={outcome.challengeToken} action={HOSTED_ACCEPT_ORGANIZATION_INVITATION_PATH} invitationToken={body.token} />);
      }
      const email = outcome.kind === 'refused' ? await pages.organizationInvitee(env, body.token).catch(() => '') : '';
      const signedIn = await hasSession(request);
      return answer(reply, ctx, outcome, (error) => 'challengeToken' in body
        ? <SecondFactorPage ctx={ctx} error={error} challengeToken={body.challengeToken} action={HOSTED_ACCEPT_ORGANIZATION_INVITATION_PATH} invitationToken={body.token} />
        : <AcceptOrganizationInvitationPage ctx={ctx} error={outcome.kind === 'refused' && outcome.problem.code === 'forbidden' ? ctx.t('orgInvitation.otherEmail', { email }) : error}
          email={email} token={body.token} signedIn={signedIn} askName={askName(request)} />);
    });

    app.get('/sign-out', { schema: { ...hidden, querystring: PageQuery } }, async (request, reply) => {
      landing(request.clientEnvironment, request.query.redirect_url);
      return sendPage(reply, <SignOutPage ctx={await pageContext(request, reply)} />);
    });
    app.post('/sign-out', { schema: forms(CsrfOnlyForm) }, async (request, reply) => {
      const env = request.clientEnvironment;
      const signInPath = `/sign-in${carried(request.query, false)}`;
      const to = pages.afterSignOut(env, request.query.redirect_url, signInPath);
      const token = request.cookies[SESSION_COOKIE];
      if (token) await pages.signOut(env, token, requestContext(request));
      clearSessionCookie(reply);
      return reply.redirect(to, 303);
    });

    app.get(SIGNED_IN_PATH, { schema: { ...hidden, querystring: PageQuery } }, async (request, reply) =>
      sendPage(reply, <SignedInPage ctx={await pageContext(request, reply, false)} />));

    /** The live session of the cookie; without one, the browser is sent to sign in and brought back here. */
    async function signedInSession(request: FastifyRequest, reply: FastifyReply, back = request.url) {
      const token = request.cookies[SESSION_COOKIE];
      const session = token ? await pages.session(request.clientEnvironment, token) : undefined;
      if (!session) {
        const query = new URLSearchParams({ redirect_url: back });
        const { locale } = (request.query ?? {}) as { locale?: string };
        if (locale) query.set('locale', locale);
        await reply.redirect(`/sign-in?${query}`, 303);
      }
      return session;
    }

    const kit: PageKit = { context: pageContext, send: sendPage, answer, signedInSession };
    accountPages(app, kit, account);
    securityPages(app, kit, security);
  };
}

import type { ClientEnvironment } from '../platform/http/planes.js';
import { isAllowedRedirect, isHeaderSafeUrl, urlOrigin } from '../environments/origins.js';
import type { EmailedCodesService } from '../auth/service/codes.js';
import type { InvitationSignUps } from '../auth/service/invitation-sign-ups.js';
import type { SignedIn, SignInResult } from '../auth/service/issue-session.js';
import type { PasswordAuthService } from '../auth/service/passwords.js';
import type { SecondFactorStep } from '../auth/service/second-factor.js';
import type { InvitationsService } from '../invitations/service.js';
import type { OrganizationInvitationsService } from '../organization-invitations/service.js';
import type { RequestContext } from '../platform/caller.js';
import type { SessionsService } from '../sessions/service.js';
import type { UsersService } from '../users/service.js';
import { ProblemError } from '../platform/http/problem.js';
import type { Locale } from '../platform/i18n/catalogue.js';
import { legalConsentRequired } from '../invitations/errors.js';
import type { AcceptInvitationForm, ResetPasswordForm, SignInForm, SignUpForm, VerifyEmailForm } from './schemas.js';

/** Where a finished sign-in lands when neither the link nor the setting `hostedPages.afterSignInUrl` names a place. */
export const SIGNED_IN_PATH = '/signed-in';

/**
 * What a page step ended in: signed in (the cookie, then 303 to `to`), a further step to show, or a
 * refusal shown beside the form it came from.
 */
export type Outcome =
  | { kind: 'signed_in'; signedIn: SignedIn; to: string }
  | { kind: 'second_factor'; challengeToken: string }
  | { kind: 'verify_email'; email: string }
  | { kind: 'joined'; to: string }
  /** `ssoStart`: for an email whose organization enforces its IdP, where its sign-in starts (the page offers it). */
  | { kind: 'refused'; problem: ProblemError; ssoStart?: string };

export interface HostedPagesDeps {
  passwords: Pick<PasswordAuthService, 'signIn' | 'signUp'>;
  codes: Pick<EmailedCodesService, 'verifyEmail' | 'resendVerificationCode' | 'requestPasswordReset' | 'resetPassword'>;
  secondStep: Pick<SecondFactorStep, 'verify'>;
  invitationSignUps: Pick<InvitationSignUps, 'withInvitation' | 'withOrganizationInvitation'>;
  invitations: Pick<InvitationsService, 'pendingByToken'>;
  organizationInvitations: Pick<OrganizationInvitationsService, 'pendingByToken' | 'accept'>;
  sessions: Pick<SessionsService, 'authenticate' | 'revoke'>;
  users: Pick<UsersService, 'get'>;
  /** A dashboard operator's name, else email (the banner of a session an operator impersonates); undefined when unknown. */
  operatorName(operatorId: string): Promise<string | undefined>;
  /** The environment's enabled external providers (the OAuth start route takes it from there). */
  providers(environmentId: string): Promise<{ items: { id: string; name: string }[] }>;
}

/** The person a page is shown to, as far as the page needs: their language, and who impersonates them. */
export interface Viewer { locale: string | null; impersonator: string | null }

export const redirectUrlNotAllowed = () => new ProblemError(400, 'redirect_url_not_allowed',
  "redirect_url must be an absolute URL whose origin is one of the environment's allowed origins.");
export const hostedPagesDisabled = () => new ProblemError(404, 'resource_not_found', 'Hosted pages are turned off for this environment (setting hostedPages.enabled).');

/**
 * A path on the pages' own host (the account page sending the browser to sign in and back): never `//host` or
 * `/\\host`, which browsers read as another site, and in characters a Location header carries.
 */
const isOwnPagePath = (url: string) => /^\/(?![/\\])/.test(url) && !url.includes('\\') && isHeaderSafeUrl(url);

/**
 * Where the pages send the browser once signed in: the link's `redirect_url`, checked against the allowed
 * origins at every step (no open redirect), else `hostedPages.afterSignInUrl`, else the "signed in" page.
 */
export function landing(env: ClientEnvironment, redirectUrl: string | undefined): string {
  if (redirectUrl === undefined || redirectUrl === '') return env.settings.hostedPages.afterSignInUrl ?? SIGNED_IN_PATH;
  if (isOwnPagePath(redirectUrl)) return redirectUrl;
  if (!isAllowedRedirect(redirectUrl, env.allowedOrigins)) throw redirectUrlNotAllowed();
  return redirectUrl;
}

/** The origins a page's forms may end up on (CSP form-action follows a form's redirects): the allowed ones and the configured landing places. */
export function formTargets(env: ClientEnvironment): string[] {
  const { afterSignInUrl, afterSignOutUrl } = env.settings.hostedPages;
  const configured = [afterSignInUrl, afterSignOutUrl].flatMap((url) => (url ? [urlOrigin(url)!] : []));
  return [...new Set([...env.allowedOrigins, ...configured])];
}

/** A refusal the form can explain (wrong password, bad code, rate limit) is shown on the page; anything else is an error. */
async function attempt(step: () => Promise<Outcome>): Promise<Outcome> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof ProblemError && err.status < 500) return { kind: 'refused', problem: err };
    throw err;
  }
}

/** A refusal for an enforced SSO domain goes on to the organization's IdP, when `to` is a place that sign-in may land (an allowed origin). */
function onToSso(env: ClientEnvironment, email: string, to: string, outcome: Outcome): Outcome {
  if (outcome.kind !== 'refused' || outcome.problem.code !== 'sso_required' || !isAllowedRedirect(to, env.allowedOrigins)) return outcome;
  return { ...outcome, ssoStart: `/_svc/auth/sso/authorize?${new URLSearchParams({ email, redirect_url: to })}` };
}

function outcomeOf(result: SignInResult, to: string): Outcome {
  switch (result.status) {
    case 'complete': return { kind: 'signed_in', signedIn: result, to };
    case 'mfa_required': return { kind: 'second_factor', challengeToken: result.challengeToken };
    case 'pending_verification': return { kind: 'verify_email', email: result.user.email ?? '' };
  }
}

/**
 * The steps of the hosted pages. Each calls the very service the client plane's route calls, so the
 * lockout, rate limits, enumeration protection and audit trail are the API's own.
 */
export function createHostedPages(deps: HostedPagesDeps) {
  const { passwords, codes, secondStep, invitationSignUps, sessions } = deps;
  return {
    /**
     * Who a session cookie shows the pages to: the user's `locale`, and on an impersonated session the
     * operator (named on every page's banner). Null without a live session.
     */
    async viewer(env: ClientEnvironment, sessionToken: string): Promise<Viewer | null> {
      const session = await sessions.authenticate(env.id, sessionToken);
      if (!session) return null;
      const impersonatorName = async (id: string | null) => {
        if (id === null) return null;
        if (session.impersonatorType === 'operator') return (await deps.operatorName(id).catch(() => undefined)) ?? id;
        const operator = await deps.users.get(env.id, id).catch(() => undefined);
        return operator?.name ?? operator?.email ?? id;
      };
      const [user, impersonator] = await Promise.all([deps.users.get(env.id, session.userId).catch(() => undefined), impersonatorName(session.impersonatorId)]);
      return { locale: user?.locale ?? null, impersonator };
    },

    /** Ends the session of the cookie, as the client plane's sign-out does (an impersonated one records its operator). */
    async signOut(env: ClientEnvironment, sessionToken: string, context: RequestContext) {
      const session = await sessions.authenticate(env.id, sessionToken);
      if (!session) return;
      const by = { actor: { type: 'user' as const, id: session.userId, impersonatorId: session.impersonatorId }, context, via: 'client_api' as const };
      await sessions.revoke(env.id, session.userId, session.id, by, 'sign_out');
    },

    /** Where /sign-out sends the browser: the link's checked `redirect_url`, else `hostedPages.afterSignOutUrl`, else the sign-in page. */
    afterSignOut: (env: ClientEnvironment, redirectUrl: string | undefined, signInPath: string) =>
      (redirectUrl ? landing(env, redirectUrl) : env.settings.hostedPages.afterSignOutUrl ?? signInPath),

    providers: async (env: ClientEnvironment) => (await deps.providers(env.id)).items,

    signIn: async (env: ClientEnvironment, form: SignInForm, to: string, context: RequestContext) => {
      if ('challengeToken' in form) return attempt(async () => outcomeOf(await secondStep.verify(env, { challengeToken: form.challengeToken, code: form.code }, context), to));
      return onToSso(env, form.email, to, await attempt(async () => outcomeOf(await passwords.signIn(env, { email: form.email, password: form.password }, context), to)));
    },

    /** Signs up in the page's language (the user's `locale` from then on), with consent to the terms when the environment names them. */
    signUp: async (env: ClientEnvironment, form: SignUpForm, locale: Locale, to: string, context: RequestContext) => onToSso(env, form.email, to, await attempt(async () => {
      if (env.settings.hostedPages.termsUrl && form.legalConsentAccepted !== 'true') throw legalConsentRequired();
      return outcomeOf(await passwords.signUp(env, { email: form.email, password: form.password, locale, ...(form.name && { name: form.name }) }, context), to);
    })),

    verifyEmail: (env: ClientEnvironment, form: VerifyEmailForm, to: string, context: RequestContext) => attempt(async () =>
      outcomeOf(await codes.verifyEmail(env, { email: form.email, code: form.code }, context), to)),

    resendVerificationCode: (env: ClientEnvironment, email: string, context: RequestContext) =>
      attempt(async () => {
        await codes.resendVerificationCode(env, email, context.ipAddress);
        return { kind: 'verify_email', email };
      }),

    /** Answers alike for any email (the API's enumeration protection); a refusal is the rate limit's. */
    requestPasswordReset: (env: ClientEnvironment, email: string, context: RequestContext) =>
      attempt(async () => {
        await codes.requestPasswordReset(env, email, context.ipAddress);
        return { kind: 'verify_email', email };
      }),

    resetPassword: (env: ClientEnvironment, form: ResetPasswordForm, to: string, context: RequestContext) => attempt(async () =>
      outcomeOf(await codes.resetPassword(env, { email: form.email, code: form.code, newPassword: form.newPassword }, context), to)),

    /** The invited email, or the problem that makes the link unusable (used, revoked, expired, unknown). */
    invitedEmail: async (env: ClientEnvironment, token: string) => (await deps.invitations.pendingByToken(env.id, token)).email,

    /** The email an organization invitation is for, or the problem that makes the link unusable. */
    organizationInvitee: async (env: ClientEnvironment, token: string) => (await deps.organizationInvitations.pendingByToken(env.id, token)).email,

    /** The live session a cookie names, as the client plane sees it. */
    session: (env: ClientEnvironment, sessionToken: string) => sessions.authenticate(env.id, sessionToken),

    sessionIsLive: async (env: ClientEnvironment, sessionToken: string) => (await sessions.authenticate(env.id, sessionToken)) !== undefined,

    /** The user of a live session cookie joins; undefined when the cookie names no live session. */
    async joinSignedIn(env: ClientEnvironment, sessionToken: string | undefined, token: string, to: string, context: RequestContext): Promise<Outcome | undefined> {
      const session = sessionToken ? await sessions.authenticate(env.id, sessionToken) : undefined;
      if (!session) return undefined;
      return attempt(async () => {
        await deps.organizationInvitations.accept(env.id, session.userId, token, context);
        return { kind: 'joined', to };
      });
    },

    /**
     * Signs in (password, or the second step's code) and joins at once. When the join is refused (an account
     * of another email), the refusal is shown and the session just started is not handed to the browser.
     */
    signInAndJoin: (env: ClientEnvironment, form: { email: string; password: string } | { challengeToken: string; code: string }, token: string, to: string, context: RequestContext) => attempt(async () => {
      const result = 'challengeToken' in form
        ? await secondStep.verify(env, { challengeToken: form.challengeToken, code: form.code }, context)
        : await passwords.signIn(env, { email: form.email, password: form.password }, context);
      const outcome = outcomeOf(result, to);
      if (outcome.kind === 'signed_in') await deps.organizationInvitations.accept(env.id, outcome.signedIn.user.id, token, context);
      return outcome;
    }),

    signUpAndJoin: (env: ClientEnvironment, form: AcceptInvitationForm, to: string, context: RequestContext) => attempt(async () => outcomeOf(
      await invitationSignUps.withOrganizationInvitation(env, {
        token: form.token, password: form.password, ...(form.name && { name: form.name }), legalConsentAccepted: form.legalConsentAccepted === 'true',
      }, context), to)),

    acceptInvitation: (env: ClientEnvironment, form: AcceptInvitationForm, to: string, context: RequestContext) => attempt(async () => outcomeOf(
      await invitationSignUps.withInvitation(env, {
        token: form.token, password: form.password, name: form.name || null, legalConsentAccepted: form.legalConsentAccepted === 'true',
      }, context), to)),
  };
}
export type HostedPages = ReturnType<typeof createHostedPages>;

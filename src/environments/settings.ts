import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { Nullable } from '../platform/http/common-schemas.js';
import { deepMerge, type JsonObject } from '../platform/json.js';
import type { MailBrand } from '../platform/mail/render.js';
import { frontendUrl, isSafeAbsoluteUrl } from './origins.js';

// Upper bounds keep every value inside what the database columns and dates can hold.
const TEN_YEARS_SECONDS = 315_360_000;
/**
 * A week at least: an idempotency key (kept a day) never outlives its event, and a feed reader that was
 * away for a weekend misses nothing. A hundred years at most (null keeps events for good).
 */
export const AUDIT_RETENTION_DAYS = { min: 7, max: 36_500 };

/** A setting's help text: the dashboard's settings form (generated from this schema) shows it under the field. */
const about = (description: string) => ({ description });

export const EnvironmentSettings = Type.Object({
  signUpUrl: Nullable(Type.String({ format: 'uri', maxLength: 2048, ...about('Your sign-up page, linked from environment invitation mails; null links to the hosted pages while they are on.') })),
  invitationAcceptUrl: Nullable(Type.String({ format: 'uri', maxLength: 2048, ...about('Your page that accepts organization invitations; null links to the hosted pages while they are on.') })),
  impersonationLandingUrl: Nullable(Type.String({ format: 'uri', maxLength: 2048, ...about('Where an impersonation link lands in your app.') })),
  impersonationEnabled: Type.Boolean(about('Whether operators and support staff may impersonate users.')),
  impersonationSessionLifetimeSeconds: Type.Integer({ minimum: 60, maximum: 86_400, ...about('How long an impersonation session lasts, in seconds.') }),
  plan: Type.Object({
    impersonation: Type.Boolean(about('Whether the plan includes impersonation.')),
    impersonationQuotaPerMonth: Type.Integer({ minimum: 0, maximum: 1_000_000, ...about('Impersonations allowed per calendar month, shared with the dashboard.') }),
  }, { additionalProperties: false, ...about('What the environment\'s plan includes.') }),
  requiredFields: Type.Array(Type.Union([Type.Literal('email'), Type.Literal('name')]), { uniqueItems: true, ...about('The fields a user must give to sign up.') }),
  passwordPolicy: Type.Object({
    minLength: Type.Integer({ minimum: 8, maximum: 256, ...about('Fewest characters a password may have.') }),
    maxLength: Type.Integer({ minimum: 8, maximum: 256, ...about('Most characters a password may have.') }),
  }, { additionalProperties: false, ...about('Password length rules, for users and operators alike.') }),
  invitationRateLimitPerHour: Type.Integer({ minimum: 0, maximum: 1_000_000, ...about('Invitations the environment may send per hour.') }),
  auditLogEnabled: Type.Boolean(about('Whether the environment records audit events.')),
  auditRetentionDays: Nullable(Type.Integer({
    minimum: AUDIT_RETENTION_DAYS.min, maximum: AUDIT_RETENTION_DAYS.max, ...about('Days audit events are kept; null keeps them for good.'),
  })),
  emailVerificationRequired: Type.Boolean(about('Whether a new user must verify their email address before signing in.')),
  /** Days an erasure request waits (and can be cancelled) before it runs; 0 runs it at once. */
  dataErasureGraceDays: Type.Integer({ minimum: 0, maximum: 365, ...about('Days an erasure request waits (and can be cancelled) before it runs; 0 runs it at once.') }),
  enumerationProtection: Type.Boolean(about('Answer sign-in, sign-up and reset the same way whether or not the email is known.')),
  oauthLinkVerifiedEmails: Type.Boolean(about('Link an external sign-in to the user with the same verified email.')),
  selfDeletionEnabled: Type.Boolean(about('Whether users may delete their own account.')),
  mfa: Type.Object({
    policy: Type.Union([Type.Literal('off'), Type.Literal('optional'), Type.Literal('required')], about('off: no second factors; optional: users may enrol one; required: every user must.')),
  }, { additionalProperties: false, ...about('Second factors (TOTP and backup codes).') }),
  passkeys: Type.Object({
    enabled: Type.Boolean(about('Whether users may sign in with passkeys.')),
    /** The WebAuthn RP ID when it is not the frontend host's name: that name or a parent domain of it (example.com for auth.example.com). */
    rpId: Nullable(Type.String({
      maxLength: 253, pattern: '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$',
      ...about('The WebAuthn RP ID when it is not the frontend host\'s name: that name or a parent domain of it (example.com for auth.example.com).'),
    })),
  }, { additionalProperties: false, ...about('Passkeys (WebAuthn).') }),
  session: Type.Object({
    idleTimeoutSeconds: Type.Integer({ minimum: 1, maximum: TEN_YEARS_SECONDS, ...about('A session ends after this many seconds without use.') }),
    maxLifetimeSeconds: Type.Integer({ minimum: 1, maximum: TEN_YEARS_SECONDS, ...about('A session ends this many seconds after it started, used or not.') }),
    jwtLifetimeSeconds: Type.Integer({ minimum: 1, maximum: 3600, ...about('How long a session JWT is valid, in seconds.') }),
    /** The `aud` of the session JWTs (the API they are meant for); null leaves it out. */
    jwtAudience: Nullable(Type.String({ minLength: 1, maxLength: 256, ...about('The aud of the session JWTs (the API they are meant for); null leaves it out.') })),
  }, { additionalProperties: false, ...about('Session lifetimes and JWTs.') }),
  lockout: Type.Object({
    maxFailedAttempts: Type.Integer({ minimum: 1, maximum: 1_000_000, ...about('Wrong passwords in a row that lock an account.') }),
    coolDownSeconds: Type.Integer({ minimum: 1, maximum: TEN_YEARS_SECONDS, ...about('How long a locked account stays locked, in seconds.') }),
    ipMaxFailures: Type.Integer({ minimum: 1, maximum: 1_000_000, ...about('Failed sign-ins from one IP address within the window that block it.') }),
    ipWindowSeconds: Type.Integer({ minimum: 1, maximum: 86_400, ...about('The window, in seconds, the IP address failures are counted in.') }),
  }, { additionalProperties: false, ...about('Lockout after failed sign-ins.') }),
  /** The sign-in, sign-up and reset pages Gatehouse serves on the frontend host (contract §3e). */
  hostedPages: Type.Object({
    enabled: Type.Boolean(about('Whether Gatehouse serves its sign-in, sign-up and account pages on the frontend host.')),
    /** Where a page sends the browser after a sign-in when the link names no redirect_url; null shows a "signed in" page. */
    afterSignInUrl: Nullable(Type.String({ format: 'uri', maxLength: 2048, ...about('Where a page sends the browser after a sign-in when the link names no redirect_url; null shows a "signed in" page.') })),
    /** Where /sign-out sends the browser; null sends it to /sign-in. */
    afterSignOutUrl: Nullable(Type.String({ format: 'uri', maxLength: 2048, ...about('Where /sign-out sends the browser; null sends it to /sign-in.') })),
    /** The terms a visitor must accept to sign up on /sign-up (a required checkbox linking here); null asks for no consent. */
    termsUrl: Nullable(Type.String({ format: 'uri', maxLength: 2048, ...about('The terms a visitor must accept to sign up (a required checkbox linking here); null asks for no consent.') })),
    branding: Type.Object({
      /** Shown in page titles and headings; null shows the environment's name. */
      productName: Nullable(Type.String({ minLength: 1, maxLength: 100, ...about('Shown in page titles, headings and mails; null shows the environment\'s name.') })),
      logoUrl: Nullable(Type.String({ format: 'uri', maxLength: 2048, ...about('The logo on the pages and in mails.') })),
      /** The buttons' colour, as #rrggbb; white text sits on it, so pick one dark enough (WCAG AA). */
      primaryColor: Nullable(Type.String({ pattern: '^#[0-9a-fA-F]{6}$', ...about('The buttons\' colour, as #rrggbb; white text sits on it, so pick one dark enough (WCAG AA).') })),
    }, { additionalProperties: false, ...about('How the pages and mails look.') }),
  }, { additionalProperties: false, ...about('The sign-in, sign-up and account pages Gatehouse serves on the frontend host.') }),
}, { additionalProperties: false, title: 'EnvironmentSettings' });
export type EnvironmentSettings = Static<typeof EnvironmentSettings>;

export const DEFAULT_SETTINGS: EnvironmentSettings = Object.freeze({
  signUpUrl: null,
  invitationAcceptUrl: null,
  impersonationLandingUrl: null,
  impersonationEnabled: true,
  impersonationSessionLifetimeSeconds: 3600,
  plan: { impersonation: true, impersonationQuotaPerMonth: 100 },
  requiredFields: ['email'],
  passwordPolicy: { minLength: 8, maxLength: 256 },
  invitationRateLimitPerHour: 100,
  auditLogEnabled: true,
  auditRetentionDays: null,
  emailVerificationRequired: true,
  dataErasureGraceDays: 7,
  enumerationProtection: false,
  oauthLinkVerifiedEmails: true,
  selfDeletionEnabled: true,
  mfa: { policy: 'optional' },
  passkeys: { enabled: true, rpId: null },
  session: { idleTimeoutSeconds: 604_800, maxLifetimeSeconds: 2_592_000, jwtLifetimeSeconds: 60, jwtAudience: null },
  lockout: { maxFailedAttempts: 10, coolDownSeconds: 3600, ipMaxFailures: 100, ipWindowSeconds: 900 },
  hostedPages: { enabled: true, afterSignInUrl: null, afterSignOutUrl: null, termsUrl: null, branding: { productName: null, logoUrl: null, primaryColor: null } },
}) as EnvironmentSettings;

/**
 * Whether `rpId` may scope passkeys for pages of `frontendHost`: browsers accept the page's own host name
 * or a parent domain of it (never a bare top-level label; they also refuse public suffixes such as co.uk).
 */
export function rpIdFits(rpId: string, frontendHost: string): boolean {
  const hostname = frontendHost.replace(/:\d+$/, '').toLowerCase();
  return rpId === hostname || (rpId.includes('.') && hostname.endsWith(`.${rpId}`));
}

/** The hosted page that signs an environment invitation up (contract §3e). */
export const HOSTED_ACCEPT_INVITATION_PATH = '/accept-invitation';

/**
 * Where an invitation mail links: the environment's signUpUrl, else (hosted pages on) the hosted page on its
 * frontend host, so invitations work with no configuration; undefined when neither is there.
 */
export function invitationSignUpUrl(env: { frontendHost: string; settings: EnvironmentSettings }): string | undefined {
  if (env.settings.signUpUrl) return env.settings.signUpUrl;
  return env.settings.hostedPages.enabled ? `${frontendUrl(env.frontendHost)}${HOSTED_ACCEPT_INVITATION_PATH}` : undefined;
}

/** The hosted account page of a user's data requests, where a ready export is downloaded; undefined while the hosted pages are off. */
export function hostedAccountDataUrl(env: { frontendHost: string; settings: EnvironmentSettings }): string | undefined {
  return env.settings.hostedPages.enabled ? `${frontendUrl(env.frontendHost)}/account/data` : undefined;
}

/** The hosted page that lets the invitee of an organization sign in or up, then join. */
export const HOSTED_ACCEPT_ORGANIZATION_INVITATION_PATH = '/accept-organization-invitation';

/** Where an organization invitation mail links: invitationAcceptUrl, else (hosted pages on) the hosted page; undefined sends no mail. */
export function organizationInvitationAcceptUrl(env: { frontendHost: string; settings: EnvironmentSettings }): string | undefined {
  if (env.settings.invitationAcceptUrl) return env.settings.invitationAcceptUrl;
  return env.settings.hostedPages.enabled ? `${frontendUrl(env.frontendHost)}${HOSTED_ACCEPT_ORGANIZATION_INVITATION_PATH}` : undefined;
}

/** Stored settings are overrides; reading merges them over the defaults. */
export const resolveSettings = (overrides: JsonObject): EnvironmentSettings =>
  deepMerge(DEFAULT_SETTINGS as unknown as JsonObject, overrides) as unknown as EnvironmentSettings;

const URL_SETTINGS = ['signUpUrl', 'invitationAcceptUrl', 'impersonationLandingUrl'] as const;

/** Every setting holding a URL the service links, redirects or points an image to, by its error path. */
function urlSettings(settings: EnvironmentSettings): [string, unknown][] {
  const pages = settings.hostedPages as Partial<EnvironmentSettings['hostedPages']> | undefined;
  return [
    ...URL_SETTINGS.map((key): [string, unknown] => [`/settings/${key}`, settings[key]]),
    ['/settings/hostedPages/afterSignInUrl', pages?.afterSignInUrl],
    ['/settings/hostedPages/afterSignOutUrl', pages?.afterSignOutUrl],
    ['/settings/hostedPages/branding/logoUrl', pages?.branding?.logoUrl],
  ];
}

/**
 * Errors of a merged settings object, as [{path, message}], one per path; empty when valid.
 * Unknown keys are named; URLs must be absolute with a host and must not use a scheme that runs code.
 */
export function settingsErrors(settings: EnvironmentSettings): { path: string; message: string }[] {
  const byPath = new Map<string, string>();
  const allowed = new Map<string, unknown[]>();
  for (const e of Value.Errors(EnvironmentSettings, settings)) {
    const path = `/settings${e.instancePath}`;
    // A union of literals fails once per literal: gather them into one "must be one of" message.
    if (e.keyword === 'const') allowed.set(path, [...(allowed.get(path) ?? []), (e.params as { allowedValue?: unknown }).allowedValue]);
    // An unknown key is reported on itself ("schema is false") and again on its parent object: keep the first.
    if (e.keyword === 'additionalProperties' || byPath.has(path)) continue;
    byPath.set(path, e.keyword === 'boolean' ? 'is not a known setting' : e.message);
  }
  for (const [path, values] of allowed) byPath.set(path, `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`);
  for (const [path, value] of urlSettings(settings)) {
    if (typeof value === 'string' && !byPath.has(path) && !isSafeAbsoluteUrl(value)) {
      byPath.set(path, 'must be an absolute URL with a host, in ASCII without spaces (percent-encoded), and not javascript:, data: or file:');
    }
  }
  if (byPath.size === 0 && settings.passwordPolicy.minLength > settings.passwordPolicy.maxLength) {
    byPath.set('/settings/passwordPolicy', 'minLength must not exceed maxLength');
  }
  return [...byPath].map(([path, message]) => ({ path, message }));
}

/** How the environment's mail looks: the hosted pages' branding, the product name falling back to the environment's name. */
export function mailBrand(env: { name: string; settings: EnvironmentSettings }): MailBrand {
  const { productName, logoUrl, primaryColor } = env.settings.hostedPages.branding;
  return { productName: productName ?? env.name, logoUrl, primaryColor };
}

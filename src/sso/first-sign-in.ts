import { recordOwnEvent } from '../audit/service.js';
import { mailBrand } from '../environments/settings.js';
import type { OAuthFailure } from '../oauth/relying-party.js';
import { lockOrganization } from '../organizations/service.js';
import { userCaller, type RequestContext } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import type { ClientEnvironment } from '../platform/http/planes.js';
import { ProblemError } from '../platform/http/problem.js';
import { pickLocale } from '../platform/i18n/locale.js';
import type { Mailer } from '../platform/mail/mailer.js';
import { composeMail, mailTime } from '../platform/mail/render.js';
import { revokeAllSessions } from '../sessions/service.js';
import { insertUser, isAcceptableEmail, joinName, lockLiveUserByEmail, normalizeEmail, proveEmailByProvider } from '../users/accounts.js';
import type { User } from '../users/schemas.js';
import { createSsoStore, type ConnectionRecord } from './store.js';
import { isAtVerifiedDomainOf } from '../organization-domains/service.js';

/** The codes the browser is sent back to `redirect_url` with (`?error=`). */
export type SsoErrorCode = OAuthFailure['code'] | 'sso_connection_not_found' | 'email_domain_not_verified' | 'email_not_verified';

/** A refusal after the IdP: the code the browser goes back with, and the reason (for the log only). */
export class SsoFailure extends Error {
  constructor(readonly code: SsoErrorCode, message: string) { super(message); }
}

/**
 * What an IdP said of the person, whichever the protocol. `emailVerified`: what it said of the email, null when it
 * said nothing (SAML has no such statement; Microsoft Entra ID sends no OpenID `email_verified` claim).
 */
export interface SsoProfile {
  subject: string; email: string | null; emailVerified: boolean | null; firstName: string | null; lastName: string | null; name: string | null; groups: string[];
}

/**
 * The first sign-in of an IdP subject through a connection (sign-in.ts runs it in the sign-in's transaction): the
 * user it is, found by the email the IdP sent or created from it (JIT), and the subject linked to that user.
 */
export function createFirstSignIn({ clock, mailer }: { clock: Clock; mailer: Mailer }) {
  /**
   * The email a first sign-in may find or create a user by: one the API would accept, at a verified domain of the
   * connection's organization (its IdP speaks for those only), and not one the IdP itself says is unverified.
   * An IdP that says nothing of it (SAML, Entra ID) is taken at its word for the verified domain.
   */
  async function vouchedEmail(trx: Db, env: ClientEnvironment, row: ConnectionRecord, profile: SsoProfile) {
    if (!profile.email) throw new SsoFailure('email_required', 'the IdP sent no email');
    const email = normalizeEmail(profile.email);
    // Not echoed: it may be anything the IdP sent, of any length.
    if (!isAcceptableEmail(email)) throw new SsoFailure('email_invalid', 'the IdP sent an email the API would refuse');
    if (!(await isAtVerifiedDomainOf(trx, env.id, row.organization_id, email))) {
      throw new SsoFailure('email_domain_not_verified', `${email} is not at a verified domain of the connection's organization`);
    }
    if (profile.emailVerified === false) throw new SsoFailure('email_not_verified', `the IdP says ${email} is not verified`);
    return email;
  }

  /** Tells the owner that the account now signs in through the organization's IdP, in the link's transaction (sent if and only if it commits). */
  async function mailAccountLinked(trx: Db, env: ClientEnvironment, row: ConnectionRecord, user: User, now: Date) {
    const organization = await lockOrganization(trx, env.id, row.organization_id);
    const locale = pickLocale({ user: user.locale });
    await mailer.send(env.id, composeMail({
      to: user.email!, kind: 'ssoAccountLinked', locale, brand: mailBrand(env),
      values: { email: user.email!, organization: organization.name, time: mailTime(now, locale) },
    }), trx);
  }

  /**
   * A first sign-in of the subject takes over the live account with its email, which the organization's verified
   * domain gives its IdP the right to do. Whoever held the account before must not stay signed in through it, so
   * every session ends; its owner is mailed, and `sso_identity.linked` records it. A password the account had
   * proven stays (the IdP is one more way in, as with Clerk and WorkOS); an unproven one goes with the email's proof.
   */
  async function linkExistingAccount(trx: Db, env: ClientEnvironment, row: ConnectionRecord, user: User, context: RequestContext, now: Date) {
    const unproven = user.emailVerifiedAt === null && user.status === 'active';
    const linked = unproven ? (await proveEmailByProvider(trx, env.id, user.id, now))! : user;
    const revokedSessions = await revokeAllSessions(trx, env.id, user.id, now);
    const by = userCaller(user.id, context);
    if (unproven) {
      await recordOwnEvent(trx, env.id, { action: 'user.email_verified', ...by, targets: [{ type: 'user', id: user.id }], metadata: { via: 'sso', passwordRemoved: true, revokedSessions } }, now);
    }
    await recordOwnEvent(trx, env.id, {
      action: 'sso_identity.linked', ...by, targets: [{ type: 'user', id: user.id }, { type: 'sso_connection', id: row.id }],
      metadata: { connectionId: row.id, organizationId: row.organization_id, revokedSessions, passwordRemoved: unproven },
    }, now);
    await mailAccountLinked(trx, env, row, linked, now);
    return linked;
  }

  /** A new user of the IdP's email: verified, without a password, with the names the IdP sent. */
  async function createJitUser(trx: Db, env: ClientEnvironment, row: ConnectionRecord, profile: SsoProfile, email: string, context: RequestContext, now: Date) {
    const user = await insertUser(trx, env.id, {
      email, emailVerifiedAt: now, registrationState: 'complete', passwordHash: null, firstName: profile.firstName, lastName: profile.lastName,
      name: profile.name ?? joinName(profile.firstName, profile.lastName), publicMetadata: {}, privateMetadata: {}, unsafeMetadata: {},
    }, now).catch((err: unknown) => {
      // Another address of some user has it verified (email addresses): that account is not this subject's to take.
      if (err instanceof ProblemError && err.code === 'email_taken') throw new SsoFailure('email_taken', 'another account has the email');
      throw err;
    });
    await recordOwnEvent(trx, env.id, { action: 'user.signed_up', ...userCaller(user.id, context), targets: [{ type: 'user', id: user.id }], metadata: { method: 'sso', connectionId: row.id } }, now);
    return user;
  }

  /** The user a first sign-in of the subject is: the live user with the IdP's email, linked, else a new one. */
  async function firstSignIn(trx: Db, env: ClientEnvironment, row: ConnectionRecord, profile: SsoProfile, context: RequestContext): Promise<User> {
    const email = await vouchedEmail(trx, env, row, profile);
    const now = clock.now();
    const existing = await lockLiveUserByEmail(trx, env.id, email);
    const user = existing ? await linkExistingAccount(trx, env, row, existing, context, now) : await createJitUser(trx, env, row, profile, email, context, now);
    await createSsoStore(trx).insertIdentity(env.id, row.id, profile.subject, user.id, now);
    return user;
  }

  return firstSignIn;
}

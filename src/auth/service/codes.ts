import { recordOwnEvent } from '../../audit/service.js';
import { userCaller, type RequestContext } from '../../platform/caller.js';
import type { Clock } from '../../platform/clock.js';
import { randomCode, sha256 } from '../../platform/crypto/tokens.js';
import { inTransaction, type Db } from '../../platform/db/database.js';
import { mailBrand } from '../../environments/settings.js';
import { pickLocale } from '../../platform/i18n/locale.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import { composeMail, mailTime } from '../../platform/mail/render.js';
import { emailBucket, type RateLimiter } from '../../platform/rate-limit.js';
import { revokeAllSessions } from '../../sessions/service.js';
import { enrollByVerifiedEmail } from '../../organization-domains/service.js';
import { applyPasswordReset, checkedPasswordHash, normalizeEmail } from '../../users/accounts.js';
import type { User } from '../../users/schemas.js';
import type { UsersService } from '../../users/service.js';
import { invalidCode } from '../errors.js';
import type { ResetPasswordBody, VerifyEmailBody } from '../schemas.js';
import { createCodesStore, type CodePurpose } from '../store.js';
import { throttle } from './common.js';
import { complete, type IssueSession, type MailingEnvironment } from './issue-session.js';
import type { SecondFactorStep } from './second-factor.js';
import { clientNetwork } from '../../platform/client-network.js';
import { refuseWhereSsoIsEnforced, ssoEnforcedFor } from '../../sso/service.js';
import type { Background } from '../../platform/background.js';

export interface EmailedCodesDeps {
  db: Db; clock: Clock; mailer: Mailer; limiter: RateLimiter; issueSession: IssueSession; background: Background;
  secondStep: Pick<SecondFactorStep, 'challengeOrSession'>;
  users: Pick<UsersService, 'findCredentials' | 'completeRegistration'>;
}

const CODE_LIFETIME_MS = 10 * 60_000;
const CODE_SENDS_PER_EMAIL = { max: 5, windowSeconds: 3600 };
const CODE_SENDS_PER_IP = { max: 30, windowSeconds: 3600 };
// Each code allows 5 tries, and 5 codes may be mailed an hour: without a cap across codes, a 6-digit code
// could be guessed 25 times an hour for ever. Past this many wrong tries in a UTC day, every code of the
// account answers as wrong, the right one included; the answer is the one an unknown email gets.
export const CODE_FAILURES_PER_ACCOUNT = { max: 10, windowSeconds: 86_400 };
// Every reset attempt runs a password hash (unknown emails too, so they cost the same): cap them per client.
const RESET_ATTEMPTS_PER_IP = { max: 100, windowSeconds: 3600 };

const CODE_MAILS = { verify_email: 'verifyEmail', reset_password: 'resetPassword' } as const satisfies Record<CodePurpose, string>;

/**
 * A code mailed to a secondary address is bound to that address, so a reset names the address the code
 * went to, and only a code mailed to the user's own email verifies it. A code mailed to the user's own
 * email keeps the form it always had.
 */
const codeHash = (userId: string, code: string, secondary?: string) => sha256(secondary ? `${userId}:${secondary}:${code}` : `${userId}:${code}`);

/** The address a code for this email goes to, when it is a verified secondary of the user rather than the user's own. */
const secondaryAddress = (user: User, email: string) => (email === user.email ? undefined : email);

/** Client-plane flows that mail a 6-digit code: email verification and password reset. */
export function createEmailedCodesService({ db, clock, mailer, limiter, issueSession, background, users, secondStep }: EmailedCodesDeps) {
  const codes = createCodesStore(db);

  /**
   * A new 6-digit code for the purpose, replacing any earlier one, stored hashed and mailed to the user's
   * email, or to `secondary` (a verified address of the user that asked for it).
   */
  async function mailCode(env: MailingEnvironment, user: User, purpose: CodePurpose, secondary?: string, trx?: Db) {
    const code = randomCode();
    const now = clock.now();
    await (trx ? createCodesStore(trx) : codes).replace(env.id, user.id, purpose, codeHash(user.id, code, secondary), new Date(now.getTime() + CODE_LIFETIME_MS), now);
    await mailer.send(env.id, composeMail({
      to: secondary ?? user.email!, kind: CODE_MAILS[purpose], locale: pickLocale({ user: user.locale }), brand: mailBrand(env), code,
    }), trx);
  }

  /** Tells the owner of a reset, in the reset's transaction (the notice goes out if and only if it commits); carries no code or password. */
  function mailPasswordChanged(trx: Db, env: MailingEnvironment, user: User) {
    const locale = pickLocale({ user: user.locale });
    return mailer.send(env.id, composeMail({
      to: user.email!, kind: 'passwordReset', locale, brand: mailBrand(env),
      values: { email: user.email!, time: mailTime(new Date(user.updatedAt), locale) },
    }), trx);
  }

  /**
   * Tries a code against the account's daily budget of wrong tries: the try is counted before the code
   * is checked (so concurrent guesses cannot outrun the count) and given back when the code was right.
   * Over the budget, the code is not even tried.
   */
  async function withinCodeBudget<T>(env: MailingEnvironment, userId: string, tryCode: () => Promise<T | undefined>): Promise<T | undefined> {
    const bucket = `code_failures:user:${userId}`;
    const attempt = await limiter.hit(env.id, bucket, CODE_FAILURES_PER_ACCOUNT);
    if (!attempt.allowed) return undefined;
    const result = await tryCode();
    if (result !== undefined) await limiter.release(env.id, bucket, attempt);
    return result;
  }

  /**
   * One transaction: the code is used up, the password set, the lockout cleared, every session revoked
   * and a fresh one started. A wrong code commits only its counted try (so 5 of them burn the code) and
   * yields undefined, as does a user who stopped being active.
   */
  function applyReset(env: MailingEnvironment, userId: string, code: string, passwordHash: string, context: RequestContext, secondary?: string) {
    return inTransaction(db, async (trx) => {
      const now = clock.now();
      if (!(await createCodesStore(trx).consume(env.id, userId, 'reset_password', codeHash(userId, code, secondary), now))) return undefined;
      const user = await applyPasswordReset(trx, env.id, userId, passwordHash, secondary === undefined, now);
      if (!user) return undefined;
      const revokedSessions = await revokeAllSessions(trx, env.id, userId, now);
      // A user with a second factor shows it before the new session starts: a mailbox alone is no way past it.
      const result = await secondStep.challengeOrSession(trx, env, user, context, 'password_reset');
      await mailPasswordChanged(trx, env, user);
      const session = result.status === 'complete' ? [{ type: 'session', id: result.session.id }] : [];
      await recordOwnEvent(trx, env.id, {
        action: 'user.password_reset', ...userCaller(userId, context), targets: [{ type: 'user', id: userId }, ...session], metadata: { revokedSessions },
      }, now);
      await enrollByVerifiedEmail(trx, env.id, user, now); // a reset by the primary email's code proves it
      return result;
    });
  }

  return {
    /** Housekeeping: codes a day past expiry are gone for good. */
    pruneExpiredCodes: () => codes.deleteExpired(new Date(clock.now().getTime() - 86_400_000)),

    /**
     * Mails the code that completes a pending sign-up, in the sign-up's transaction: the code and its mail
     * commit with the account, or neither does (a retry then signs up afresh instead of meeting 409).
     */
    mailVerificationCode: (trx: Db, env: MailingEnvironment, user: User) => mailCode(env, user, 'verify_email', undefined, trx),

    /**
     * Sends a new code to a pending account; answers the same whether or not the account exists, and as
     * fast: the account is looked up and the code mailed after the answer.
     */
    async resendVerificationCode(env: MailingEnvironment, email: string, ipAddress: string) {
      await throttle(limiter, env, `verify_email_send:ip:${clientNetwork(ipAddress)}`, CODE_SENDS_PER_IP);
      await throttle(limiter, env, emailBucket('verify_email_send', normalizeEmail(email)), CODE_SENDS_PER_EMAIL);
      background.run('verification code', async () => {
        const found = await users.findCredentials(env.id, email);
        if (found && found.user.registrationState === 'pending_email_verification') await mailCode(env, found.user, 'verify_email');
      });
    },

    async verifyEmail(env: MailingEnvironment, body: VerifyEmailBody, context: RequestContext) {
      const found = await users.findCredentials(env.id, body.email);
      if (!found || found.user.registrationState !== 'pending_email_verification') throw invalidCode();
      const consumed = await withinCodeBudget(env, found.user.id, async () =>
        (await codes.consume(env.id, found.user.id, 'verify_email', codeHash(found.user.id, body.code), clock.now())) || undefined);
      if (!consumed) throw invalidCode();
      const user = await users.completeRegistration(env.id, found.user.id, context);
      if (!user) throw invalidCode();
      return complete(await issueSession(db, env, user, context, 'email_code'));
    },

    /**
     * Mails a reset code to a live account (not deleted, not banned); answers the same for any email.
     * The per-email limit counts every request for the address, account or not, so it reveals nothing,
     * and the account is looked up and the code mailed after the answer, so its time reveals nothing either.
     */
    async requestPasswordReset(env: MailingEnvironment, email: string, ipAddress: string) {
      await throttle(limiter, env, `forgot_password:ip:${clientNetwork(ipAddress)}`, CODE_SENDS_PER_IP);
      await throttle(limiter, env, emailBucket('forgot_password', normalizeEmail(email)), CODE_SENDS_PER_EMAIL);
      background.run('password reset code', async () => {
        // A domain whose organization enforces its IdP has no passwords to reset: no code (the answer is the same).
        if (await ssoEnforcedFor(db, env.id, email)) return;
        const found = await users.findCredentials(env.id, email);
        if (found && found.user.status === 'active') await mailCode(env, found.user, 'reset_password', secondaryAddress(found.user, normalizeEmail(email)));
      });
    },

    /**
     * The policy check and the hash come first, for any email: a weak password never uses up the code
     * or a try, and an unknown email costs and answers like a live one with a wrong code.
     */
    async resetPassword(env: MailingEnvironment, body: ResetPasswordBody, context: RequestContext) {
      await throttle(limiter, env, `reset_password:ip:${clientNetwork(context.ipAddress)}`, RESET_ATTEMPTS_PER_IP);
      const email = normalizeEmail(body.email);
      await refuseWhereSsoIsEnforced(db, env.id, email);
      const passwordHash = await checkedPasswordHash(body.newPassword, env.settings, email);
      const found = await users.findCredentials(env.id, email);
      if (!found || found.user.status !== 'active') throw invalidCode();
      const reset = await withinCodeBudget(env, found.user.id, () => applyReset(env, found.user.id, body.code, passwordHash, context, secondaryAddress(found.user, email)));
      if (!reset) throw invalidCode();
      return reset;
    },
  };
}
export type EmailedCodesService = ReturnType<typeof createEmailedCodesService>;

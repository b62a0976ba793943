import { recordOwnEvent } from '../audit/service.js';
import type { EnvironmentContext } from '../environments/service.js';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { hashPassword, verifyPassword } from '../platform/crypto/passwords.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import { reauthenticationRequired, type SessionContext } from '../platform/http/planes.js';
import { rateLimited } from '../platform/http/problems.js';
import { mailBrand } from '../environments/settings.js';
import { pickLocale } from '../platform/i18n/locale.js';
import type { Mailer } from '../platform/mail/mailer.js';
import { composeMail, mailTime } from '../platform/mail/render.js';
import type { RateLimiter } from '../platform/rate-limit.js';
import { checkSecondFactor } from '../factors/service.js';
import type { Sealer } from '../platform/crypto/encryption.js';
import { markSessionAuthenticated, markSessionSecondFactor, revokeAllSessions } from '../sessions/service.js';
import { assertPasswordPolicy, setPassword, userCredentials } from '../users/accounts.js';
import type { User } from '../users/schemas.js';
import type { UsersService } from '../users/service.js';
import { currentPasswordRequired, invalidCode, invalidPassword, passwordNotSet, selfDeletionDisabled } from './errors.js';
import type { ChangePasswordBody, ReauthenticateBody } from './schemas.js';

export interface AccountDeps {
  db: Db; clock: Clock; limiter: RateLimiter; mailer: Mailer; sealer: Sealer;
  users: Pick<UsersService, 'softDelete'>;
}

/** The signed-in user acting on their own account: who, in which session, from where. */
export interface AccountCaller { env: EnvironmentContext & { name: string }; session: SessionContext; caller: Caller }

/** The signed-in user's own account: password, re-authentication, deletion (contract §3d). */
export function createAccountService({ db, clock, limiter, mailer, sealer, users }: AccountDeps) {
  /**
   * Checks the user's password against the account's budget of wrong tries (the sign-in lockout's numbers):
   * a stolen session must not become a way to guess the password without limit. The try is counted
   * before the hash and given back when the password was right.
   */
  async function withinCheckBudget<T>(env: EnvironmentContext, userId: string, check: () => Promise<T | undefined>, refusal: () => Error): Promise<T> {
    const { maxFailedAttempts, coolDownSeconds } = env.settings.lockout;
    const bucket = `password_check_failures:user:${userId}`;
    const attempt = await limiter.hit(env.id, bucket, { max: maxFailedAttempts, windowSeconds: coolDownSeconds });
    if (!attempt.allowed) throw rateLimited(attempt.retryAfterSeconds);
    const passed = await check();
    if (passed === undefined) throw refusal();
    await limiter.release(env.id, bucket, attempt);
    return passed;
  }

  const confirmPassword = (env: EnvironmentContext, userId: string, storedHash: string, password: string) =>
    withinCheckBudget(env, userId, async () => (await verifyPassword(storedHash, password)) || undefined, invalidPassword);

  async function credentialsOf({ env, session }: AccountCaller) {
    const found = await userCredentials(db, env.id, session.userId);
    if (!found) throw new Error(`the signed-in user ${session.userId} has no row`);
    return found;
  }

  /** Tells the owner, in the change's transaction, so the notice goes out if and only if it commits. */
  function mailPasswordChanged(trx: Db, env: EnvironmentContext & { name: string }, user: User, signedOutOthers: boolean, at: Date) {
    const locale = pickLocale({ user: user.locale });
    return mailer.send(env.id, composeMail({
      to: user.email!, kind: signedOutOthers ? 'passwordChangedOthersSignedOut' : 'passwordChanged', locale, brand: mailBrand(env),
      values: { email: user.email!, time: mailTime(at, locale) },
    }), trx);
  }

  return {
    /**
     * A new password: the policy first (a weak one costs no try), then the current password when the
     * account has one, or else a recent sign-in (setting a first password must not be open to a stolen
     * session). One transaction: the hash, the other sessions ended when asked, this session marked
     * recently authenticated, a notice mailed and `user.password_changed` recorded.
     */
    async changePassword(who: AccountCaller, body: ChangePasswordBody) {
      const { env, session } = who;
      const { user, passwordHash: current } = await credentialsOf(who);
      assertPasswordPolicy(body.newPassword, env.settings, user.email);
      if (current === null && !session.recentlyAuthenticated) throw reauthenticationRequired();
      if (current !== null) {
        if (body.currentPassword === undefined) throw currentPasswordRequired();
        await confirmPassword(env, user.id, current, body.currentPassword);
      }
      const passwordHash = await hashPassword(body.newPassword);
      await inTransaction(db, async (trx) => {
        const now = clock.now();
        const changed = await setPassword(trx, env.id, user.id, passwordHash, now);
        if (!changed) throw new Error(`the signed-in user ${user.id} is not active`);
        const revokedSessions = body.signOutOtherSessions ? await revokeAllSessions(trx, env.id, user.id, now, session.id) : 0;
        await markSessionAuthenticated(trx, env.id, session.id, now);
        if (changed.email) await mailPasswordChanged(trx, env, changed, body.signOutOtherSessions, now);
        await recordOwnEvent(trx, env.id, {
          action: 'user.password_changed', ...who.caller, targets: [{ type: 'user', id: user.id }, { type: 'session', id: session.id }],
          metadata: { firstPassword: current === null, revokedSessions },
        }, now);
      });
    },

    /**
     * The password, or a second-factor code, confirmed again: this session counts as recently authenticated
     * for the next 10 minutes (a code also adds otp and mfa to its amr).
     */
    async reauthenticate(who: AccountCaller, body: ReauthenticateBody) {
      const { env, session } = who;
      const { user, passwordHash } = await credentialsOf(who);
      const { password, code = '' } = body;
      if (password !== undefined) {
        if (passwordHash === null) throw passwordNotSet();
        await confirmPassword(env, user.id, passwordHash, password);
      } else {
        await withinCheckBudget(env, user.id, () => checkSecondFactor(db, sealer, env.id, user.id, code, clock.now()), invalidCode);
      }
      await inTransaction(db, async (trx) => {
        const now = clock.now();
        if (password !== undefined) await markSessionAuthenticated(trx, env.id, session.id, now);
        else await markSessionSecondFactor(trx, env.id, session.id, now);
        await recordOwnEvent(trx, env.id, {
          action: 'session.reauthenticated', ...who.caller, targets: [{ type: 'session', id: session.id }, { type: 'user', id: user.id }],
          metadata: { method: password !== undefined ? 'password' : 'second_factor' },
        }, now);
      });
    },

    /** The Server API's soft delete, by the user: only where the environment allows it (the route asks for a recent sign-in). */
    async deleteOwnAccount(who: AccountCaller) {
      if (!who.env.settings.selfDeletionEnabled) throw selfDeletionDisabled();
      await users.softDelete(who.env.id, who.session.userId, who.caller);
    },
  };
}
export type AccountService = ReturnType<typeof createAccountService>;

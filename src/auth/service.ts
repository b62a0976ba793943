import type { EnvironmentSettings } from '../environments/settings.js';
import type { Clock } from '../platform/clock.js';
import { verifyPassword } from '../platform/crypto/passwords.js';
import { randomCode, sha256 } from '../platform/crypto/tokens.js';
import type { Db } from '../platform/db/database.js';
import { escapeHtml, type Mailer } from '../platform/mail/mailer.js';
import type { RateLimiter } from '../platform/rate-limit.js';
import { createSessionsService, type SessionOrigin, type SessionsService } from '../sessions/service.js';
import type { User } from '../users/schemas.js';
import { checkedPasswordHash, createPasswordResetAccounts, normalizeEmail, toClientUser, type UsersService } from '../users/service.js';
import { emailNotVerified, invalidCode, invalidCredentials, rateLimited, userBanned } from './errors.js';
import type { ResetPasswordBody, SignInBody, SignUpBody, VerifyEmailBody } from './schemas.js';
import { createCodesStore, type CodePurpose } from './store.js';

export interface AuthEnvironment { id: string; settings: EnvironmentSettings }
export interface AuthDeps { db: Db; clock: Clock; users: UsersService; sessions: SessionsService; mailer: Mailer; limiter: RateLimiter }

const CODE_LIFETIME_MS = 10 * 60_000;
const CODE_SENDS_PER_EMAIL = { max: 5, windowSeconds: 3600 };
const CODE_SENDS_PER_IP = { max: 30, windowSeconds: 3600 };
// Every sign-up mails a code to the address given: one client must not turn us into a mail cannon.
const SIGN_UPS_PER_IP = { max: 100, windowSeconds: 3600 };
// Every reset attempt runs a password hash (unknown emails too, so they cost the same): cap them per client.
const RESET_ATTEMPTS_PER_IP = { max: 100, windowSeconds: 3600 };

const CODE_MAILS: Record<CodePurpose, { name: string; ifNotYou: string }> = {
  verify_email: { name: 'verification code', ifNotYou: 'If you did not sign up, ignore this email.' },
  reset_password: { name: 'password reset code', ifNotYou: 'If you did not ask to reset your password, ignore this email; your password stays as it is.' },
};

const codeHash = (userId: string, code: string) => sha256(`${userId}:${code}`);

/** Client-plane sign-up, email verification, sign-in and password reset. */
export function createAuthService({ db, clock, users, sessions, mailer, limiter }: AuthDeps) {
  const codes = createCodesStore(db);

  async function startSession(env: AuthEnvironment, user: User, origin: SessionOrigin) {
    const started = await sessions.start(env.id, user.id, env.settings.session, origin);
    // Banned or deleted between the credential check and now: no session, and no detail either.
    if (!started) throw invalidCredentials();
    return { user: toClientUser(user), ...started };
  }

  /** A new 6-digit code for the purpose, replacing any earlier one, stored hashed and mailed to the user. */
  async function mailCode(env: AuthEnvironment, user: User, purpose: CodePurpose) {
    const code = randomCode();
    const now = clock.now();
    await codes.replace(env.id, user.id, purpose, codeHash(user.id, code), new Date(now.getTime() + CODE_LIFETIME_MS), now);
    const { name, ifNotYou } = CODE_MAILS[purpose];
    await mailer.send(env.id, {
      to: user.email!,
      subject: `Your ${name} is ${code}`,
      text: `Your ${name} is ${code}. It expires in 10 minutes. ${ifNotYou}`,
      html: `<p>Your ${name} is <strong>${escapeHtml(code)}</strong>.</p><p>It expires in 10 minutes. ${escapeHtml(ifNotYou)}</p>`,
    });
  }

  /** Tells the owner after a reset; carries no code or password. */
  function mailPasswordChanged(env: AuthEnvironment, user: User) {
    const notice = `The password of your account ${user.email} was changed at ${user.updatedAt} with a reset code sent to this address, and every session was signed out.`;
    const ifNotYou = 'If you did not do this, ask for a new reset code at once and tell your administrator.';
    return mailer.send(env.id, {
      to: user.email!,
      subject: 'Your password was changed',
      text: `${notice} ${ifNotYou}`,
      html: `<p>${escapeHtml(notice)}</p><p>${escapeHtml(ifNotYou)}</p>`,
    });
  }

  /**
   * One transaction: the code is used up, the password set, the lockout cleared, every session revoked
   * and a fresh one started. A wrong code commits only its counted try (so 5 of them burn the code) and
   * yields undefined, as does a user who stopped being active.
   */
  function applyReset(env: AuthEnvironment, userId: string, code: string, passwordHash: string, origin: SessionOrigin) {
    return db.transaction().execute(async (trx) => {
      if (!(await createCodesStore(trx).consume(env.id, userId, 'reset_password', codeHash(userId, code), clock.now()))) return undefined;
      const user = await createPasswordResetAccounts({ db: trx, clock }).applyReset(env.id, userId, passwordHash);
      if (!user) return undefined;
      const trxSessions = createSessionsService({ db: trx, clock });
      await trxSessions.revokeAllForUser(env.id, userId);
      const started = await trxSessions.start(env.id, userId, env.settings.session, origin);
      if (!started) throw invalidCode(); // cannot happen: the user row is locked and active; roll everything back
      return { user, ...started };
    });
  }

  async function throttle(env: AuthEnvironment, bucket: string, limit: { max: number; windowSeconds: number }) {
    const result = await limiter.hit(env.id, bucket, limit);
    if (!result.allowed) throw rateLimited(result.retryAfterSeconds);
  }

  return {
    /** Housekeeping: codes a day past expiry are gone for good. */
    pruneExpiredCodes: () => codes.deleteExpired(new Date(clock.now().getTime() - 86_400_000)),

    async signUp(env: AuthEnvironment, body: SignUpBody, origin: SessionOrigin) {
      await throttle(env, `sign_up:ip:${origin.ipAddress}`, SIGN_UPS_PER_IP);
      const pending = env.settings.emailVerificationRequired;
      const user = await users.register(env.id, { ...body, pending });
      if (pending) {
        await mailCode(env, user, 'verify_email');
        return { pending: true as const, user: toClientUser(user) };
      }
      return { pending: false as const, ...(await startSession(env, user, origin)) };
    },

    /** Sends a new code to a pending account; answers the same whether or not the account exists. */
    async resendVerificationCode(env: AuthEnvironment, email: string, ipAddress: string) {
      await throttle(env, `verify_email_send:ip:${ipAddress}`, CODE_SENDS_PER_IP);
      await throttle(env, `verify_email_send:email:${normalizeEmail(email)}`, CODE_SENDS_PER_EMAIL);
      const found = await users.findCredentials(env.id, email);
      if (found && found.user.registrationState === 'pending_email_verification') await mailCode(env, found.user, 'verify_email');
    },

    async verifyEmail(env: AuthEnvironment, body: VerifyEmailBody, origin: SessionOrigin) {
      const found = await users.findCredentials(env.id, body.email);
      if (!found || found.user.registrationState !== 'pending_email_verification') throw invalidCode();
      if (!(await codes.consume(env.id, found.user.id, 'verify_email', codeHash(found.user.id, body.code), clock.now()))) throw invalidCode();
      const user = await users.completeRegistration(env.id, found.user.id);
      if (!user) throw invalidCode();
      return startSession(env, user, origin);
    },

    /**
     * Unknown email, wrong password and locked account give one answer, after the same work (a dummy
     * hash runs for unknown emails). Failures count per account (lockout) and per client IP (429).
     */
    async signIn(env: AuthEnvironment, body: SignInBody, origin: SessionOrigin & { ipAddress: string }) {
      const { lockout } = env.settings;
      const ipBucket = `sign_in_failures:ip:${origin.ipAddress}`;
      // Both the client IP's budget and the account's are reserved before the slow hash and given back
      // on success, so concurrent guesses cannot all slip through before any of them counts.
      const ipAttempt = await limiter.hit(env.id, ipBucket, { max: lockout.ipMaxFailures, windowSeconds: lockout.ipWindowSeconds });
      if (!ipAttempt.allowed) throw rateLimited(ipAttempt.retryAfterSeconds);
      const candidate = await users.reserveSignInAttempt(env.id, body.email, lockout);
      const passwordOk = await verifyPassword(candidate?.passwordHash, body.password);
      if (!candidate) throw invalidCredentials();
      await users.finishSignInAttempt(env.id, candidate.user.id, passwordOk, lockout);
      if (!passwordOk) throw invalidCredentials();
      await limiter.release(env.id, ipBucket, ipAttempt);
      if (candidate.user.status === 'banned') throw userBanned();
      if (candidate.user.registrationState === 'pending_email_verification') throw emailNotVerified();
      return startSession(env, candidate.user, origin);
    },

    /**
     * Mails a reset code to a live account (not deleted, not banned); answers the same for any email.
     * The per-email limit counts every request for the address, account or not, so it reveals nothing.
     */
    async requestPasswordReset(env: AuthEnvironment, email: string, ipAddress: string) {
      await throttle(env, `forgot_password:ip:${ipAddress}`, CODE_SENDS_PER_IP);
      await throttle(env, `forgot_password:email:${normalizeEmail(email)}`, CODE_SENDS_PER_EMAIL);
      const found = await users.findCredentials(env.id, email);
      if (found && found.user.status === 'active') await mailCode(env, found.user, 'reset_password');
    },

    /**
     * The policy check and the hash come first, for any email: a weak password never uses up the code
     * or a try, and an unknown email costs and answers like a live one with a wrong code.
     */
    async resetPassword(env: AuthEnvironment, body: ResetPasswordBody, origin: SessionOrigin & { ipAddress: string }) {
      await throttle(env, `reset_password:ip:${origin.ipAddress}`, RESET_ATTEMPTS_PER_IP);
      const email = normalizeEmail(body.email);
      const passwordHash = await checkedPasswordHash(body.newPassword, env.settings, email);
      const found = await users.findCredentials(env.id, email);
      if (!found || found.user.status !== 'active') throw invalidCode();
      const reset = await applyReset(env, found.user.id, body.code, passwordHash, origin);
      if (!reset) throw invalidCode();
      await mailPasswordChanged(env, reset.user);
      return { user: toClientUser(reset.user), session: reset.session, token: reset.token };
    },
  };
}
export type AuthService = ReturnType<typeof createAuthService>;

import type { EnvironmentSettings } from '../environments/settings.js';
import type { Clock } from '../platform/clock.js';
import { verifyPassword } from '../platform/crypto/passwords.js';
import { randomCode, sha256 } from '../platform/crypto/tokens.js';
import type { Db } from '../platform/db/database.js';
import { escapeHtml, type Mailer } from '../platform/mail/mailer.js';
import type { RateLimiter } from '../platform/rate-limit.js';
import type { SessionOrigin, SessionsService } from '../sessions/service.js';
import type { User } from '../users/schemas.js';
import { normalizeEmail, toClientUser, type UsersService } from '../users/service.js';
import { emailNotVerified, invalidCode, invalidCredentials, rateLimited, userBanned } from './errors.js';
import type { SignInBody, SignUpBody, VerifyEmailBody } from './schemas.js';
import { createCodesStore } from './store.js';

export interface AuthEnvironment { id: string; settings: EnvironmentSettings }
export interface AuthDeps { db: Db; clock: Clock; users: UsersService; sessions: SessionsService; mailer: Mailer; limiter: RateLimiter }

const CODE_LIFETIME_MS = 10 * 60_000;
const CODE_SENDS_PER_EMAIL = { max: 5, windowSeconds: 3600 };
const CODE_SENDS_PER_IP = { max: 30, windowSeconds: 3600 };
// Every sign-up mails a code to the address given: one client must not turn us into a mail cannon.
const SIGN_UPS_PER_IP = { max: 100, windowSeconds: 3600 };

const codeHash = (userId: string, code: string) => sha256(`${userId}:${code}`);

/** Client-plane sign-up, email verification, sign-in and sign-out. */
export function createAuthService({ db, clock, users, sessions, mailer, limiter }: AuthDeps) {
  const codes = createCodesStore(db);

  async function startSession(env: AuthEnvironment, user: User, origin: SessionOrigin) {
    const started = await sessions.start(env.id, user.id, env.settings.session, origin);
    // Banned or deleted between the credential check and now: no session, and no detail either.
    if (!started) throw invalidCredentials();
    return { user: toClientUser(user), ...started };
  }

  async function mailVerificationCode(env: AuthEnvironment, user: User) {
    const code = randomCode();
    const now = clock.now();
    await codes.replace(env.id, user.id, 'verify_email', codeHash(user.id, code), new Date(now.getTime() + CODE_LIFETIME_MS), now);
    await mailer.send(env.id, {
      to: user.email!,
      subject: `Your verification code is ${code}`,
      text: `Your verification code is ${code}. It expires in 10 minutes. If you did not sign up, ignore this email.`,
      html: `<p>Your verification code is <strong>${escapeHtml(code)}</strong>.</p><p>It expires in 10 minutes. If you did not sign up, ignore this email.</p>`,
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
        await mailVerificationCode(env, user);
        return { pending: true as const, user: toClientUser(user) };
      }
      return { pending: false as const, ...(await startSession(env, user, origin)) };
    },

    /** Sends a new code to a pending account; answers the same whether or not the account exists. */
    async resendVerificationCode(env: AuthEnvironment, email: string, ipAddress: string) {
      await throttle(env, `verify_email_send:ip:${ipAddress}`, CODE_SENDS_PER_IP);
      await throttle(env, `verify_email_send:email:${normalizeEmail(email)}`, CODE_SENDS_PER_EMAIL);
      const found = await users.findCredentials(env.id, email);
      if (found && found.user.registrationState === 'pending_email_verification') await mailVerificationCode(env, found.user);
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
  };
}
export type AuthService = ReturnType<typeof createAuthService>;

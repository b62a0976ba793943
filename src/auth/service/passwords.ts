import type { RawBuilder } from 'kysely';
import type { RequestContext } from '../../platform/caller.js';
import type { Clock } from '../../platform/clock.js';
import { verifyPassword } from '../../platform/crypto/passwords.js';
import type { CteChain } from '../../platform/db/cte.js';
import type { Db } from '../../platform/db/database.js';
import { ProblemError } from '../../platform/http/problem.js';
import { mailBrand } from '../../environments/settings.js';
import { pickLocale } from '../../platform/i18n/locale.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import { composeMail } from '../../platform/mail/render.js';
import { rateLimited } from '../../platform/http/problems.js';
import type { Background } from '../../platform/background.js';
import type { Metrics } from '../../platform/metrics.js';
import { emailBucket, releaseStatement, type RateLimiter } from '../../platform/rate-limit.js';
import { normalizeEmail, toClientUser, unstoredPendingUser } from '../../users/accounts.js';
import { signInSucceeded, type UsersService } from '../../users/service.js';
import type { User } from '../../users/schemas.js';
import { emailNotVerified, invalidCredentials, userBanned } from '../errors.js';
import type { SignInBody, SignUpBody } from '../schemas.js';
import type { EmailedCodesService } from './codes.js';
import { secondStepApplies, type SecondFactorStep } from './second-factor.js';
import { recordFailedSignIn, throttle } from './common.js';
import { complete, type AuthEnvironment, type IssueSession, type MailingEnvironment, type SignInResult } from './issue-session.js';
import type { Locale } from '../../platform/i18n/catalogue.js';
import { clientNetwork } from '../../platform/client-network.js';
import { ssoRequired } from '../../sso/errors.js';
import { refuseWhereSsoIsEnforced, ssoEnforcedCondition } from '../../sso/service.js';

export interface PasswordAuthDeps {
  db: Db; clock: Clock; limiter: RateLimiter; mailer: Mailer; metrics: Pick<Metrics, 'signIns' | 'lockouts'>; issueSession: IssueSession; background: Background;
  users: Pick<UsersService, 'register' | 'reserveSignInAttempt' | 'finishSignInAttempt' | 'findCredentials'>;
  codes: Pick<EmailedCodesService, 'mailVerificationCode'>;
  secondStep: Pick<SecondFactorStep, 'challenge'>;
}

// Every sign-up mails a code to the address given: one client must not turn us into a mail cannon.
const SIGN_UPS_PER_IP = { max: 100, windowSeconds: 3600 };
// The "you already have an account" notice, per address: past it the mail is skipped, never refused (a
// refusal would tell the address has an account).
const ACCOUNT_NOTICES_PER_EMAIL = { max: 5, windowSeconds: 3600 };

const isEmailTaken = (err: unknown) => err instanceof ProblemError && err.code === 'email_taken';

/** How a sign-in's failures count against the account. */
export interface SignInOptions {
  /**
   * Per client network (the operators' sign-in): an account's failures from one network fill a window of
   * the lockout's length (lockout.maxFailedAttempts in lockout.coolDownSeconds, 429 rate_limited past it),
   * and the account itself is never locked, so knowing an email no longer locks its owner out; a right
   * password from any other network still signs in. Else (end-users) the account counts them: 10 in a
   * row lock it for everyone.
   */
  lockoutPerClient?: boolean;
}

// No rate-limit window outlives a day (pruneOldWindows keeps two).
const LONGEST_WINDOW_SECONDS = 86_400;
const nothingToGiveBack = async () => undefined;

/** Client-plane sign-up and sign-in with email and password. */
export function createPasswordAuthService({ db, clock, limiter, mailer, metrics, issueSession, background, users, codes, secondStep }: PasswordAuthDeps) {
  /**
   * Under enumeration protection, a sign-up for an email that has an account answers as a new pending
   * sign-up would (the password was checked and hashed all the same) and tells the owner by mail.
   */
  async function answerTakenEmailQuietly(env: MailingEnvironment, body: SignUpBody): Promise<SignInResult> {
    const email = normalizeEmail(body.email);
    const answer = { status: 'pending_verification' as const, user: unstoredPendingUser(env.id, body, clock.now()) };
    if (!(await limiter.hit(env.id, emailBucket('account_notice', email), ACCOUNT_NOTICES_PER_EMAIL)).allowed) return answer;
    // In the owner's language: one indexed read, next to the password hash both answers cost.
    const owner = await users.findCredentials(env.id, email);
    await mailer.send(env.id, composeMail({
      to: email, kind: 'accountExists', locale: pickLocale({ user: owner?.user.locale }), brand: mailBrand(env), values: { email },
    }));
    return answer;
  }

  return {
    async signUp(env: MailingEnvironment, body: SignUpBody & { locale?: Locale }, context: RequestContext): Promise<SignInResult> {
      await refuseWhereSsoIsEnforced(db, env.id, body.email);
      await throttle(limiter, env, `sign_up:ip:${clientNetwork(context.ipAddress)}`, SIGN_UPS_PER_IP);
      const pending = env.settings.emailVerificationRequired;
      // A pending account's code and mail commit with it: a failure between them leaves nothing to collide with on a retry.
      const mailCode = pending ? (trx: Db, created: User) => codes.mailVerificationCode(trx, env, created) : undefined;
      const user = await users.register(env.id, { ...body, pending }, context, mailCode).catch((err: unknown) => {
        if (pending && env.settings.enumerationProtection && isEmailTaken(err)) return undefined;
        throw err;
      });
      if (!user) return answerTakenEmailQuietly(env, body);
      if (pending) return { status: 'pending_verification', user: toClientUser(user) };
      return complete(await issueSession(db, env, user, context, 'sign_up'));
    },

    /**
     * Unknown email, wrong password and locked account give one answer, after the same work (a dummy
     * hash runs for unknown emails). Failures count per account (lockout) and per client IP (429).
     */
    async signIn(env: AuthEnvironment, body: SignInBody, context: RequestContext, options: SignInOptions = {}): Promise<SignInResult> {
      try {
        const result = await signInWithPassword(env, body, context, options.lockoutPerClient === true);
        metrics.signIns.inc({ result: 'success' });
        return result;
      } catch (err) {
        metrics.signIns.inc({ result: 'failure' });
        throw err;
      }
    },
  };

  /**
   * Reserves one of the account's attempts for this client network (SignInOptions.lockoutPerClient), keyed
   * by the email asked for, known or not, so an unknown email answers alike; answers how to give it back.
   */
  async function reserveAttemptOfClient(env: AuthEnvironment, email: string, network: string) {
    const bucket = `account_client_failures:${network}:${normalizeEmail(email)}`;
    const { maxFailedAttempts, coolDownSeconds } = env.settings.lockout;
    const hit = await limiter.hit(env.id, bucket, { max: maxFailedAttempts, windowSeconds: Math.min(coolDownSeconds, LONGEST_WINDOW_SECONDS) });
    if (!hit.allowed) throw rateLimited(hit.retryAfterSeconds);
    return () => limiter.release(env.id, bucket, hit);
  }

  async function signInWithPassword(env: AuthEnvironment, body: SignInBody, context: RequestContext, perClient: boolean): Promise<SignInResult> {
    const { lockout } = env.settings;
    const network = clientNetwork(context.ipAddress);
    const ipBucket = `sign_in_failures:ip:${network}`;
    const giveBackClientAttempt = perClient ? await reserveAttemptOfClient(env, body.email, network) : nothingToGiveBack;
    // Both the client IP's budget and the account's are reserved before the slow hash (in one statement)
    // and given back on success, so concurrent guesses cannot all slip through before any of them counts.
    const ipHit = limiter.prepareHit(env.id, ipBucket, { max: lockout.ipMaxFailures, windowSeconds: lockout.ipWindowSeconds });
    const { budgetCount, credentials: candidate, refused } = await users.reserveSignInAttempt(env.id, body.email, lockout, ipHit.statement, ssoEnforcedCondition(env.id, body.email), !perClient);
    const ipAttempt = ipHit.result(budgetCount);
    if (refused || !ipAttempt.allowed) await giveBackClientAttempt();
    if (refused) throw ssoRequired();
    if (!ipAttempt.allowed) throw rateLimited(ipAttempt.retryAfterSeconds);
    const passwordOk = await verifyPassword(candidate?.passwordHash, body.password);
    if (!candidate) throw invalidCredentials();
    const { user } = candidate;
    if (passwordOk && user.status === 'active' && user.registrationState === 'complete') {
      const released = releaseStatement(env.id, ipBucket, ipAttempt);
      // The password was right, so the client's attempt goes back; the account's stays reserved until a
      // right code clears it, or a stolen password would buy fresh code guesses at every sign-in.
      const result = secondStepApplies(env, candidate.hasSecondFactor)
        ? await secondStep.challenge(db, env, user.id, 'password', {}, released)
        : complete(await finishPasswordSignIn(env, user, context, released));
      await giveBackClientAttempt();
      return result;
    }
    const reason = !passwordOk ? 'invalid_password' : user.status === 'banned' ? 'user_banned'
      : user.registrationState === 'pending_email_verification' ? 'email_not_verified' : undefined;
    // An unknown email writes nothing after its hash, so what a refusal of an account leaves behind (the
    // lockout, the IP's attempt given back, the trail) is written after the answer, which then takes as long.
    background.run('sign-in refusal', async () => {
      const locked = !perClient && await users.finishSignInAttempt(env.id, user.id, passwordOk, lockout);
      if (locked) metrics.lockouts.inc();
      if (passwordOk) await Promise.all([limiter.release(env.id, ipBucket, ipAttempt), giveBackClientAttempt()]);
      if (reason) await recordFailedSignIn(db, clock, env, user.id, context, reason, locked);
    });
    if (reason === 'user_banned') throw userBanned();
    // Under enumeration protection a sign-up for a taken email answers "pending" too, so "unverified" here
    // would tell a real pending sign-up from an existing account: answer as for a wrong password instead.
    if (reason === 'email_not_verified' && !env.settings.enumerationProtection) throw emailNotVerified();
    throw invalidCredentials();
  }

  /** The right password of an active account: its count cleared and the IP's attempt given back with the session, in one statement. */
  function finishPasswordSignIn(env: AuthEnvironment, user: User, context: RequestContext, released: RawBuilder<unknown>) {
    const lockUser = {
      name: 'sign_in_finish',
      add: (chain: CteChain) => {
        const budget = chain.add('released', released);
        return chain.add('signed_in', signInSucceeded(env.id, user.id, budget));
      },
    };
    return issueSession(db, env, user, context, 'password', {}, { lockUser });
  }
}
export type PasswordAuthService = ReturnType<typeof createPasswordAuthService>;

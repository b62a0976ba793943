import { checkSecondFactor, hasSecondFactor, SECOND_FACTOR_KINDS } from '../../factors/service.js';
import type { RequestContext } from '../../platform/caller.js';
import type { Clock } from '../../platform/clock.js';
import type { Sealer } from '../../platform/crypto/encryption.js';
import { randomToken, sha256 } from '../../platform/crypto/tokens.js';
import { sql, type RawBuilder } from 'kysely';
import { preparedAs, type Db } from '../../platform/db/database.js';
import { runChain, type CteChain } from '../../platform/db/cte.js';
import type { UserLock } from '../../platform/db/tables.js';
import { ProblemError } from '../../platform/http/problem.js';
import type { JsonObject } from '../../platform/json.js';
import { toClientUser } from '../../users/accounts.js';
import type { ClientUser } from '../../users/schemas.js';
import { secondFactorSucceeded, type UsersService } from '../../users/service.js';
import { invalidChallenge, invalidCode } from '../errors.js';
import { consumeChallengeAfter, createChallengesStore, insertChallengeStatement } from '../store.js';
import { recordFailedSignIn } from './common.js';
import { complete, type AuthEnvironment, type IssueOptions, type IssueSession, type SignInMethod, type SignInResult } from './issue-session.js';

/** Whether a first step must be followed by a second: the user has a factor, and factors are not turned off (mfa.policy). */
export const secondStepApplies = (env: AuthEnvironment, userHasFactor: boolean) => userHasFactor && env.settings.mfa.policy !== 'off';

/** Long enough to open an authenticator app, short enough that a stolen challenge is soon worthless. */
const CHALLENGE_LIFETIME_MS = 5 * 60_000;

export interface SecondFactorDeps {
  db: Db; clock: Clock; sealer: Sealer; issueSession: IssueSession;
  users: Pick<UsersService, 'reserveAttemptById' | 'finishSignInAttempt'>;
}

export interface MfaVerifyBody { challengeToken: string; code: string }

/** The second step of a sign-in: a challenge for a user with a factor, and the code that answers it. */
export function createSecondFactorStep({ db, clock, sealer, issueSession, users }: SecondFactorDeps) {
  const challenges = createChallengesStore(db);

  /**
   * A single-use challenge for the user, in the caller's transaction; the session waits for its code.
   * `withIt` is a write that commits in the same statement (a password sign-in gives the client's attempt back).
   */
  async function challenge(trx: Db, env: AuthEnvironment, userId: string, method: SignInMethod, details: JsonObject = {}, withIt?: RawBuilder<unknown>): Promise<SignInResult> {
    const challengeToken = randomToken('mfa_');
    const now = clock.now();
    const insert = insertChallengeStatement(env.id, { tokenHash: sha256(challengeToken), userId, method, details, expiresAt: new Date(now.getTime() + CHALLENGE_LIFETIME_MS) }, now);
    await runChain(trx, preparedAs(withIt ? 'challenge_with_write' : 'challenge'), (chain) => {
      if (withIt) chain.add('with_it', withIt);
      return chain.add('challenge', insert);
    });
    return { status: 'mfa_required', challengeToken, factors: SECOND_FACTOR_KINDS };
  }

  /** A wrong code: spent on the challenge and on the account's lockout budget (the one that fills it locks), and recorded. */
  async function refuse(env: AuthEnvironment, tokenHash: Buffer, userId: string, reserved: boolean, context: RequestContext): Promise<never> {
    await challenges.countFailure(env.id, tokenHash);
    if (reserved) {
      const locked = await users.finishSignInAttempt(env.id, userId, false, env.settings.lockout);
      await recordFailedSignIn(db, clock, env, userId, context, 'invalid_second_factor', locked);
    }
    throw invalidCode();
  }

  return {
    challenge,

    /**
     * After a first step that proved the user (OAuth, a password reset): a challenge when they have a
     * factor, else the session. The password sign-in decides this itself, as its session statement does more.
     */
    async challengeOrSession(trx: Db, env: AuthEnvironment, user: ClientUser, context: RequestContext, method: SignInMethod, details: JsonObject = {}, options: IssueOptions = {}) {
      if (secondStepApplies(env, await hasSecondFactor(trx, env.id, user.id))) return challenge(trx, env, user.id, method, details);
      return complete(await issueSession(trx, env, user, context, method, details, options));
    },

    /**
     * A TOTP or backup code for a live challenge. Each try takes one of the account's attempts first (as a
     * password does), so neither a burst nor fresh challenges outrun the lockout; a locked account answers
     * as a wrong code. The right code starts the session in one statement: the failure count cleared, the
     * challenge used up (of two answers at once, one finds it live), the session, and `user.signed_in`
     * with the first step's method and the factor.
     */
    async verify(env: AuthEnvironment, body: MfaVerifyBody, context: RequestContext): Promise<SignInResult> {
      const tokenHash = sha256(body.challengeToken);
      const found = await challenges.findLive(env.id, tokenHash, clock.now());
      if (!found) throw invalidChallenge();
      const user = await users.reserveAttemptById(env.id, found.user_id, env.settings.lockout);
      const kind = user && await checkSecondFactor(db, sealer, env.id, user.id, body.code, clock.now());
      if (!user || !kind) return refuse(env, tokenHash, found.user_id, user !== undefined, context);
      const lockUser = {
        name: 'second_factor_finish',
        add: (chain: CteChain) => {
          const locked = chain.add('locked', secondFactorSucceeded(env.id, user.id));
          const used = chain.add('challenge_used', consumeChallengeAfter(env.id, tokenHash, clock.now(), locked));
          return chain.add('signed_in', sql<UserLock>`select l.* from ${locked.from} l where exists (select from ${used.from})`);
        },
      };
      const details = { ...found.details, secondFactor: kind };
      return complete(await issueSession(db, env, toClientUser(user), context, found.method as SignInMethod, details, { secondFactor: true, lockUser }).catch(async (err: unknown) => {
        // No session: the user stopped being active (the challenge is still live), or another answer used the challenge first.
        if (err instanceof ProblemError && err.code === 'user_not_active' && !(await challenges.findLive(env.id, tokenHash, clock.now()))) throw invalidChallenge();
        throw err;
      }));
    },

    /** Housekeeping: challenges a day past expiry are gone for good. */
    pruneExpired: () => challenges.deleteExpired(new Date(clock.now().getTime() - 86_400_000)),
  };
}
export type SecondFactorStep = ReturnType<typeof createSecondFactorStep>;

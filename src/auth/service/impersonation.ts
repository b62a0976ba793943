import { uuidv7 } from 'uuidv7';
import { redeemImpersonationToken, type RedeemBy } from '../../impersonation/service.js';
import type { RequestContext } from '../../platform/caller.js';
import type { Clock } from '../../platform/clock.js';
import { inTransaction, type Db } from '../../platform/db/database.js';
import { ProblemError } from '../../platform/http/problem.js';
import type { Metrics } from '../../platform/metrics.js';
import { complete, type AuthEnvironment, type IssueSession, type SignInResult } from './issue-session.js';

export interface ImpersonationSignInDeps { db: Db; clock: Clock; issueSession: IssueSession; metrics: Pick<Metrics, 'impersonationRedeems'> }

/** Support staff signing in as a user: a minted token redeemed for the target's session, which carries the actor. */
export function createImpersonationSignIn({ db, clock, issueSession, metrics }: ImpersonationSignInDeps) {
  /** One transaction: the token redeemed and the session started, or neither (a target banned since the mint gets no session). */
  const redeemIn = (env: AuthEnvironment, token: string, context: RequestContext, by: RedeemBy) =>
    inTransaction(db, async (trx) => {
      const sessionId = uuidv7();
      const redeemed = await redeemImpersonationToken(trx, env.id, token, sessionId, context, by, clock.now());
      const signedIn = await issueSession(trx, env, redeemed.target, { ...context, actor: redeemed.actor }, 'impersonation', {}, { sessionId });
      return { result: complete(signedIn), landingUrl: redeemed.landingUrl };
    });

  return {
    /** The target's session and the landing URL the token was minted with; every refusal is counted by its reason. */
    async redeem(env: AuthEnvironment, token: string, context: RequestContext, by: RedeemBy): Promise<{ result: SignInResult; landingUrl: string | null }> {
      try {
        const redeemed = await redeemIn(env, token, context, by);
        metrics.impersonationRedeems.inc({ result: 'success' });
        return redeemed;
      } catch (err) {
        metrics.impersonationRedeems.inc({ result: err instanceof ProblemError ? err.code : 'error' });
        throw err;
      }
    },
  };
}
export type ImpersonationSignIn = ReturnType<typeof createImpersonationSignIn>;

import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { PasskeyEnvironment, PasskeysService } from '../../passkeys/service.js';
import { recordPasskeyUse } from '../../passkeys/service.js';
import type { RequestContext } from '../../platform/caller.js';
import { clientNetwork } from '../../platform/client-network.js';
import type { Clock } from '../../platform/clock.js';
import { inTransaction, type Db } from '../../platform/db/database.js';
import type { RateLimiter } from '../../platform/rate-limit.js';
import { toClientUser } from '../../users/accounts.js';
import type { UsersService } from '../../users/service.js';
import { refuseWhereSsoIsEnforced } from '../../sso/service.js';
import { userBanned } from '../errors.js';
import { throttle } from './common.js';
import { complete, type IssueSession, type SignInResult } from './issue-session.js';

export interface PasskeySignInDeps {
  db: Db; clock: Clock; limiter: RateLimiter; issueSession: IssueSession;
  passkeys: Pick<PasskeysService, 'authenticationOptions' | 'verifyAssertion'>;
  users: Pick<UsersService, 'get'>;
}

// Anyone may ask for options, unauthenticated; a browser asks once per sign-in page, and a few more behind one NAT.
const OPTIONS_PER_IP = { max: 60, windowSeconds: 60 };

/** Sign-in with a passkey: complete by itself (possession and user verification), never followed by a second step. */
export function createPasskeySignIn({ db, clock, limiter, issueSession, passkeys, users }: PasskeySignInDeps) {
  return {
    /** Request options, within the client network's budget (429 rate_limited past it). */
    async options(env: PasskeyEnvironment, email: string | undefined, context: RequestContext) {
      await throttle(limiter, env, `passkey_options:ip:${clientNetwork(context.ipAddress)}`, OPTIONS_PER_IP);
      return passkeys.authenticationOptions(env, email);
    },

    /**
     * A verified assertion starts the session in one transaction with the passkey's new counter, so two
     * sign-ins racing with one counter value start one session. A banned user is told so (the passkey
     * proved who asks), as is one whose organization enforces its SSO connection; a deleted one gets no
     * session (issueSession).
     */
    async signIn(env: PasskeyEnvironment, response: AuthenticationResponseJSON, context: RequestContext): Promise<SignInResult> {
      const verified = await passkeys.verifyAssertion(env, response);
      const user = await users.get(env.id, verified.userId);
      if (user.status === 'banned') throw userBanned();
      await refuseWhereSsoIsEnforced(db, env.id, user.email);
      return inTransaction(db, async (trx) => {
        await recordPasskeyUse(trx, env.id, verified, clock.now());
        return complete(await issueSession(trx, env, toClientUser(user), context, 'passkey', { passkeyId: verified.passkeyId }, { amr: verified.amr }));
      });
    },
  };
}
export type PasskeySignIn = ReturnType<typeof createPasskeySignIn>;

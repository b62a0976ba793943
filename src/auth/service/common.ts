import type { EnvironmentContext } from '../../environments/service.js';
import { recordOwnEvent, type OwnEvent } from '../../audit/service.js';
import { userCaller, type RequestContext } from '../../platform/caller.js';
import type { Clock } from '../../platform/clock.js';
import { inTransaction, type Db } from '../../platform/db/database.js';
import { rateLimited } from '../../platform/http/problems.js';
import type { JsonObject } from '../../platform/json.js';
import type { Limit, RateLimiter } from '../../platform/rate-limit.js';
import type { StartedSession } from '../../sessions/schemas.js';
import { startSession } from '../../sessions/service.js';
import type { ClientUser, User } from '../../users/schemas.js';
import { toClientUser } from '../../users/accounts.js';
import { invalidCredentials } from '../errors.js';

/** The environment a client-plane flow runs in. */
export type AuthEnvironment = EnvironmentContext;

/** A flow that signed the user in: the client form of the user, the session and its token (cookie or body). */
export interface SignedIn { user: ClientUser; session: StartedSession; token: string }

/**
 * What a sign-in ends in. Today always `complete`; a second factor will add
 * `{ status: 'needs_second_factor', ... }`, which routes then answer without a session.
 */
export type SignInResult = { status: 'complete' } & SignedIn;

/** How a user proved who they are, as the trail records a sign-in. */
export type SignInMethod = 'password' | 'sign_up' | 'email_code' | 'oauth';

/**
 * Starts the user's session with the environment's lifetimes and records the sign-in with it (in the
 * caller's transaction when given one). `details` adds to the event's metadata (the provider of an external sign-in).
 */
export function signInAs(db: Db, clock: Clock, env: AuthEnvironment, user: User, origin: RequestContext, method: SignInMethod, details: JsonObject = {}): Promise<SignedIn> {
  return inTransaction(db, async (trx) => {
    const now = clock.now();
    const started = await startSession(trx, env.id, user.id, env.settings.session, origin, now);
    // Banned or deleted between the credential check and now: no session, and no detail either.
    if (!started) throw invalidCredentials();
    await recordOwnEvent(trx, env.id, signedInEvent(user.id, started.session.id, origin, method, details), now);
    return { user: toClientUser(user), ...started };
  });
}

/** The trail's record of a sign-in: who, the session it started, and how they proved who they are. */
export const signedInEvent = (userId: string, sessionId: string, origin: RequestContext, method: SignInMethod, details: JsonObject = {}): OwnEvent => ({
  action: 'user.signed_in', ...userCaller(userId, origin),
  targets: [{ type: 'user', id: userId }, { type: 'session', id: sessionId }], metadata: { method, ...details },
});

/** Records a refused sign-in of a known account: why (never the password), and whether it locked the account. */
export const recordFailedSignIn = (db: Db, clock: Clock, env: AuthEnvironment, userId: string, origin: RequestContext, reason: string, locked = false) =>
  recordOwnEvent(db, env.id, {
    action: 'user.sign_in_failed', ...userCaller(userId, origin), result: 'failure',
    targets: [{ type: 'user', id: userId }], metadata: { reason, locked },
  }, clock.now());

/** Counts a hit against the limit; 429 rate_limited once it is reached. */
export async function throttle(limiter: RateLimiter, env: AuthEnvironment, bucket: string, limit: Limit) {
  const result = await limiter.hit(env.id, bucket, limit);
  if (!result.allowed) throw rateLimited(result.retryAfterSeconds);
}

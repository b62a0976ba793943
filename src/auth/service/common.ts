import { recordOwnEvent } from '../../audit/service.js';
import { userCaller, type RequestContext } from '../../platform/caller.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { rateLimited } from '../../platform/http/problems.js';
import type { Limit, RateLimiter } from '../../platform/rate-limit.js';
import type { AuthEnvironment } from './issue-session.js';

/** Records a refused sign-in of a known account: why (never the password), and whether it locked the account. */
export const recordFailedSignIn = (db: Db, clock: Clock, env: AuthEnvironment, userId: string, context: RequestContext, reason: string, locked = false) =>
  recordOwnEvent(db, env.id, {
    action: 'user.sign_in_failed', ...userCaller(userId, context), result: 'failure',
    targets: [{ type: 'user', id: userId }], metadata: { reason, locked },
  }, clock.now());

/** Counts a hit against the limit; 429 rate_limited once it is reached. */
export async function throttle(limiter: RateLimiter, env: AuthEnvironment, bucket: string, limit: Limit) {
  const result = await limiter.hit(env.id, bucket, limit);
  if (!result.allowed) throw rateLimited(result.retryAfterSeconds);
}

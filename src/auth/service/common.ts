import type { EnvironmentSettings } from '../../environments/settings.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { rateLimited } from '../../platform/http/problems.js';
import type { Limit, RateLimiter } from '../../platform/rate-limit.js';
import type { StartedSession } from '../../sessions/schemas.js';
import { startSession, type SessionOrigin } from '../../sessions/service.js';
import type { ClientUser, User } from '../../users/schemas.js';
import { toClientUser } from '../../users/accounts.js';
import { invalidCredentials } from '../errors.js';

/** The environment a client-plane flow runs in: the client plane's resolved environment satisfies it. */
export interface AuthEnvironment { id: string; settings: EnvironmentSettings }

/** A flow that signed the user in: the client form of the user, the session and its token (cookie or body). */
export interface SignedIn { user: ClientUser; session: StartedSession; token: string }

/**
 * What a sign-in ends in. Today always `complete`; a second factor will add
 * `{ status: 'needs_second_factor', ... }`, which routes then answer without a session.
 */
export type SignInResult = { status: 'complete' } & SignedIn;

/** Starts the user's session with the environment's lifetimes. */
export async function signInAs(db: Db, clock: Clock, env: AuthEnvironment, user: User, origin: SessionOrigin): Promise<SignedIn> {
  const started = await startSession(db, env.id, user.id, env.settings.session, origin, clock.now());
  // Banned or deleted between the credential check and now: no session, and no detail either.
  if (!started) throw invalidCredentials();
  return { user: toClientUser(user), ...started };
}

/** Counts a hit against the limit; 429 rate_limited once it is reached. */
export async function throttle(limiter: RateLimiter, env: AuthEnvironment, bucket: string, limit: Limit) {
  const result = await limiter.hit(env.id, bucket, limit);
  if (!result.allowed) throw rateLimited(result.retryAfterSeconds);
}

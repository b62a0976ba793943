import { sql } from 'kysely';
import type { Clock } from './clock.js';
import type { Db } from './db/database.js';

export interface Limit { max: number; windowSeconds: number }
export interface RateLimitResult {
  allowed: boolean;
  /** Hits counted in the window, this one included when allowed; `max` when refused. */
  count: number;
  /** Seconds until the window ends (at least 1). */
  retryAfterSeconds: number;
  windowStart: Date;
}

function windowOf(now: Date, windowSeconds: number) {
  const ms = windowSeconds * 1000;
  const start = Math.floor(now.getTime() / ms) * ms;
  return { start: new Date(start), retryAfterSeconds: Math.max(1, Math.ceil((start + ms - now.getTime()) / 1000)) };
}

/**
 * Fixed-window counters in PostgreSQL, exact across processes: a hit is one atomic upsert that only
 * increments while the count is below the limit, so N concurrent hits never admit more than `max`.
 */
export function createRateLimiter(db: Db, clock: Clock) {
  return {
    async hit(environmentId: string, bucket: string, limit: Limit): Promise<RateLimitResult> {
      const { start, retryAfterSeconds } = windowOf(clock.now(), limit.windowSeconds);
      // The insert below admits a window's first hit unconditionally, so a zero limit is answered here.
      if (limit.max <= 0) return { allowed: false, count: 0, retryAfterSeconds, windowStart: start };
      const row = await sql<{ count: number }>`
        insert into rate_limit_windows (environment_id, bucket, window_start, count)
        values (${environmentId}, ${bucket}, ${start}, 1)
        on conflict (environment_id, bucket, window_start)
        do update set count = rate_limit_windows.count + 1 where rate_limit_windows.count < ${limit.max}
        returning count`.execute(db);
      const counted = row.rows[0]?.count;
      return { allowed: counted !== undefined, count: counted ?? limit.max, retryAfterSeconds, windowStart: start };
    },
    /** Deletes windows that ended long ago; no limit uses a window over a day, so two days is safe. */
    pruneOldWindows: () =>
      db.deleteFrom('rate_limit_windows').where('window_start', '<', new Date(clock.now().getTime() - 2 * 86_400_000)).execute(),
    /** Gives back a hit that turned out not to count (a reserved attempt that succeeded). */
    release: (environmentId: string, bucket: string, hit: RateLimitResult) =>
      db.updateTable('rate_limit_windows').set((eb) => ({ count: eb('count', '-', 1) }))
        .where('environment_id', '=', environmentId).where('bucket', '=', bucket).where('window_start', '=', hit.windowStart)
        .where('count', '>', 0).execute().then(() => undefined),
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;

import { sql, type RawBuilder } from 'kysely';
import type { Clock } from './clock.js';
import { sha256 } from './crypto/tokens.js';
import { deleteInBatches } from './db/batches.js';
import type { Db } from './db/database.js';
import type { Metrics } from './metrics.js';

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
 * The bucket of a limit counted per email address (`forgot_password`, ...): the address as SHA-256 (hex), never
 * in clear, so the windows hold no address and every process counts the same address in the same window.
 * `email` comes normalised (trimmed, lower case) by the caller.
 */
export const emailBucket = (kind: string, email: string) => `${kind}:email:${emailKey(email)}`;

const emailKey = (email: string) => sha256(email).toString('hex');

/**
 * Erasure, in the caller's transaction: deletes the windows counted for these (normalised) addresses, of
 * every kind. A hash is still the address to whoever can guess it. Answers how many windows there were.
 */
export async function deleteEmailWindows(trx: Db, environmentId: string, emails: string[]): Promise<number> {
  if (emails.length === 0) return 0;
  // Hex has no LIKE wildcards; the scan stays within the environment's windows (the key's leading column).
  const patterns = emails.map((email) => `%:email:${emailKey(email)}`);
  const result = await trx.deleteFrom('rate_limit_windows').where('environment_id', '=', environmentId)
    .where((eb) => eb.or(patterns.map((pattern) => eb('bucket', 'like', pattern)))).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A hit not run yet: its statement, and how to read what the statement returned. */
export interface PreparedHit {
  /** Returns one row `{count}` when the hit counted, none when the window is full. */
  statement: RawBuilder<{ count: number }>;
  result(count: number | undefined): RateLimitResult;
}

/** Giving a hit back, as a statement a caller may run inside its own (a CTE). */
export const releaseStatement = (environmentId: string, bucket: string, hit: Pick<RateLimitResult, 'windowStart'>) => sql`
  update rate_limit_windows set count = count - 1
  where environment_id = ${environmentId}::uuid and bucket = ${bucket} and window_start = ${hit.windowStart}::timestamptz and count > 0
  returning count`;

/**
 * Fixed-window counters in PostgreSQL, exact across processes: a hit is one atomic upsert that only
 * increments while the count is below the limit, so N concurrent hits never admit more than `max`.
 */
export function createRateLimiter(db: Db, clock: Clock, metrics?: Pick<Metrics, 'rateLimited'>) {
  /**
   * The hit as a statement, for a caller that runs it as part of its own statement (a CTE), so the
   * count and the write it guards take one round trip and commit together.
   */
  function prepareHit(environmentId: string, bucket: string, limit: Limit): PreparedHit {
    const { start, retryAfterSeconds } = windowOf(clock.now(), limit.windowSeconds);
    // The insert admits a window's first hit unconditionally, so a zero limit never counts anything.
    const admits = limit.max > 0;
    return {
      statement: sql<{ count: number }>`
        insert into rate_limit_windows (environment_id, bucket, window_start, count)
        select ${environmentId}::uuid, ${bucket}, ${start}::timestamptz, 1 where ${admits}
        on conflict (environment_id, bucket, window_start)
        do update set count = rate_limit_windows.count + 1 where rate_limit_windows.count < ${limit.max}
        returning count`,
      result: (count) => {
        // The bucket's kind, before any `:ip:<network>` or `:email:<hash>`: a label from a short fixed set.
        if (count === undefined) metrics?.rateLimited.inc({ limit: bucket.split(':')[0] });
        return { allowed: count !== undefined, count: count ?? limit.max, retryAfterSeconds, windowStart: start };
      },
    };
  }
  return {
    prepareHit,
    async hit(environmentId: string, bucket: string, limit: Limit): Promise<RateLimitResult> {
      const prepared = prepareHit(environmentId, bucket, limit);
      const row = await prepared.statement.execute(db);
      return prepared.result(row.rows[0]?.count);
    },
    /** Deletes windows that ended long ago; no limit uses a window over a day, so two days is safe. */
    pruneOldWindows: () =>
      deleteInBatches(db, 'rate_limit_windows', sql<boolean>`window_start < ${new Date(clock.now().getTime() - 2 * 86_400_000)}::timestamptz`),
    /** Gives back a hit that turned out not to count (a reserved attempt that succeeded). */
    release: (environmentId: string, bucket: string, hit: RateLimitResult) =>
      releaseStatement(environmentId, bucket, hit).execute(db).then(() => undefined),
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;

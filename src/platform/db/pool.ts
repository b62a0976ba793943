import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';

/**
 * Whose work a connection is taken for: each request runs inside one of these stores, and a plane writes
 * the environment into it once its auth hook knows it (`ownConnections`). Work outside a request, or
 * before the environment is known (the secret key's lookup, /readyz), belongs to nobody.
 */
const owner = new AsyncLocalStorage<{ environmentId?: string }>();

/** Runs `next` (the rest of a request) in a store of its own, still without an owner. */
export const withConnectionOwner = (next: () => void) => owner.run({}, next);

/** From here on, the connections of the current request count against its environment's share. */
export function ownConnections(environmentId: string) {
  const store = owner.getStore();
  if (store) store.environmentId = environmentId;
}

/** How long PostgreSQL lets one statement run, and wait on one lock, before it gives up on it. */
export interface StatementLimits { statementTimeoutMs: number; lockTimeoutMs: number }

export const STATEMENT_LIMITS: StatementLimits = { statementTimeoutMs: 5_000, lockTimeoutMs: 2_000 };

/**
 * What PostgreSQL enforces on a connection: the statement and lock timeouts, and the end of a transaction
 * left idle (a stuck process must not keep its row locks).
 */
export const serverLimits = ({ statementTimeoutMs, lockTimeoutMs }: StatementLimits) => ({
  statement_timeout: statementTimeoutMs,
  lock_timeout: lockTimeoutMs,
  idle_in_transaction_session_timeout: statementTimeoutMs * 3,
});

/** Our side's deadline, for a link that went silent, where no answer of the server's timeout can arrive either. */
export const clientDeadlines = ({ statementTimeoutMs }: StatementLimits) => ({
  query_timeout: statementTimeoutMs + 2_000,
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
});

/** The pool's connection settings on a direct connection: the server's limits go as startup parameters. */
export const connectionLimits = (limits: StatementLimits) => ({ ...serverLimits(limits), ...clientDeadlines(limits) });

/** The message pg gives when its own deadline (query_timeout) passes: the link is taken as dead. */
export const QUERY_DEADLINE_MESSAGE = 'Query read timeout';

/** The message pg-pool gives when no connection came in time; answered as 503 like it. */
const NO_CONNECTION_MESSAGE = 'timeout exceeded when trying to connect';

/**
 * The pool as Kysely's dialect takes it, shared fairly: one environment holds at most `size - reserve`
 * connections at once, and its further requests wait for one of its own (up to `waitMs`, then the 503 a
 * full pool gives). So one hot row, or one busy tenant, can hold up its own requests but never take the
 * last connections from every other environment and from /readyz. A connection whose query passed our
 * deadline is destroyed, never handed to the next request behind an answer that will not come.
 */
export function fairPool(pool: pg.Pool, { size, reserve, waitMs }: { size: number; reserve: number; waitMs: number }) {
  const share = Math.max(1, size - reserve);
  const held = new Map<string, number>();
  const queues = new Map<string, (() => void)[]>();

  function enter(environmentId: string): Promise<void> {
    const count = held.get(environmentId) ?? 0;
    if (count < share) {
      held.set(environmentId, count + 1);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const queue = queues.get(environmentId) ?? [];
      queues.set(environmentId, queue);
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(admit), 1);
        reject(new Error(NO_CONNECTION_MESSAGE));
      }, waitMs);
      const admit = () => { clearTimeout(timer); resolve(); };
      queue.push(admit);
    });
  }

  // A leaving connection's place goes to the environment's next waiter, else its count drops.
  function leave(environmentId: string) {
    const next = queues.get(environmentId)?.shift();
    if (next) return next();
    const count = (held.get(environmentId) ?? 1) - 1;
    if (count > 0) held.set(environmentId, count);
    else held.delete(environmentId);
  }

  return {
    async connect(): Promise<pg.PoolClient> {
      const environmentId = owner.getStore()?.environmentId;
      if (environmentId) await enter(environmentId);
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        if (environmentId) leave(environmentId);
        throw err;
      }
      const release = client.release;
      let released = false;
      client.release = (err?: Error | boolean) => {
        if (!released && environmentId) leave(environmentId);
        released = true;
        return release(err);
      };
      return client;
    },
    end: () => pool.end(),
  };
}

/** Cuts a pg client's socket at once, without the goodbye a silent server would never answer. */
export const cutSocket = (client: pg.ClientBase) => (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();

/** Ends a connection whose query passed our deadline: its answer may never come, so nothing may queue behind it. */
export function dropOnDeadline(client: pg.PoolClient) {
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  client.query = (async (...args: unknown[]) => {
    try {
      return await query(...args);
    } catch (err) {
      if ((err as Error).message === QUERY_DEADLINE_MESSAGE) cutSocket(client);
      throw err;
    }
  }) as typeof client.query;
}

/** `work`, or a rejection with `reason` once `ms` have passed without its answer (the work itself goes on). */
export function withDeadline<T>(work: Promise<T>, ms: number, reason: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(reason)), ms); });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

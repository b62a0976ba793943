import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { CLOSE_DEADLINE_MS, embeddedNotifications, postgresNotifications, type Notifications } from './notifications.js';
import { INT8, NUMERIC, openPGlite } from './pglite.js';
import { pgliteDialect } from './pglite-dialect.js';
import { clientDeadlines, connectionLimits, dropOnDeadline, fairPool, QUERY_DEADLINE_MESSAGE, STATEMENT_LIMITS, withDeadline, type StatementLimits } from './pool.js';
import { limitEachTransaction, poolerBetween, type Pooler } from './pooler.js';
export type { StatementLimits } from './pool.js';
export type { Pooler } from './pooler.js';
import type { Db, Tables } from './tables.js';
import type { PoolStats } from '../metrics.js';

export type { Db };

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** How this process hears about changes other processes made (cache eviction). */
  notifications: Notifications;
  /** The connection pool's fill (PostgreSQL only: the embedded database is one in-process connection). */
  poolStats?: () => PoolStats;
  close(): Promise<void>;
}

/**
 * PostgreSQL: `url` serves requests; `directUrl` (default `url`) is a connection straight to PostgreSQL
 * for what needs one session throughout (LISTEN). `pooler` says what is behind `url` (see pooler.ts);
 * by default a transaction pooler when `directUrl` differs from `url`.
 */
export interface PostgresOptions { url: string; directUrl?: string; pooler?: Pooler; poolSize?: number; limits?: StatementLimits }

export type DatabaseOptions =
  | PostgresOptions
  // dataDir undefined: in memory (tests), from `image` when given (see openPGlite)
  | { dataDir: string | undefined; image?: Blob };


/** How long a request waits for a connection (the pool's, or its environment's share) before a 503. */
const CONNECTION_WAIT_MS = 3000;

const PREPARED_MARK = /^\/\* prepared:([a-z_]+) \*\//;

/**
 * A statement whose text starts with `preparedAs(name)` is parsed and planned once per connection and
 * executed by name after that (a PostgreSQL prepared statement): for hot statements whose planning
 * costs more than running them, such as the audit append's four-step CTE. Its text must never vary.
 * Behind a transaction pooler (pooler.ts) the same text goes unnamed, planned at each execution.
 */
export const preparedAs = (name: string) => {
  if (!/^[a-z_]+$/.test(name)) throw new Error(`prepared statement name "${name}" must be lower-case letters and _`);
  return sql.raw(`/* prepared:${name} */ `);
};

function prepareMarkedStatements(client: pg.PoolClient) {
  const query = client.query.bind(client) as (config: unknown, values?: unknown) => Promise<unknown>;
  client.query = ((text: unknown, values?: unknown) => {
    const name = typeof text === 'string' ? PREPARED_MARK.exec(text)?.[1] : undefined;
    return name ? query({ name, text, values }) : query(text, values);
  }) as typeof client.query;
}

/** Opens real PostgreSQL when a URL is given, else embedded PGlite (on disk, or in memory). */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if ('url' in options) return openPostgres(options);
  const lite = await openPGlite(options.dataDir, undefined, options.image);
  const db = new Kysely<Tables>({ dialect: pgliteDialect(lite) });
  const notifications = embeddedNotifications(lite);
  return { db, kind: 'pglite', notifications, close: async () => { await notifications.close(); await db.destroy(); } };
}

function openPostgres({ url, directUrl = url, pooler = poolerBetween(url, directUrl), poolSize: size = 10, limits = STATEMENT_LIMITS }: PostgresOptions): Database {
  const behindPooler = pooler === 'transaction';
  const pool = new pg.Pool({
    connectionString: url,
    max: size,
    // Fail fast while the database is down instead of queueing requests forever.
    connectionTimeoutMillis: CONNECTION_WAIT_MS,
    // Behind a transaction pooler the server's limits are set per transaction instead (limitEachTransaction).
    ...(behindPooler ? clientDeadlines(limits) : connectionLimits(limits)),
    types: { getTypeParser: (oid, format) => (oid === INT8 || oid === NUMERIC ? Number : pg.types.getTypeParser(oid, format)) } as pg.CustomTypesConfig,
  });
  // An idle client losing its connection must not crash the process; the pool reconnects.
  pool.on('error', () => {});
  // A connection that drops while checked out (say between two statements of a transaction) also
  // reports an 'error' event on its client. The statement fails on its own and the pool discards the
  // client on release, but with no listener that report is an uncaught exception ending the process.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    // A statement prepared by name on one server connection is unknown to the next one a pooler hands out.
    if (behindPooler) limitEachTransaction(client, limits);
    else prepareMarkedStatements(client);
    dropOnDeadline(client);
  });
  // A fifth of the pool (at least one connection) stays out of any one environment's reach.
  const shared = fairPool(pool, { size, reserve: Math.max(1, Math.floor(size / 5)), waitMs: CONNECTION_WAIT_MS });
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: shared }) });
  // LISTEN belongs to one session for as long as it listens: never through a transaction pooler.
  const notifications = postgresNotifications(directUrl);
  const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  // A pool over a link gone silent would wait forever for its connections to end: close gives up in time.
  const close = async () => { await notifications.close(); await withDeadline(db.destroy(), CLOSE_DEADLINE_MS, 'the pool did not close').catch(() => {}); };
  return { db, kind: 'postgres', notifications, poolStats, close };
}

/**
 * Runs fn in one transaction that first takes a transaction-level advisory lock, so processes sharing
 * the database run it one at a time (check-then-create steps such as the first-start bootstrap).
 */
export function transactionWithLock<T>(db: Db, lockKey: number, fn: (trx: Db) => Promise<T>): Promise<T> {
  return inTransaction(db, async (trx) => {
    await sql`select pg_advisory_xact_lock(${lockKey})`.execute(trx);
    return fn(trx);
  });
}

/**
 * A JSON value as a jsonb parameter. Drivers send a plain JS array as a PostgreSQL array, so every
 * jsonb write goes through JSON text; the type stays that of the column.
 */
export const jsonb = <T>(value: T) => JSON.stringify(value) as unknown as T;

/** LIKE pattern for a case-insensitive literal substring of lower-cased text: %, _ and \ match only themselves (use `escape '\'`). */
export const containsPattern = (s: string) => `%${s.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Runs fn atomically: inside the caller's transaction when there is one, else in a new one (see onceMoreOnConflict). */
export function inTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : onceMoreOnConflict(db, () => db.transaction().execute(fn));
}

/** A deadlock or a serialization failure: PostgreSQL undid all of it, and the same work may simply go again. */
const isConflict = (err: unknown) => ['40P01', '40001'].includes((err as { code?: string })?.code ?? '');

/**
 * Runs `work` (a statement, or a whole transaction) again, once, when PostgreSQL aborted it for a
 * deadlock or a serialization failure, so the client never sees one. Only where `work` is the whole of
 * it: inside a caller's transaction the abort ends that transaction, which must go again as a whole.
 */
export async function onceMoreOnConflict<T>(db: Db, work: () => Promise<T>): Promise<T> {
  if (db.isTransaction) return work();
  try {
    return await work();
  } catch (err) {
    if (!isConflict(err)) throw err;
    return work();
  }
}

/**
 * PostgreSQL's codes for "not now": the server or link is down (08, 57P), its connection slots are full
 * (53300), or a statement ran into a timeout it was given (57014 statement, 55P03 lock, 25P03 idle in
 * transaction). PgBouncer gives 08P01 for each of its own refusals (no server connection within
 * query_wait_timeout, its client limit reached, the server refusing its login). Each is answered as 503
 * with Retry-After: the same request may well work a moment later.
 */
const NOT_NOW = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006',
  '53300', '57014', '55P03', '25P03', '08P01']);

/** True for errors that mean the database cannot serve this right now (answered as 503). */
export function isUnavailableError(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (NOT_NOW.has(e?.code ?? '') || e?.message === QUERY_DEADLINE_MESSAGE) return true;
  // A handle closed by shutdown, or a pool that was ended, cannot answer either.
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|driver has already been destroyed|PGlite is closed|Cannot use a pool after calling end/i
    .test(e?.message ?? '');
}

/** True for a foreign-key violation of the named constraint (a row that must point at one that is not there). */
export function isForeignKeyViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23503' && e.constraint === constraint;
}

/** True for a unique-constraint violation, optionally of one named constraint or index. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

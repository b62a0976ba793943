import { sql } from 'kysely';
import type pg from 'pg';
import { serverLimits, type StatementLimits } from './pool.js';
import type { Db } from './tables.js';

/**
 * What stands between the pool and PostgreSQL. `none`: each pool connection is one PostgreSQL session
 * (direct, or a pooler in session mode). `transaction`: a pooler in transaction mode (PgBouncer's
 * `pool_mode = transaction`, the poolers managed platforms give) hands each transaction, or each statement
 * outside one, to whichever server connection is free, so nothing may outlive a transaction on a session:
 * no named prepared statements, no session settings, no session locks, no LISTEN.
 */
export type Pooler = 'none' | 'transaction';

export const POOLERS: readonly Pooler[] = ['none', 'transaction'];

/**
 * The pooler to assume when none is named: a direct URL of its own means DATABASE_URL leads somewhere
 * else than PostgreSQL itself, and a transaction pooler is the one that breaks a session's assumptions.
 * Assuming it where there is none costs only the named statements' planning; the reverse fails requests.
 */
export const poolerBetween = (url: string, directUrl: string | undefined): Pooler =>
  (directUrl !== undefined && directUrl !== url ? 'transaction' : 'none');

const BEGIN = /^\s*(begin|start\s+transaction)\b/i;

/**
 * Behind a transaction pooler the statement, lock and idle-in-transaction limits cannot be startup
 * parameters (PgBouncer refuses unknown ones, and a server connection serves other clients too): every
 * transaction sets them for itself with SET LOCAL, in the same round trip as its BEGIN. Statements
 * outside a transaction get the server connection's own defaults (see serverStatementTimeoutMs).
 */
export function limitEachTransaction(client: pg.PoolClient, limits: StatementLimits) {
  const settings = Object.entries(serverLimits(limits)).map(([name, ms]) => `set local ${name} = ${Math.trunc(ms)}`).join('; ');
  const query = client.query.bind(client) as (text: unknown, values?: unknown) => Promise<unknown>;
  client.query = ((text: unknown, values?: unknown) => {
    if (typeof text !== 'string' || !BEGIN.test(text)) return query(text, values);
    // Several statements in one simple query answer one result each: the caller asked for BEGIN's.
    return query(`${text}; ${settings}`, values).then((results) => (results as unknown[])[0]);
  }) as typeof client.query;
}

/**
 * The statement timeout a statement outside a transaction runs with through the pooler, in ms (0: none):
 * the role's or database's default (ALTER ROLE ... SET), or what the pooler's connect_query set.
 */
export async function serverStatementTimeoutMs(db: Db): Promise<number> {
  const { rows } = await sql<{ ms: number }>`select setting::int as ms from pg_settings where name = 'statement_timeout'`.execute(db);
  return rows[0]?.ms ?? 0;
}

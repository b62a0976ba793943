import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { Db } from './tables.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));
// Any constant works; it only has to be the same in every process sharing the database.
const MIGRATION_LOCK = 7_262_2026;

/** The versions applied so far; none before the first migration made the table. */
async function appliedVersions(db: Db): Promise<Set<string>> {
  try {
    const done = await sql<{ version: string }>`select version from schema_migrations`.execute(db);
    return new Set(done.rows.map((r) => r.version));
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') return new Set();
    throw err;
  }
}

/**
 * Applies the numbered SQL files in migrations/ that have not run yet, each in its own transaction.
 * An advisory lock makes processes that start together apply each migration exactly once. An up-to-date
 * database, the common case at every start and CLI call, is seen in one statement without the lock.
 */
export async function migrate(db: Db): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
  const before = await appliedVersions(db);
  if (files.every((f) => before.has(f))) return [];
  return db.connection().execute(async (conn) => {
    // A migration may rebuild a large table, and another process's may hold the lock a while: the
    // request path's statement and lock timeouts are lifted on this connection until it goes back.
    await sql`select set_config('statement_timeout', '0', false), set_config('lock_timeout', '0', false)`.execute(conn);
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
    try {
      await sql`create table if not exists schema_migrations (
        version text primary key, applied_at timestamptz not null default now())`.execute(conn);
      const applied = await appliedVersions(conn);
      const ran: string[] = [];
      for (const file of files.filter((f) => !applied.has(f))) {
        const script = await readFile(MIGRATIONS_DIR + file, 'utf8');
        await conn.transaction().execute(async (trx) => {
          await sql.raw(script).execute(trx);
          await sql`insert into schema_migrations (version) values (${file})`.execute(trx);
        });
        ran.push(file);
      }
      return ran;
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
      await sql`reset statement_timeout`.execute(conn);
      await sql`reset lock_timeout`.execute(conn);
    }
  });
}

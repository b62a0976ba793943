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
 * Applies the numbered SQL files in migrations/ that have not run yet, in order. An up-to-date database,
 * the common case at every start and CLI call, is seen in one statement without any lock.
 */
export async function migrate(db: Db): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
  const before = await appliedVersions(db);
  const ran: string[] = [];
  for (const file of files.filter((f) => !before.has(f))) {
    if (await applyOnce(db, file)) ran.push(file);
  }
  return ran;
}

/**
 * Applies one migration in a transaction of its own under a transaction-level advisory lock, unless
 * another process applied it while this one waited: processes that start together apply each migration
 * exactly once, in order. Nothing outlives the transaction (no session lock, no session setting), so
 * migrations run the same through a transaction pooler, which may hand each transaction to another session.
 */
async function applyOnce(db: Db, file: string): Promise<boolean> {
  const script = await readFile(MIGRATIONS_DIR + file, 'utf8');
  return db.transaction().execute(async (trx) => {
    // A migration may rebuild a large table, and another process's may hold the lock a while: the
    // request path's statement and lock timeouts are lifted for this transaction (before the lock's wait).
    await sql`select set_config('statement_timeout', '0', true), set_config('lock_timeout', '0', true)`.execute(trx);
    await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(trx);
    await sql`create table if not exists schema_migrations (
      version text primary key, applied_at timestamptz not null default now())`.execute(trx);
    const done = await sql`select 1 from schema_migrations where version = ${file}`.execute(trx);
    if (done.rows.length > 0) return false;
    await sql.raw(script).execute(trx);
    await sql`insert into schema_migrations (version) values (${file})`.execute(trx);
    return true;
  });
}

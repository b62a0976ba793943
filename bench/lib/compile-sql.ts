import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type CompiledQuery } from 'kysely';
import type { Db } from '../../src/platform/db/database.js';
import type { Tables } from '../../src/platform/db/tables.js';

/**
 * The exact SQL (and parameters) a store function sends, compiled by Kysely without a database: the
 * benches EXPLAIN what the service really runs, never a hand-copied statement.
 */
export async function compileStoreCall<S>(storeOf: (db: Db) => S, call: (store: S) => Promise<unknown>): Promise<CompiledQuery> {
  let captured: CompiledQuery | undefined;
  const db = new Kysely<Tables>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => { captured = event.query; },
  });
  try {
    await call(storeOf(db));
  } finally {
    await db.destroy();
  }
  if (!captured) throw new Error('the store ran no query');
  return captured;
}

/** A statement with its EXPLAIN (ANALYZE, BUFFERS) plan, a one-line summary of it, and how many rows it matches without its LIMIT. */
export interface Explained {
  sql: string;
  parameters: unknown[];
  plan: string;
  summary: string;
  executionMs: number;
  matches: number;
}

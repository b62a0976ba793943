import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.js';
import type { Tables } from './tables.js';

/**
 * Rows one housekeeping statement may delete: a sweep over years of backlog is many short statements,
 * each holding its row locks and writing its WAL briefly, never one long transaction.
 */
export const SWEEP_BATCH_SIZE = 5_000;

/**
 * Deletes at most `limit` rows of the table that match `where`, and answers how many it deleted. The rows
 * are picked by physical address (ctid), so this works on any table whatever its key; `where` is checked
 * again on delete, so a row changed since it was picked is left alone.
 */
export async function deleteBatch(db: Db, table: keyof Tables, where: RawBuilder<boolean>, limit = SWEEP_BATCH_SIZE): Promise<number> {
  const result = await sql`
    delete from ${sql.table(table)}
    where ctid = any(array(select ctid from ${sql.table(table)} where ${where} limit ${limit})) and ${where}`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** Runs a batch until one comes back short (nothing left to do); answers the total. */
export async function untilDone(batch: () => Promise<number>, limit = SWEEP_BATCH_SIZE): Promise<number> {
  let total = 0;
  for (;;) {
    const done = await batch();
    total += done;
    if (done < limit) return total;
  }
}

/** Deletes every row of the table that matches `where`, a batch at a time; answers how many. */
export const deleteInBatches = (db: Db, table: keyof Tables, where: RawBuilder<boolean>, limit = SWEEP_BATCH_SIZE) =>
  untilDone(() => deleteBatch(db, table, where, limit), limit);

import { sql } from 'kysely';
import { deleteInBatches } from '../platform/db/batches.js';
import type { Db } from '../platform/db/database.js';

export type CodePurpose = 'verify_email' | 'reset_password';
export const MAX_CODE_ATTEMPTS = 5;

/** One-time codes sent by mail: one live code per user and purpose, stored hashed. */
export function createCodesStore(db: Db) {
  return {
    /** Replaces any earlier code: only the latest request's code works. */
    replace: (environmentId: string, userId: string, purpose: CodePurpose, codeHash: Buffer, expiresAt: Date, now: Date) =>
      db.insertInto('verification_codes').values({
        environment_id: environmentId, user_id: userId, purpose, code_hash: codeHash, attempts: 0, created_at: now, expires_at: expiresAt, used_at: null,
      }).onConflict((oc) => oc.columns(['environment_id', 'user_id', 'purpose']).doUpdateSet({
        code_hash: codeHash, attempts: 0, created_at: now, expires_at: expiresAt, used_at: null,
      })).execute(),
    /** Deletes codes that expired before the cut-off (used or not): they can never work again. */
    deleteExpired: (before: Date) => deleteInBatches(db, 'verification_codes', sql<boolean>`expires_at < ${before}::timestamptz`),
    /**
     * One statement decides: a matching live code is used up (so it works once, even concurrently);
     * a wrong one counts an attempt, and the fifth wrong attempt burns the code.
     */
    consume: (environmentId: string, userId: string, purpose: CodePurpose, codeHash: Buffer, now: Date) =>
      sql<{ ok: boolean }>`
        update verification_codes set
          used_at = case when code_hash = ${codeHash} then ${now}::timestamptz end,
          attempts = attempts + case when code_hash = ${codeHash} then 0 else 1 end
        where environment_id = ${environmentId} and user_id = ${userId} and purpose = ${purpose}
          and used_at is null and expires_at > ${now} and attempts < ${MAX_CODE_ATTEMPTS}
        returning used_at is not null as ok`.execute(db).then((r) => r.rows[0]?.ok === true),
  };
}

import { sql, type RawBuilder } from 'kysely';
import { deleteInBatches } from '../platform/db/batches.js';
import { preparedAs, type Db } from '../platform/db/database.js';

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

/** The writes that end a successful password sign-in, each a CTE body from the domain that owns its table. */
export interface SignInFinish {
  /** Clears the account's failure count and returns the user (environment_id, id, status), locking the row. */
  signedIn: RawBuilder<unknown>;
  /** Gives the client's reserved attempt back. */
  released: RawBuilder<unknown>;
  /** Inserts the session for `signed_in` while the user is active. */
  session: RawBuilder<unknown>;
  /** The trail's `user.signed_in` CTEs, recorded once per row of `session`. */
  event: RawBuilder<unknown>;
}

/**
 * Ends a sign-in in ONE statement (one round trip, one commit): the account's count cleared, the
 * client's attempt given back, the session started and the sign-in recorded (PostgreSQL runs every
 * data-modifying CTE, read or not). The session's row, or
 * undefined when the user was banned or deleted since the password was checked (then nothing but the
 * two counters changed).
 */
export const finishSignIn = async <Row>(db: Db, writes: SignInFinish): Promise<Row | undefined> => {
  const { rows } = await sql<Row>`${preparedAs('sign_in_finish')}
    with signed_in as (${writes.signedIn}), released as (${writes.released}), session as (${writes.session}), ${writes.event}
    select * from session`.execute(db);
  return rows[0];
};

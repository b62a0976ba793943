import { sql, type Selectable } from 'kysely';
import type { Db } from '../platform/db/database.js';
import type { MfaFactorRow } from '../platform/db/tables.js';
import type { Factor } from './schemas.js';

/** Second factors and backup codes of users; secrets arrive sealed and leave sealed. */
export function createFactorsStore(db: Db) {
  const factorsOf = (environmentId: string, userId: string) =>
    db.selectFrom('mfa_factors').where('environment_id', '=', environmentId).where('user_id', '=', userId);
  const backupCodesOf = (environmentId: string, userId: string) =>
    db.selectFrom('mfa_backup_codes').where('environment_id', '=', environmentId).where('user_id', '=', userId);
  return {
    /** A new pending TOTP factor; the user's earlier pending ones go (only the latest QR code works). */
    async insertPending(environmentId: string, factor: { id: string; userId: string; name: string; secretSealed: Buffer }, now: Date) {
      await db.deleteFrom('mfa_factors').where('environment_id', '=', environmentId).where('user_id', '=', factor.userId).where('confirmed_at', 'is', null).execute();
      await db.insertInto('mfa_factors').values({
        environment_id: environmentId, id: factor.id, user_id: factor.userId, type: 'totp', name: factor.name, secret_sealed: factor.secretSealed, created_at: now,
      }).execute();
    },
    hasConfirmedTotp: (environmentId: string, userId: string) =>
      factorsOf(environmentId, userId).select('id').where('confirmed_at', 'is not', null).executeTakeFirst().then((row) => row !== undefined),
    findPending: (environmentId: string, userId: string, factorId: string) =>
      factorsOf(environmentId, userId).selectAll().where('id', '=', factorId).where('confirmed_at', 'is', null).executeTakeFirst(),
    listConfirmed: (environmentId: string, userId: string) =>
      factorsOf(environmentId, userId).selectAll().where('confirmed_at', 'is not', null).orderBy('id').execute(),
    /**
     * Accepts a TOTP time step for the factor, once: only a step later than the last one accepted matches,
     * so a code seen by someone else (shoulder, replay) never works a second time. `confirm` also confirms a pending factor.
     */
    acceptStep: (environmentId: string, factorId: string, step: number, now: Date, confirm = false) =>
      db.updateTable('mfa_factors').set({ last_used_step: step, last_used_at: now, ...(confirm && { confirmed_at: now }) })
        .where('environment_id', '=', environmentId).where('id', '=', factorId)
        .where(confirm ? sql<boolean>`confirmed_at is null` : sql<boolean>`confirmed_at is not null`)
        .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
        .returning('id').executeTakeFirst().then((row) => row !== undefined),
    deleteFactor: (environmentId: string, userId: string, factorId: string) =>
      db.deleteFrom('mfa_factors').where('environment_id', '=', environmentId).where('user_id', '=', userId).where('id', '=', factorId)
        .returning('confirmed_at').executeTakeFirst(),
    /** Every factor and backup code of the user; answers how many confirmed factors went. */
    async deleteAll(environmentId: string, userId: string) {
      await db.deleteFrom('mfa_backup_codes').where('environment_id', '=', environmentId).where('user_id', '=', userId).execute();
      const removed = await db.deleteFrom('mfa_factors').where('environment_id', '=', environmentId).where('user_id', '=', userId)
        .returning('confirmed_at').execute();
      return removed.filter((row) => row.confirmed_at !== null).length;
    },
    /** The user's backup codes become these (hashes); the old ones, used or not, are void. */
    async replaceBackupCodes(environmentId: string, userId: string, hashes: Buffer[], now: Date) {
      await db.deleteFrom('mfa_backup_codes').where('environment_id', '=', environmentId).where('user_id', '=', userId).execute();
      await db.insertInto('mfa_backup_codes')
        .values(hashes.map((codeHash) => ({ environment_id: environmentId, user_id: userId, code_hash: codeHash, created_at: now }))).execute();
    },
    deleteBackupCodes: (environmentId: string, userId: string) =>
      db.deleteFrom('mfa_backup_codes').where('environment_id', '=', environmentId).where('user_id', '=', userId).execute(),
    /** Uses up an unused backup code: one statement, so a code works once even when sent twice at once. */
    consumeBackupCode: (environmentId: string, userId: string, codeHash: Buffer, now: Date) =>
      db.updateTable('mfa_backup_codes').set({ used_at: now })
        .where('environment_id', '=', environmentId).where('user_id', '=', userId).where('code_hash', '=', codeHash).where('used_at', 'is', null)
        .returning('code_hash').executeTakeFirst().then((row) => row !== undefined),
    remainingBackupCodes: (environmentId: string, userId: string) =>
      backupCodesOf(environmentId, userId).select((eb) => eb.fn.countAll<string>().as('n')).where('used_at', 'is', null)
        .executeTakeFirstOrThrow().then((row) => Number(row.n)),
  };
}

export const toFactor = (row: Selectable<MfaFactorRow>): Factor => ({
  id: row.id, type: 'totp', name: row.name, createdAt: row.created_at.toISOString(), lastUsedAt: row.last_used_at?.toISOString() ?? null,
});

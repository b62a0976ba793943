import { uuidv7 } from 'uuidv7';
import type { Db } from '../platform/db/database.js';

/** The one-time links that set an operator's first password. */
export function createPasswordTokensStore(db: Db) {
  return {
    insert: (environmentId: string, userId: string, tokenHash: Buffer, now: Date, expiresAt: Date) =>
      db.insertInto('operator_password_tokens').values({ environment_id: environmentId, id: uuidv7(), user_id: userId, token_hash: tokenHash, created_at: now, expires_at: expiresAt })
        .execute(),
    /** The operator of a live token; undefined when unknown, used or expired. */
    findLive: (environmentId: string, tokenHash: Buffer, now: Date) =>
      db.selectFrom('operator_password_tokens').select('user_id').where('environment_id', '=', environmentId).where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst().then((row) => row?.user_id),
    /** Uses a live token up: of two uses at once, one finds it live. Every other token of the operator goes with it. */
    async use(environmentId: string, tokenHash: Buffer, now: Date) {
      const used = await db.updateTable('operator_password_tokens').set({ used_at: now })
        .where('environment_id', '=', environmentId).where('token_hash', '=', tokenHash).where('used_at', 'is', null).where('expires_at', '>', now)
        .returning('user_id').executeTakeFirst();
      if (used) {
        await db.updateTable('operator_password_tokens').set({ used_at: now })
          .where('environment_id', '=', environmentId).where('user_id', '=', used.user_id).where('used_at', 'is', null).execute();
      }
      return used?.user_id;
    },
  };
}

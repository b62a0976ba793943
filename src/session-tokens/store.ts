import { sql, type Selectable } from 'kysely';
import type { Db } from '../platform/db/database.js';
import { jsonb } from '../platform/db/database.js';
import type { SigningKeyRow } from '../platform/db/tables.js';
import type { JsonObject } from '../platform/json.js';

export interface NewSigningKey { id: string; publicJwk: JsonObject; privateKeySealed: Buffer }
export type SigningKeyRecord = Selectable<SigningKeyRow>;

/** Not revoked, and signing or still within the time its tokens may live. */
const published = (now: Date) => sql<boolean>`revoked_at is null and (retired_at is null or published_until > ${now})`;

export function createSigningKeysStore(db: Db) {
  // The signing key first, then the newest.
  const keys = (environmentId: string) => db.selectFrom('signing_keys').selectAll().where('environment_id', '=', environmentId)
    .orderBy(sql`retired_at is null and revoked_at is null`, 'desc').orderBy('created_at', 'desc').orderBy('id', 'desc');
  return {
    /** The environment's signing key, unless another process made one first (then undefined). */
    insertActive: (environmentId: string, key: NewSigningKey, now: Date) =>
      sql<SigningKeyRecord>`
        insert into signing_keys (environment_id, id, public_jwk, private_key_sealed, created_at)
        values (${environmentId}::uuid, ${key.id}::uuid, ${jsonb(key.publicJwk)}::jsonb, ${key.privateKeySealed}, ${now}::timestamptz)
        on conflict (environment_id) where retired_at is null and revoked_at is null do nothing
        returning *`.execute(db).then((r) => r.rows[0]),
    /** The signing key first, then the keys still published (rotated out, their tokens not all expired). */
    listPublished: (environmentId: string, now: Date) =>
      keys(environmentId).where(published(now)).execute(),
    listAll: (environmentId: string) => keys(environmentId).execute(),
    /** Stops the signing key from signing; it stays published until `publishedUntil`. */
    retireActive: (environmentId: string, now: Date, publishedUntil: Date) =>
      db.updateTable('signing_keys').set({ retired_at: now, published_until: publishedUntil })
        .where('environment_id', '=', environmentId).where('retired_at', 'is', null).where('revoked_at', 'is', null)
        .returningAll().executeTakeFirst(),
    /** Takes a key out at once; undefined when there is no such key or it was revoked already. */
    revoke: (environmentId: string, id: string, now: Date) =>
      db.updateTable('signing_keys').set({ revoked_at: now })
        .where('environment_id', '=', environmentId).where('id', '=', id).where('revoked_at', 'is', null)
        .returningAll().executeTakeFirst(),
    find: (environmentId: string, id: string) => keys(environmentId).where('id', '=', id).executeTakeFirst(),
    /** Across environments (for the start-up check of the encryption key): the signing key made last, if any. */
    findNewestSigning: () =>
      db.selectFrom('signing_keys').selectAll().where('retired_at', 'is', null).where('revoked_at', 'is', null)
        .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst(),
  };
}

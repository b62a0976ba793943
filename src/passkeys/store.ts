import { sql, type Selectable } from 'kysely';
import { deleteInBatches } from '../platform/db/batches.js';
import type { Db } from '../platform/db/database.js';
import type { PasskeyChallengeRow, PasskeyRow } from '../platform/db/tables.js';
import type { Passkey } from './schemas.js';

export type ChallengePurpose = PasskeyChallengeRow['purpose'];

export interface NewPasskey {
  id: string; userId: string; credentialId: string; publicKey: Buffer; counter: number; transports: string[];
  deviceType: PasskeyRow['device_type']; backedUp: boolean; aaguid: string; rpId: string; name: string;
}

/** Users' passkeys: public keys and the authenticator's counter and backup flags, never a secret. */
export function createPasskeysStore(db: Db) {
  const ofUser = (environmentId: string, userId: string) =>
    db.selectFrom('passkeys').where('environment_id', '=', environmentId).where('user_id', '=', userId);
  return {
    /** The new passkey, or undefined when the environment has this credential already (registered twice). */
    insert: (environmentId: string, passkey: NewPasskey, now: Date) =>
      db.insertInto('passkeys').values({
        environment_id: environmentId, id: passkey.id, user_id: passkey.userId, credential_id: passkey.credentialId, public_key: passkey.publicKey,
        counter: passkey.counter, transports: passkey.transports, device_type: passkey.deviceType, backed_up: passkey.backedUp,
        aaguid: passkey.aaguid, rp_id: passkey.rpId, name: passkey.name, created_at: now,
      }).onConflict((oc) => oc.columns(['environment_id', 'credential_id']).doNothing())
        .returningAll().executeTakeFirst(),
    listForUser: (environmentId: string, userId: string) => ofUser(environmentId, userId).selectAll().orderBy('id').execute(),
    countForUser: (environmentId: string, userId: string) =>
      ofUser(environmentId, userId).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((row) => Number(row.n)),
    findByCredentialId: (environmentId: string, credentialId: string) =>
      db.selectFrom('passkeys').selectAll().where('environment_id', '=', environmentId).where('credential_id', '=', credentialId).executeTakeFirst(),
    rename: (environmentId: string, userId: string, passkeyId: string, name: string) =>
      db.updateTable('passkeys').set({ name })
        .where('environment_id', '=', environmentId).where('user_id', '=', userId).where('id', '=', passkeyId)
        .returningAll().executeTakeFirst(),
    /** Every passkey of the user (an erasure); answers how many went. */
    deleteAllOf: (environmentId: string, userId: string) =>
      db.deleteFrom('passkeys').where('environment_id', '=', environmentId).where('user_id', '=', userId)
        .executeTakeFirst().then((r) => Number(r.numDeletedRows)),
    delete: (environmentId: string, userId: string, passkeyId: string) =>
      db.deleteFrom('passkeys').where('environment_id', '=', environmentId).where('user_id', '=', userId).where('id', '=', passkeyId)
        .returning('id').executeTakeFirst(),
    /**
     * Records a verified use. The counter moves only forward (or stays 0, for authenticators that keep
     * none), in the statement itself: of two assertions carrying the same counter, only one passes.
     */
    recordUse: (environmentId: string, passkeyId: string, counter: number, backedUp: boolean, now: Date) =>
      db.updateTable('passkeys').set({ counter, backed_up: backedUp, last_used_at: now })
        .where('environment_id', '=', environmentId).where('id', '=', passkeyId)
        .where(sql<boolean>`(counter < ${counter} or (counter = 0 and ${counter}::bigint = 0))`)
        .returningAll().executeTakeFirst(),
  };
}

export interface NewChallenge { challengeHash: Buffer; purpose: ChallengePurpose; userId: string | null; restricted: boolean; expiresAt: Date }

/**
 * The challenges of WebAuthn ceremonies, stored hashed, bound to the environment, used once: a
 * registration's when it is issued; a sign-in's (signed, see sign-in-challenges.ts) only once it is used.
 */
export function createPasskeyChallengesStore(db: Db) {
  return {
    insert: (environmentId: string, challenge: NewChallenge, now: Date) =>
      db.insertInto('passkey_challenges').values({
        environment_id: environmentId, challenge_hash: challenge.challengeHash, purpose: challenge.purpose, user_id: challenge.userId,
        restricted: challenge.restricted, created_at: now, expires_at: challenge.expiresAt,
      }).execute(),
    /**
     * Marks a signed sign-in challenge used (kept until housekeeping, a day after it expires); undefined when
     * it was already: of two sign-ins with one challenge, one inserts the mark.
     */
    insertUsed: (environmentId: string, challengeHash: Buffer, expiresAt: Date, now: Date) =>
      db.insertInto('passkey_challenges').values({
        environment_id: environmentId, challenge_hash: challengeHash, purpose: 'authentication', user_id: null,
        restricted: false, created_at: now, expires_at: expiresAt, used_at: now,
      }).onConflict((oc) => oc.columns(['environment_id', 'challenge_hash']).doNothing())
        .returning('challenge_hash').executeTakeFirst(),
    /** Uses a live challenge up in one statement: it answers one ceremony even when sent twice at once. */
    consume: (environmentId: string, challengeHash: Buffer, purpose: ChallengePurpose, now: Date) =>
      db.updateTable('passkey_challenges').set({ used_at: now })
        .where('environment_id', '=', environmentId).where('challenge_hash', '=', challengeHash).where('purpose', '=', purpose)
        .where('used_at', 'is', null).where('expires_at', '>', now)
        .returning(['user_id', 'restricted']).executeTakeFirst(),
    deleteExpired: (before: Date) => deleteInBatches(db, 'passkey_challenges', sql<boolean>`expires_at < ${before}::timestamptz`),
  };
}

export const toPasskey = (row: Selectable<PasskeyRow>): Passkey => ({
  id: row.id, name: row.name, createdAt: row.created_at.toISOString(), lastUsedAt: row.last_used_at?.toISOString() ?? null,
  deviceType: row.device_type, backedUp: row.backed_up,
});

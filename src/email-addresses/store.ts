import { sql, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { isUniqueViolation, type Db } from '../platform/db/database.js';
import type { Cte } from '../platform/db/cte.js';
import type { EmailAddressRow } from '../platform/db/tables.js';
import type { EmailAddress } from './schemas.js';

// A verified address, or a primary one, of a live user: the address is that user's alone.
const CLAIMED_KEY = 'email_addresses_claimed_key';
// The same user has the address already.
const USER_EMAIL_KEY = 'email_addresses_user_email_key';
export const MAX_CODE_ATTEMPTS = 5;

export interface NewAddress { id: string; userId: string; email: string; codeHash: Buffer; codeExpiresAt: Date }
/** What the user row says the primary is (users.email and users.email_verified_at). */
export interface PrimaryCopy { id: string; email: string | null; emailVerifiedAt: string | null }

/**
 * A new user's primary address as a CTE body: one row for each row of `user` (the user's insert) that has an
 * email, verified as the user's email is. Another live user claiming the email is the claimed key's
 * violation (`isClaimedElsewhere`).
 */
export const insertPrimaryAfter = (user: Cte<NewUserCopy>, now: Date) => sql<{ id: string }>`
  insert into email_addresses (environment_id, id, user_id, email, is_primary, verified_at, created_at)
  select u.environment_id, ${uuidv7()}::uuid, u.id, u.email, true, u.email_verified_at, ${now}::timestamptz
  from ${user.from} u where u.email is not null
  returning id`;

/** What a new user's row gives its primary address. */
export interface NewUserCopy { environment_id: string; id: string; email: string | null; email_verified_at: Date | null }

/** Whether an error is the claimed key's violation: another live user has the email verified, or as its primary. */
export const isClaimedElsewhere = (err: unknown) => isUniqueViolation(err, CLAIMED_KEY);

/** A user's email addresses: SQL only; the rules are in service.ts and primary.ts. */
export function createEmailAddressesStore(db: Db) {
  const ofUser = (environmentId: string, userId: string) =>
    db.selectFrom('email_addresses').selectAll().where('environment_id', '=', environmentId).where('user_id', '=', userId);
  const updateOne = (environmentId: string, userId: string, id: string) =>
    db.updateTable('email_addresses').where('environment_id', '=', environmentId).where('user_id', '=', userId).where('id', '=', id);

  return {
    /** The primary first, then the others in the order they were added. */
    list: (environmentId: string, userId: string) =>
      ofUser(environmentId, userId).orderBy('is_primary', 'desc').orderBy('created_at').orderBy('id').execute().then((rows) => rows.map(toEmailAddress)),
    find: (environmentId: string, userId: string, id: string) =>
      ofUser(environmentId, userId).where('id', '=', id).executeTakeFirst().then((row) => row && toEmailAddress(row)),
    count: (environmentId: string, userId: string) =>
      db.selectFrom('email_addresses').select((eb) => eb.fn.countAll<string>().as('n'))
        .where('environment_id', '=', environmentId).where('user_id', '=', userId)
        .executeTakeFirstOrThrow().then((row) => Number(row.n)),
    /** Whether another live user has verified this address (an unverified claim elsewhere does not count). */
    verifiedByAnother: (environmentId: string, userId: string, email: string) =>
      db.selectFrom('email_addresses').select('id').where('environment_id', '=', environmentId).where('email', '=', email)
        .where('verified_at', 'is not', null).where('released_at', 'is', null).where('user_id', '!=', userId)
        .executeTakeFirst().then((row) => row !== undefined),
    /** A new unverified secondary address with its code; 'taken' when the user has it already. */
    async insert(environmentId: string, address: NewAddress, now: Date): Promise<EmailAddress | 'taken'> {
      try {
        const row = await db.insertInto('email_addresses').values({
          environment_id: environmentId, id: address.id, user_id: address.userId, email: address.email, is_primary: false,
          verified_at: null, released_at: null, code_hash: address.codeHash, code_expires_at: address.codeExpiresAt, code_attempts: 0, created_at: now,
        }).returningAll().executeTakeFirstOrThrow();
        return toEmailAddress(row);
      } catch (err) {
        if (isUniqueViolation(err, USER_EMAIL_KEY)) return 'taken';
        throw err;
      }
    },
    /**
     * One statement decides, as for the sign-up codes: the right live code verifies the address and is
     * used up (so it works once, even concurrently); a wrong one counts a try, and the fifth burns the
     * code. 'email_taken' when another live user verified the address first.
     */
    async verifyWithCode(environmentId: string, userId: string, id: string, codeHash: Buffer, now: Date): Promise<EmailAddress | 'wrong' | 'email_taken'> {
      const right = sql<boolean>`code_hash = ${codeHash}`;
      try {
        const row = await updateOne(environmentId, userId, id)
          .where('verified_at', 'is', null).where('released_at', 'is', null).where('code_expires_at', '>', now).where('code_attempts', '<', MAX_CODE_ATTEMPTS)
          .set({
            verified_at: sql`case when ${right} then ${now}::timestamptz end`,
            code_attempts: sql`code_attempts + case when ${right} then 0 else 1 end`,
            code_hash: sql`case when ${right} then null else code_hash end`,
          }).returningAll().executeTakeFirst();
        return row?.verified_at ? toEmailAddress(row) : 'wrong';
      } catch (err) {
        if (isUniqueViolation(err, CLAIMED_KEY)) return 'email_taken';
        throw err;
      }
    },
    /**
     * Moves the primary to this address. Two statements: a non-deferrable unique index is checked row by
     * row, so one update setting both rows could see two primaries for a moment and fail.
     */
    async makePrimary(environmentId: string, userId: string, id: string) {
      await db.updateTable('email_addresses').set({ is_primary: false })
        .where('environment_id', '=', environmentId).where('user_id', '=', userId).where('is_primary', '=', true).execute();
      const row = await updateOne(environmentId, userId, id).set({ is_primary: true }).returningAll().executeTakeFirstOrThrow();
      return { address: toEmailAddress(row), verifiedAt: row.verified_at };
    },
    /** Deletes a secondary address; undefined for the primary or a missing one. */
    deleteSecondary: (environmentId: string, userId: string, id: string) =>
      db.deleteFrom('email_addresses').where('environment_id', '=', environmentId).where('user_id', '=', userId).where('id', '=', id)
        .where('is_primary', '=', false).returning('id').executeTakeFirst(),
    /**
     * Makes the primary address say what the user row says (its email and whether it is verified): the
     * row's email updated in place, or inserted for a user that had none. A secondary address with the
     * new email is absorbed into the primary. 'email_taken' when another live user holds the email.
     */
    async mirrorPrimary(environmentId: string, user: PrimaryCopy & { email: string }, now: Date): Promise<'email_taken' | undefined> {
      await db.deleteFrom('email_addresses').where('environment_id', '=', environmentId)
        .where('user_id', '=', user.id).where('email', '=', user.email).where('is_primary', '=', false).execute();
      try {
        await sql`
          insert into email_addresses (environment_id, id, user_id, email, is_primary, verified_at, created_at)
          values (${environmentId}::uuid, ${uuidv7()}::uuid, ${user.id}::uuid, ${user.email}, true, ${user.emailVerifiedAt}::timestamptz, ${now}::timestamptz)
          on conflict (environment_id, user_id) where is_primary do update
            set email = excluded.email, verified_at = excluded.verified_at, code_hash = null, code_expires_at = null
            where (email_addresses.email, email_addresses.verified_at) is distinct from (excluded.email, excluded.verified_at)`.execute(db);
        return undefined;
      } catch (err) {
        if (isUniqueViolation(err, CLAIMED_KEY)) return 'email_taken';
        throw err;
      }
    },
    /**
     * Erasure: the emails of the user's addresses that no other user holds (a deleted user's address may have
     * been taken since). The condition is the claimed key's, so its partial index answers it.
     */
    listUnclaimedEmails: (environmentId: string, userId: string) =>
      db.selectFrom('email_addresses as a').select('a.email').where('a.environment_id', '=', environmentId).where('a.user_id', '=', userId)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('email_addresses as b').select('b.id')
          .whereRef('b.environment_id', '=', 'a.environment_id').whereRef('b.email', '=', 'a.email').whereRef('b.user_id', '!=', 'a.user_id')
          .where((eb) => eb.or([eb('b.verified_at', 'is not', null), eb('b.is_primary', '=', true)])).where('b.released_at', 'is', null))))
        .execute().then((rows) => rows.map((row) => row.email)),
    /** Erasure: every address of the user, primary included. */
    deleteAllForUser: (environmentId: string, userId: string) =>
      db.deleteFrom('email_addresses').where('environment_id', '=', environmentId).where('user_id', '=', userId)
        .executeTakeFirst().then((r) => Number(r.numDeletedRows)),
    /** A deleted user's addresses stop holding their emails. */
    release: (environmentId: string, userId: string, now: Date) =>
      db.updateTable('email_addresses').set({ released_at: now })
        .where('environment_id', '=', environmentId).where('user_id', '=', userId).where('released_at', 'is', null).execute(),
  };
}
export type EmailAddressesStore = ReturnType<typeof createEmailAddressesStore>;

export const toEmailAddress = (row: Selectable<EmailAddressRow>): EmailAddress => ({
  id: row.id,
  email: row.email,
  verified: row.verified_at !== null,
  primary: row.is_primary,
  createdAt: row.created_at.toISOString(),
});

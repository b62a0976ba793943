import { sql, type RawBuilder, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import type { Db } from '../platform/db/database.js';
import { containsPattern, isUniqueViolation, jsonb, preparedAs } from '../platform/db/database.js';
import type { Cte } from '../platform/db/cte.js';
import type { UserLock, UserRow } from '../platform/db/tables.js';
import type { PageQuery } from '../platform/http/common-schemas.js';
import { toPage } from '../platform/http/pagination.js';
import type { JsonObject } from '../platform/json.js';
import type { User, UserFilter, UserStatus } from './schemas.js';

export interface NewUser {
  /** Chosen by the caller when it must reference the user before the insert (invitation acceptance). */
  id?: string;
  email: string | null; passwordHash: string | null; name: string | null; firstName: string | null; lastName: string | null;
  registrationState: User['registrationState']; emailVerifiedAt: Date | null;
  /** The language chosen at sign-up (the hosted page's); null unless set. */
  locale?: string | null;
  publicMetadata: JsonObject; privateMetadata: JsonObject; unsafeMetadata: JsonObject;
}

export interface ProfileChanges {
  email?: string; passwordHash?: string; name?: string | null; firstName?: string | null; lastName?: string | null; locale?: string | null;
  unsafeMetadata?: JsonObject;
}

export interface Lockout { maxFailedAttempts: number; coolDownSeconds: number }

export interface Credentials { user: User; passwordHash: string | null }

const EMAIL_KEY = 'users_email_key';
// No sign-in attempt stays in flight longer than this (the hash takes milliseconds).
const ATTEMPT_IN_FLIGHT_MS = 60_000;

/**
 * A new user as a CTE body (`returning *`), for a statement that writes what commits with it (its
 * primary address, its audit event) in the same round trip. The caller maps a unique violation with
 * `isUserEmailTaken`. Only parameters vary, so the statement may be prepared.
 */
export const insertUserStatement = (environmentId: string, id: string, user: NewUser, now: Date) => sql<Selectable<UserRow>>`
  insert into users (environment_id, id, email, email_verified_at, password_hash, name, first_name, last_name, status, registration_state,
    locale, public_metadata, private_metadata, unsafe_metadata, created_at, updated_at)
  values (${environmentId}::uuid, ${id}::uuid, ${user.email}::text, ${user.emailVerifiedAt}::timestamptz, ${user.passwordHash}::text, ${user.name}::text,
    ${user.firstName}::text, ${user.lastName}::text, 'active', ${user.registrationState}::text, ${user.locale ?? null}::text,
    ${jsonb(user.publicMetadata)}::jsonb, ${jsonb(user.privateMetadata)}::jsonb, ${jsonb(user.unsafeMetadata)}::jsonb, ${now}::timestamptz, ${now}::timestamptz)
  returning *`;

/** Whether an error is the users_email_key violation: another live user of the environment has the email. */
export const isUserEmailTaken = (err: unknown) => isUniqueViolation(err, EMAIL_KEY);

export function createUsersStore(db: Db) {
  const rowById = (environmentId: string, userId: string) =>
    db.selectFrom('users').selectAll().where('environment_id', '=', environmentId).where('id', '=', userId);
  const liveRowByEmail = (environmentId: string, email: string) =>
    db.selectFrom('users').selectAll().where('environment_id', '=', environmentId).where('email', '=', email).where('status', '!=', 'deleted');
  const liveRowBySignInEmail = (environmentId: string, email: string) =>
    db.selectFrom('users').selectAll().where('environment_id', '=', environmentId).where(signsIn(environmentId, email)).where('status', '!=', 'deleted');
  const byId = (environmentId: string, userId: string) =>
    db.updateTable('users').where('environment_id', '=', environmentId).where('id', '=', userId);

  return {
    /** 'email_taken' when another live user of the environment has the email. */
    async insert(environmentId: string, user: NewUser, now: Date): Promise<User | 'email_taken'> {
      try {
        const row = await db.insertInto('users').values({
          environment_id: environmentId, id: user.id ?? uuidv7(), email: user.email, email_verified_at: user.emailVerifiedAt,
          password_hash: user.passwordHash, name: user.name, first_name: user.firstName, last_name: user.lastName,
          status: 'active', registration_state: user.registrationState, locale: user.locale ?? null,
          public_metadata: jsonb(user.publicMetadata), private_metadata: jsonb(user.privateMetadata), unsafe_metadata: jsonb(user.unsafeMetadata),
          created_at: now, updated_at: now,
        }).returningAll().executeTakeFirstOrThrow();
        return toUser(row);
      } catch (err) {
        if (isUniqueViolation(err, EMAIL_KEY)) return 'email_taken';
        throw err;
      }
    },
    /** The Server API's hottest read: a prepared statement, parsed and planned once per connection. */
    find: (environmentId: string, userId: string) =>
      sql<Selectable<UserRow>>`${preparedAs('user_by_id')} select * from users where environment_id = ${environmentId}::uuid and id = ${userId}::uuid`
        .execute(db).then(({ rows: [row] }) => row && toUser(row)),
    /** Which of these ids (valid uuids) are users of the environment, deleted ones included. */
    findExistingIds: (environmentId: string, ids: string[]) =>
      db.selectFrom('users').select('id').where('environment_id', '=', environmentId).where('id', 'in', ids)
        .execute().then((rows) => new Set(rows.map((r) => r.id))),
    /** The row locked until the transaction ends, for read-merge-write of metadata. */
    findForUpdate: (environmentId: string, userId: string) =>
      rowById(environmentId, userId).forUpdate().executeTakeFirst().then((row) => row && toUser(row)),
    findCredentialsById: (environmentId: string, userId: string) =>
      rowById(environmentId, userId).executeTakeFirst().then(toCredentials),
    /** A new password for an active user; the sign-in lockout goes with the old one. */
    setPassword: (environmentId: string, userId: string, passwordHash: string, now: Date) =>
      byId(environmentId, userId).where('status', '=', 'active').set({ password_hash: passwordHash, failed_sign_ins: 0, locked_until: null, updated_at: now })
        .returningAll().executeTakeFirst().then((row) => row && toUser(row)),
    /** The user with whether it has a password, locked until the transaction ends (an identity unlinked). */
    lockCredentials: (environmentId: string, userId: string) =>
      rowById(environmentId, userId).forUpdate().executeTakeFirst().then(toCredentials),
    /** The live user with this email, locked until the transaction ends (an external identity linked to it). */
    lockLiveByEmail: (environmentId: string, email: string) =>
      liveRowByEmail(environmentId, email).forUpdate().executeTakeFirst().then((row) => row && toUser(row)),
    /**
     * An external provider vouched for the email of a user that had never proven it: the email is verified,
     * a pending registration completed, and the password, which nobody proved belongs to the email's
     * owner (someone may have signed up with another's address first), is removed.
     */
    proveEmailDroppingPassword: (environmentId: string, userId: string, now: Date) =>
      byId(environmentId, userId).where('status', '=', 'active').set({
        email_verified_at: now, registration_state: 'complete', password_hash: null, failed_sign_ins: 0, locked_until: null, updated_at: now,
      }).returningAll().executeTakeFirst().then((row) => row && toUser(row)),
    /** The live (not deleted) user this email signs in (its primary, or a verified secondary address), with what sign-in needs. */
    findCredentials: (environmentId: string, email: string) =>
      liveRowBySignInEmail(environmentId, email).executeTakeFirst().then(toCredentials),
    async list(environmentId: string, filter: UserFilter, page: PageQuery) {
      const matching = (statuses = filter.statuses) => {
        let query = db.selectFrom('users').selectAll().where('environment_id', '=', environmentId);
        if (filter.emailSearch) query = query.where(emailContains(filter.emailSearch));
        if (filter.nameSearch) query = query.where(nameContains(filter.nameSearch));
        if (statuses?.length) query = query.where('status', 'in', statuses);
        if (filter.publicMetadata) query = query.where(sql<boolean>`public_metadata @> ${jsonb(filter.publicMetadata)}::jsonb`);
        if (filter.privateMetadata) query = query.where(sql<boolean>`private_metadata @> ${jsonb(filter.privateMetadata)}::jsonb`);
        // A deep page should cost what page 1 costs. Told where the cursor stands, the planner ANDs a bitmap of
        // every user after it (100,000 at 90% of 1M) with the filter's index bitmap, which it prices far below
        // the 10 to 35 ms that takes, rather than walking on from the cursor as page 1 walks from the start.
        // As a subquery the cursor still starts the walk, but its position is unknown at planning time.
        if (page.cursor) query = query.where('id', '>', sql<string>`(select ${page.cursor}::uuid)`);
        return query;
      };
      const size = page.limit + 1;
      if (!byStatusesAlone(filter)) return toPage((await matching().orderBy('id').limit(size).execute()).map(toUser), page.limit);
      // No index gives several statuses in one id order, so the primary key would pass every user of the
      // other statuses. Instead each status's first rows come from (environment_id, status, id), and
      // PostgreSQL merges them (Merge Append): a page's rows, whatever the depth. With another filter too,
      // that filter's index narrows better than a walk per status.
      const firstOfEach = filter.statuses!.map((status) => db.selectFrom(matching([status]).orderBy('id').limit(size).as('one')).selectAll());
      const rows = await db.selectFrom(firstOfEach.reduce((all, one) => all.unionAll(one)).as('users')).selectAll().orderBy('id').limit(size).execute();
      return toPage(rows.map(toUser), page.limit);
    },
    /** Changes profile fields of a user that is not deleted; 'email_taken' on a clash. */
    async updateProfile(environmentId: string, userId: string, changes: ProfileChanges, now: Date): Promise<User | undefined | 'email_taken'> {
      try {
        const row = await byId(environmentId, userId).where('status', '!=', 'deleted').set({
          // An email set by the server counts as verified, which also completes a pending registration.
          ...(changes.email !== undefined && { email: changes.email, email_verified_at: now, registration_state: 'complete' as const }),
          ...(changes.passwordHash !== undefined && { password_hash: changes.passwordHash }),
          ...(changes.name !== undefined && { name: changes.name }),
          ...(changes.firstName !== undefined && { first_name: changes.firstName }),
          ...(changes.lastName !== undefined && { last_name: changes.lastName }),
          ...(changes.locale !== undefined && { locale: changes.locale }),
          ...(changes.unsafeMetadata !== undefined && { unsafe_metadata: jsonb(changes.unsafeMetadata) }),
          updated_at: now,
        }).returningAll().executeTakeFirst();
        return row && toUser(row);
      } catch (err) {
        if (isUniqueViolation(err, EMAIL_KEY)) return 'email_taken';
        throw err;
      }
    },
    /** Moves a user that is not deleted to a new status. */
    setStatus: (environmentId: string, userId: string, status: Exclude<UserStatus, 'deleted'>, now: Date) =>
      byId(environmentId, userId).where('status', '!=', 'deleted').set({ status, updated_at: now })
        .returningAll().executeTakeFirst().then((row) => row && toUser(row)),
    /**
     * The organizations whose only active owner the user is. Every organization the user owns is locked
     * first (the organization lock every membership change takes), so two co-owners banned or deleted at
     * once cannot each count on the other: the second waits, then sees the first gone.
     */
    async lastOwnerOf(environmentId: string, userId: string): Promise<string[]> {
      await sql`select o.id from organizations o join organization_memberships m on m.environment_id = o.environment_id and m.organization_id = o.id
        where m.environment_id = ${environmentId}::uuid and m.user_id = ${userId}::uuid and m.role = 'owner' order by o.id for update of o`.execute(db);
      const { rows } = await sql<{ id: string }>`
        select m.organization_id as id from organization_memberships m
        where m.environment_id = ${environmentId}::uuid and m.user_id = ${userId}::uuid and m.role = 'owner'
          and not exists (select from organization_memberships other join users u on u.environment_id = other.environment_id and u.id = other.user_id
            where other.environment_id = m.environment_id and other.organization_id = m.organization_id and other.role = 'owner'
              and other.user_id <> m.user_id and u.status = 'active')
        order by m.organization_id`.execute(db);
      return rows.map((row) => row.id);
    },
    /** Soft delete: only the first call matches, so a repeat finds nothing. */
    softDelete: (environmentId: string, userId: string, now: Date) =>
      byId(environmentId, userId).where('status', '!=', 'deleted').set({ status: 'deleted', deleted_at: now, updated_at: now })
        .returningAll().executeTakeFirst().then((row) => row && toUser(row)),
    /**
     * Erasure: the row keeps its id and becomes deleted (deleted_at kept when it was deleted before); every
     * field that says who the person was is cleared. Answers the row as it was, undefined when absent.
     */
    erase: (environmentId: string, userId: string, now: Date) =>
      sql<{ status: UserStatus }>`
        update users u set status = 'deleted', deleted_at = coalesce(u.deleted_at, ${now}::timestamptz), updated_at = ${now}::timestamptz,
          email = null, email_verified_at = null, password_hash = null, name = null, first_name = null, last_name = null, locale = null,
          public_metadata = '{}', private_metadata = '{}', unsafe_metadata = '{}',
          failed_sign_ins = 0, locked_until = null, last_sign_in_attempt_at = null
        from (select status from users where environment_id = ${environmentId}::uuid and id = ${userId}::uuid for update) before
        where u.environment_id = ${environmentId}::uuid and u.id = ${userId}::uuid
        returning before.status`.execute(db).then((r) => r.rows[0]),
    setMetadata: (environmentId: string, userId: string, bags: Pick<User, 'publicMetadata' | 'privateMetadata' | 'unsafeMetadata'>, now: Date) =>
      byId(environmentId, userId).set({
        public_metadata: jsonb(bags.publicMetadata), private_metadata: jsonb(bags.privateMetadata),
        unsafe_metadata: jsonb(bags.unsafeMetadata), updated_at: now,
      }).returningAll().executeTakeFirstOrThrow().then(toUser),
    /**
     * A password reset of an active user: the new hash, the sign-in lockout cleared, and a pending
     * registration completed (the mailed code proved control of the email). The email counts as verified
     * only when the code went to it, not to a secondary address. Undefined unless active.
     */
    resetPassword: (environmentId: string, userId: string, passwordHash: string, primaryProven: boolean, now: Date) =>
      byId(environmentId, userId).where('status', '=', 'active').set((eb) => ({
        password_hash: passwordHash, failed_sign_ins: 0, locked_until: null, registration_state: 'complete' as const,
        ...(primaryProven && { email_verified_at: eb.fn.coalesce('email_verified_at', eb.val(now)) }), updated_at: now,
      })).returningAll().executeTakeFirst().then((row) => row && toUser(row)),
    /** The copy of the primary address on the user (it moved); 'email_taken' when another live user has the email. */
    async setEmailCopy(environmentId: string, userId: string, email: string, verifiedAt: Date | null, now: Date): Promise<User | undefined | 'email_taken'> {
      try {
        const row = await byId(environmentId, userId).where('status', '!=', 'deleted').set({ email, email_verified_at: verifiedAt, updated_at: now })
          .returningAll().executeTakeFirst();
        return row && toUser(row);
      } catch (err) {
        if (isUniqueViolation(err, EMAIL_KEY)) return 'email_taken';
        throw err;
      }
    },
    completeRegistration: (environmentId: string, userId: string, now: Date) =>
      byId(environmentId, userId).where('status', '=', 'active').set({
        registration_state: 'complete', email_verified_at: now, updated_at: now,
      }).returningAll().executeTakeFirst().then((row) => row && toUser(row)),
    /**
     * Finds the live account for a sign-in and reserves one attempt in the same statement, so a burst of
     * concurrent guesses gets no more tries than guesses one by one. Nothing comes back while the account
     * is locked or its in-flight attempts already fill the budget (unknown email looks the same).
     */
    /**
     * Counts the attempt against the client's budget (`budget`, a rate-limit hit) and, only when that
     * admits it, reserves one of the account's attempts: both in one statement. `budgetCount` is
     * undefined when the budget refused; `credentials` when no live account could take an attempt.
     * With `countsOnAccount` false the account is only read (its failures are counted elsewhere, per client).
     */
    async reserveSignInAttempt(environmentId: string, email: string, lockout: Lockout, now: Date, budget: RawBuilder<{ count: number }>, refusal: RawBuilder<boolean>, countsOnAccount: boolean) {
      const live = sql`environment_id = ${environmentId}::uuid and ${signsIn(environmentId, email)} and status <> 'deleted'
        and exists (select from budget) and not (select refused from gate)`;
      const account = countsOnAccount
        ? sql`${reserveAttempt(lockout, now)} where ${live} and ${admitsAttempt(lockout, now)} returning *`
        : sql`select * from users where ${live}`;
      const { rows } = await sql<Selectable<UserRow> & { budget_count: number | null; has_second_factor: boolean | null; refused: boolean }>`${preparedAs(countsOnAccount ? 'sign_in_reserve' : 'sign_in_lookup')}
        with budget as (${budget}), gate as (select ${refusal} as refused), account as (${account})
        select account.*, budget.count as budget_count, (select refused from gate) as refused,
          -- Whether a right password must be followed by a second factor, read with the account: no round trip of its own.
          exists (select from mfa_factors f where f.environment_id = account.environment_id and f.user_id = account.id and f.confirmed_at is not null) as has_second_factor
        from (select) one left join budget on true left join account on true`.execute(db);
      const row = rows[0]!;
      const credentials = row.id === null ? undefined : { ...toCredentials(row)!, hasSecondFactor: row.has_second_factor === true };
      return { budgetCount: row.budget_count ?? undefined, credentials, refused: row.refused };
    },
    /**
     * Reserves one of an active account's attempts for a second-factor code, as a sign-in reserves one for
     * a password: wrong codes fill the same lockout budget. Undefined while the account is locked or full.
     */
    reserveAttemptById: (environmentId: string, userId: string, lockout: Lockout, now: Date) =>
      sql<Selectable<UserRow>>`${reserveAttempt(lockout, now)}
        where environment_id = ${environmentId}::uuid and id = ${userId}::uuid and status = 'active' and ${admitsAttempt(lockout, now)}
        returning *`.execute(db).then(({ rows: [row] }) => row && toUser(row)),
    /**
     * A success clears the count; a failure keeps its reserved count, and the one that fills the budget
     * locks the account. Answers whether the account is locked now.
     */
    finishSignInAttempt: (environmentId: string, userId: string, succeeded: boolean, lockout: Lockout, now: Date) =>
      byId(environmentId, userId).set(succeeded ? { failed_sign_ins: 0, locked_until: null } : {
        locked_until: sql`case when failed_sign_ins >= ${lockout.maxFailedAttempts}
          then ${new Date(now.getTime() + lockout.coolDownSeconds * 1000)}::timestamptz else locked_until end`,
        failed_sign_ins: sql`case when failed_sign_ins >= ${lockout.maxFailedAttempts} then 0 else failed_sign_ins end`,
      }).returning(sql<boolean>`coalesce(locked_until > ${now}, false)`.as('locked'))
        .executeTakeFirst().then((row) => row?.locked === true),
  };
}
export type UsersStore = ReturnType<typeof createUsersStore>;

/** The update that counts an attempt against an account; a full count with no recent attempt is left over (a crash, a lowered limit): it starts over. */
const reserveAttempt = (lockout: Lockout, now: Date) => sql`
  update users set
    failed_sign_ins = case when failed_sign_ins >= ${lockout.maxFailedAttempts} then 1 else failed_sign_ins + 1 end,
    last_sign_in_attempt_at = ${now}::timestamptz`;

/** Whether the account takes another attempt: not locked, and its in-flight attempts do not fill the budget. */
const admitsAttempt = (lockout: Lockout, now: Date) => sql<boolean>`
  (locked_until is null or locked_until <= ${now}::timestamptz)
  and (failed_sign_ins < ${lockout.maxFailedAttempts} or last_sign_in_attempt_at is null
       or last_sign_in_attempt_at < ${new Date(now.getTime() - ATTEMPT_IN_FLIGHT_MS)}::timestamptz)`;

/**
 * A second factor's success on the account (its failure count cleared), as a CTE body that locks the
 * user for the session after it.
 */
export const clearFailuresStatement = (environmentId: string, userId: string) => sql<UserLock>`
  update users set failed_sign_ins = 0, locked_until = null
  where environment_id = ${environmentId}::uuid and id = ${userId}::uuid
  returning environment_id, id, status`;

/**
 * A right password's effect on the account (its failure count cleared), as a CTE body that locks the user
 * for the session after it. It runs after `budget` (the client IP's attempt given back): a sign-in's
 * reservation locks the IP's budget row before the account's, and taking them in the other order here
 * deadlocked concurrent sign-ins to one account. The subquery is evaluated once, before the update.
 */
export const signInSucceededStatement = (environmentId: string, userId: string, budget: Cte<unknown>) => sql<UserLock>`
  update users set failed_sign_ins = 0, locked_until = null
  where environment_id = ${environmentId}::uuid and id = ${userId}::uuid
    and (select count(*) from ${budget.from}) >= 0
  returning environment_id, id, status`;

/**
 * The user read FOR SHARE, as a CTE body for the session after it: a ban or delete running at the same
 * moment waits for the sign-in's commit (and then revokes the new session too) or commits first.
 */
export const lockForSignInStatement = (environmentId: string, userId: string) => sql<UserLock>`
  select environment_id, id, status from users
  where environment_id = ${environmentId}::uuid and id = ${userId}::uuid
  for share`;

/**
 * The user an email signs in: its primary (users.email, the hot path through users_email_key) or a verified
 * secondary address, whose owner the claimed-addresses index of 0019 finds in one lookup (at most one live
 * user: the index is unique). The subquery runs once per statement.
 */
const signsIn = (environmentId: string, email: string) => sql<boolean>`(email = ${email} or id = (
  select a.user_id from email_addresses a
  where a.environment_id = ${environmentId}::uuid and a.email = ${email} and a.verified_at is not null and a.released_at is null))`;

const byStatusesAlone = (filter: UserFilter) =>
  (filter.statuses?.length ?? 0) > 1 && !filter.emailSearch && !filter.nameSearch && !filter.publicMetadata && !filter.privateMetadata;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const toCredentials = (row: Selectable<UserRow> | undefined): Credentials | undefined =>
  row && { user: toUser(row), passwordHash: row.password_hash };

export const toUser = (row: Selectable<UserRow>): User => ({
  id: row.id,
  environmentId: row.environment_id,
  name: row.name,
  firstName: row.first_name,
  lastName: row.last_name,
  locale: row.locale as User['locale'],
  status: row.status,
  registrationState: row.registration_state,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  email: row.email,
  emailVerifiedAt: iso(row.email_verified_at),
  deletedAt: iso(row.deleted_at),
  publicMetadata: row.public_metadata,
  privateMetadata: row.private_metadata,
  unsafeMetadata: row.unsafe_metadata,
});

// At most this many words of a search go to the trigram index: enough to narrow it to the matches, few
// enough to plan fast (the planner estimates each against the statistics sample).
const INDEXED_WORDS = 4;

/**
 * A case-insensitive literal substring test on the (lower-cased) email: `%`, `_` and `\` match only
 * themselves. Each word of the search (letters and digits) goes to the trigram index with the separators
 * around it, as a LIKE of its own, and strpos checks the whole search. One LIKE of the whole search is
 * slower: GIN drives it from its single rarest trigram and checks every candidate against all the others,
 * many shared by most emails (" co", "om " around ".com"); finding one address read 6 times the index
 * pages, where separate LIKEs are each narrowed first. The separators stay with their word because pg_trgm
 * marks where words start and end ("acme1." is one domain, "acme1" starts 111). A search that is a single
 * such word needs no strpos, which the planner cannot estimate (it guesses 1 in 3). Without a word long
 * enough for a trigram the index cannot narrow anything, and the search walks the users in id order.
 */
export function emailContains(search: string) {
  return containedIn(sql.ref('email'), search, search.toLowerCase());
}

/**
 * The text a name search reads: the name, first and last name, lower-cased, one per line (a search is one
 * line, so it never matches across two of them). The expression is exactly that of migration 0027's
 * trigram index, which only an identical expression can use.
 */
export const NAME_TEXT = sql.raw<string>(`lower(coalesce(name, '') || E'\\n' || coalesce(first_name, '') || E'\\n' || coalesce(last_name, ''))`);

/** A case-insensitive literal substring test on the name, first name or last name, by the index of 0027, as the email's (above). */
export function nameContains(search: string) {
  // PostgreSQL lower-cases the names, so it lower-cases the whole search too (their rules differ beyond ASCII).
  return containedIn(NAME_TEXT, search, sql<string>`lower(${search})`);
}

/**
 * `text` (an indexed, lower-cased expression) contains `search` literally, ignoring case: see emailContains.
 * `lowered` is the whole search lower-cased as `text` is; the indexed words are ASCII, the same either way.
 */
function containedIn(text: RawBuilder<unknown> | ReturnType<typeof sql.ref>, search: string, lowered: string | RawBuilder<string>) {
  const needle = search.toLowerCase();
  const words = trigramWords(needle).slice(0, INDEXED_WORDS);
  const like = (s: string) => sql<boolean>`${text} like ${containsPattern(s)} escape '\\'`;
  if (words.length === 1 && words[0] === needle) return like(needle);
  return sql<boolean>`${sql.join([...words.map(like), sql`strpos(${text}, ${lowered}) > 0`], sql` and `)}`;
}

/**
 * The words of a lower-cased search, each with the ASCII separator before and after it when there is one,
 * longest first; only those pg_trgm makes a trigram of: it pads a word with two spaces after a separator
 * and one before a separator, and needs three characters.
 */
function trigramWords(needle: string): string[] {
  const separatorAt = (i: number) => (i >= 0 && i < needle.length && needle.charCodeAt(i) < 128 ? 1 : 0);
  const words: { size: number; text: string }[] = [];
  for (const m of needle.matchAll(/[a-z0-9]+/g)) {
    const [start, end] = [m.index, m.index + m[0].length];
    const [before, after] = [separatorAt(start - 1), separatorAt(end)];
    if (m[0].length + 2 * before + after >= 3) words.push({ size: m[0].length, text: needle.slice(start - before, end + after) });
  }
  return words.sort((a, b) => b.size - a.size).map((w) => w.text);
}

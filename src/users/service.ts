import type { RawBuilder } from 'kysely';
import { recordOwnEvent, recordOwnEventAfter } from '../audit/service.js';
import { uuidv7 } from 'uuidv7';
import type { EnvironmentsService } from '../environments/service.js';
import type { EnvironmentSettings } from '../environments/settings.js';
import { userCaller, type Caller, type RequestContext } from '../platform/caller.js';
import { createCache } from '../platform/cache.js';
import type { Clock } from '../platform/clock.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { PageQuery } from '../platform/http/common-schemas.js';
import { canonicalJson, type JsonObject } from '../platform/json.js';
import { assertMetadataBudget, mergeBags } from '../platform/metadata.js';
import type { ListSessionsQuery } from '../sessions/schemas.js';
import { revokeAllSessions, type SessionsService } from '../sessions/service.js';
import { checkedPasswordHash, insertUser, insertUserAlone, joinName, mirrored, normalizeEmail, refuseLastOwner } from './accounts.js';
import { userHook } from './hooks.js';
import { emailRequired, emailTaken, nameRequired, userDeleted, userNotFound } from './errors.js';
import type { CreateUserBody, MetadataPatchBody, UpdateMeBody, UpdateUserBody, User, UserFilter } from './schemas.js';
import { clearFailuresStatement, createUsersStore, lockForSignInStatement, signInSucceededStatement, type ProfileChanges, type UsersStore } from './store.js';

/** The CTE bodies that lock the user a session starts for (`issueSession` in auth): a right password's, a second factor's, or a plain lock. */
export const signInSucceeded = signInSucceededStatement;
export const secondFactorSucceeded = clearFailuresStatement;
export const lockForSignIn = lockForSignInStatement;

export interface RegistrationInput { email: string; password: string; firstName?: string; lastName?: string; name?: string; locale?: string; pending: boolean }

export interface UsersDeps {
  db: Db; clock: Clock;
  environments: Pick<EnvironmentsService, 'record'>;
  sessions: Pick<SessionsService, 'listForUser' | 'revoke'>;
}

const BAGS = ['publicMetadata', 'privateMetadata', 'unsafeMetadata'] as const;
type Bags = Pick<User, (typeof BAGS)[number]>;
const bagsOf = (user: User): Bags => ({ publicMetadata: user.publicMetadata, privateMetadata: user.privateMetadata, unsafeMetadata: user.unsafeMetadata });

/** Per bag that changed, the top-level keys the patch named (never their values); undefined when nothing changed. */
function metadataKeysChanged(before: Bags, after: Bags, patch: Partial<Bags>): Record<string, string[]> | undefined {
  const changed = BAGS.filter((bag) => patch[bag] && canonicalJson(before[bag]) !== canonicalJson(after[bag]));
  return changed.length === 0 ? undefined : Object.fromEntries(changed.map((bag) => [bag, Object.keys(patch[bag]!).sort()]));
}

/**
 * The profile fields a change altered, for the trail (names, never values); a new password always counts.
 * Unsafe metadata is recorded on its own.
 */
const PROFILE_FIELDS = ['email', 'password', 'firstName', 'lastName', 'name', 'locale'] as const;
const changedFields = (before: User, after: User, passwordSet: boolean) =>
  PROFILE_FIELDS.filter((field) => (field === 'password' ? passwordSet : before[field] !== after[field]));

const unlessTaken = <T>(result: T | 'email_taken') => {
  if (result === 'email_taken') throw emailTaken();
  return result;
};

export function createUsersService({ db, clock, environments, sessions }: UsersDeps) {
  const users = createUsersStore(db);
  const knownUsers = createCache<true>(clock, { ttlMs: 10 * 60_000, maxEntries: 100_000 });

  /** The user as it is now; 404 when absent (another environment's user is absent too). */
  async function existing(environmentId: string, userId: string) {
    const user = await users.find(environmentId, userId);
    if (!user) throw userNotFound();
    return user;
  }
  /** The user, unless deleted: every change to a deleted user is 403, revoking its (already revoked) sessions included. */
  async function changeable(environmentId: string, userId: string) {
    const user = await existing(environmentId, userId);
    if (user.status === 'deleted') throw userDeleted();
    return user;
  }
  /** After a conditional update matched nothing: tell "missing" from "deleted". */
  async function explainMiss(environmentId: string, userId: string): Promise<never> {
    const user = await existing(environmentId, userId);
    throw user.status === 'deleted' ? userDeleted() : userNotFound();
  }

  /** Runs a change against the user row as it is under a lock, so concurrent changes never undo each other. */
  function changeLocked<T>(environmentId: string, userId: string, change: (store: UsersStore, current: User, trx: Db) => Promise<T>): Promise<T> {
    return inTransaction(db, async (trx) => {
      const store = createUsersStore(trx);
      const current = await store.findForUpdate(environmentId, userId);
      if (!current) throw userNotFound();
      if (current.status === 'deleted') throw userDeleted();
      return change(store, current, trx);
    });
  }

  /** Records a change to a user in the audit trail, inside the change's transaction (its last statement). */
  const recordUserEvent = (trx: Db, environmentId: string, userId: string, action: string, by: Caller, metadata: JsonObject = {}) =>
    recordOwnEvent(trx, environmentId, { action, ...by, targets: [{ type: 'user', id: userId }], metadata }, clock.now());

  /** Records a metadata change with the top-level keys it touched per bag (never the values); nothing when nothing changed. */
  async function recordMetadataChange(trx: Db, environmentId: string, before: User, after: User, patch: Partial<Bags>, by: Caller) {
    const changedKeys = metadataKeysChanged(bagsOf(before), bagsOf(after), patch);
    if (changedKeys) await recordUserEvent(trx, environmentId, after.id, 'user.metadata_updated', by, { changedKeys });
  }

  /** Deep-merges each given bag into the locked row; the merged bags together must fit the budget. */
  const mergeMetadata = (environmentId: string, userId: string, patch: MetadataPatchBody, by: Caller): Promise<User> =>
    changeLocked(environmentId, userId, async (store, current, trx) => {
      const updated = await store.setMetadata(environmentId, userId, mergeBags(bagsOf(current), patch), clock.now());
      await recordMetadataChange(trx, environmentId, current, updated, patch, by);
      return updated;
    });

  /** The password's hash, checked against the policy and the email the user will have; hashed before any lock is taken. */
  async function newPasswordHash(environmentId: string, userId: string, password: string, newEmail: string | undefined) {
    const [{ settings }, current] = await Promise.all([environments.record(environmentId), changeable(environmentId, userId)]);
    return checkedPasswordHash(password, settings, newEmail ?? current.email);
  }

  return {
    async create(environmentId: string, body: CreateUserBody, by: Caller): Promise<User> {
      const { settings } = await environments.record(environmentId);
      if (settings.requiredFields.includes('email') && !body.email) throw emailRequired();
      if (settings.requiredFields.includes('name') && !(body.firstName && body.lastName)) throw nameRequired();
      const bags = { publicMetadata: body.publicMetadata ?? {}, privateMetadata: body.privateMetadata ?? {}, unsafeMetadata: body.unsafeMetadata ?? {} };
      assertMetadataBudget(bags.publicMetadata, bags.privateMetadata, bags.unsafeMetadata);
      const email = body.email ? normalizeEmail(body.email) : null;
      const passwordHash = body.password === undefined ? null : await checkedPasswordHash(body.password, settings, email);
      const now = clock.now();
      const id = uuidv7();
      const user = {
        id, email, emailVerifiedAt: email ? now : null, registrationState: 'complete' as const, passwordHash,
        firstName: body.firstName ?? null, lastName: body.lastName ?? null, name: joinName(body.firstName, body.lastName), ...bags,
      };
      const metadata = { hasPassword: passwordHash !== null };
      if (email && await userHook('enrollsAutomatically')(db, environmentId, email)) {
        // A verified domain enrolls the new user: the membership commits with the user, in one transaction.
        return inTransaction(db, async (trx) => {
          const created = await insertUser(trx, environmentId, user, now);
          await recordUserEvent(trx, environmentId, id, 'user.created', by, metadata);
          await userHook('enrollByVerifiedEmail')(trx, environmentId, created, now);
          return created;
        });
      }
      // One prepared statement (user, primary address, trail event): one round trip where a transaction took six.
      return insertUserAlone(db, 'user_create', environmentId, user, now, (chain, created) => recordOwnEventAfter(chain, created, environmentId,
        { action: 'user.created', ...by, targets: [{ type: 'user', id }], metadata }, now));
    },
    get: existing,
    /**
     * Which of these user ids (valid uuids) exist in the environment, deleted users included. Users are
     * only ever soft-deleted, so an id that exists keeps existing: found ids are remembered (for a while,
     * bounded) and only unknown ones are looked up. A hard delete, if one is ever added, must evict here.
     */
    async existingIds(environmentId: string, ids: string[]): Promise<Set<string>> {
      const known = new Set(ids.filter((id) => knownUsers.get(`${environmentId}:${id}`)));
      const unknown = ids.filter((id) => !known.has(id));
      if (unknown.length === 0) return known;
      const generation = knownUsers.generation();
      for (const id of await users.findExistingIds(environmentId, unknown)) {
        known.add(id);
        knownUsers.set(`${environmentId}:${id}`, true, generation);
      }
      return known;
    },
    /** Users matching every filter; metadata filters get the same 8 KB budget as the bags they search. */
    async list(environmentId: string, filter: UserFilter, page: PageQuery) {
      assertMetadataBudget(filter.publicMetadata, filter.privateMetadata);
      return users.list(environmentId, filter, page);
    },

    /** Profile changes; a change to unsafe metadata (client plane) is recorded like a metadata merge. */
    async update(environmentId: string, userId: string, body: UpdateUserBody | UpdateMeBody, by: Caller): Promise<User> {
      const email = 'email' in body && body.email !== undefined ? normalizeEmail(body.email) : undefined;
      const passwordHash = 'password' in body && body.password !== undefined
        ? await newPasswordHash(environmentId, userId, body.password, email) : undefined;
      const unsafeMetadata = 'unsafeMetadata' in body ? body.unsafeMetadata : undefined;
      return changeLocked(environmentId, userId, async (store, current, trx) => {
        const changes: ProfileChanges = { firstName: body.firstName, lastName: body.lastName, locale: body.locale, name: body.name, email, passwordHash };
        if (body.name === undefined && (body.firstName !== undefined || body.lastName !== undefined)) {
          changes.name = joinName(body.firstName === undefined ? current.firstName : body.firstName, body.lastName === undefined ? current.lastName : body.lastName);
        }
        if (unsafeMetadata) changes.unsafeMetadata = mergeBags(bagsOf(current), { unsafeMetadata }).unsafeMetadata;
        const now = clock.now(); // one time for the change and the enrollment check: an email verified at it enrolls
        const changed = unlessTaken(await store.updateProfile(environmentId, userId, changes, now));
        if (!changed) throw userNotFound(); // cannot happen under the lock; never query outside the transaction here
        const updated = email === undefined ? changed : await mirrored(trx, environmentId, changed, now);
        const fields = changedFields(current, updated, passwordHash !== undefined);
        if (fields.length > 0) await recordUserEvent(trx, environmentId, userId, 'user.updated', by, { changedFields: fields });
        await userHook('enrollByVerifiedEmail')(trx, environmentId, updated, now);
        if (unsafeMetadata) await recordMetadataChange(trx, environmentId, current, updated, { unsafeMetadata }, by);
        return updated;
      });
    },

    /**
     * Bans under the row lock and revokes every session in the same transaction, so the change and the
     * revocation land together. Banning a banned user changes nothing and records nothing.
     */
    ban: (environmentId: string, userId: string, by: Caller): Promise<User> =>
      changeLocked(environmentId, userId, async (store, current, trx) => {
        // A banned owner is no active owner already: banning again changes nothing, and is not refused.
        if (current.status === 'active') await refuseLastOwner(trx, environmentId, userId);
        const user = (await store.setStatus(environmentId, userId, 'banned', clock.now()))!;
        const revokedSessions = await revokeAllSessions(trx, environmentId, userId, clock.now());
        if (current.status !== 'banned') await recordUserEvent(trx, environmentId, userId, 'user.banned', by, { revokedSessions });
        return user;
      }),
    /** Unbanning a user that is not banned changes nothing and records nothing. */
    unban: (environmentId: string, userId: string, by: Caller): Promise<User> =>
      changeLocked(environmentId, userId, async (store, current, trx) => {
        if (current.status !== 'banned') return current;
        const user = (await store.setStatus(environmentId, userId, 'active', clock.now()))!;
        await recordUserEvent(trx, environmentId, userId, 'user.unbanned', by);
        return user;
      }),
    /** Soft delete: the first call revokes everything and answers; any later one is 403 user_deleted. */
    async softDelete(environmentId: string, userId: string, by: Caller): Promise<void> {
      const deleted = await inTransaction(db, async (trx) => {
        const store = createUsersStore(trx);
        const user = await store.softDelete(environmentId, userId, clock.now());
        if (!user) return undefined;
        await refuseLastOwner(trx, environmentId, userId);
        const revokedSessions = await revokeAllSessions(trx, environmentId, userId, clock.now());
        await userHook('releaseEmailAddresses')(trx, environmentId, userId, clock.now());
        await recordUserEvent(trx, environmentId, userId, 'user.deleted', by, { revokedSessions });
        return user;
      });
      if (!deleted) await explainMiss(environmentId, userId);
    },
    mergeMetadata,

    /**
     * Client sign-up: a password user, pending until the email is confirmed when the environment asks for it.
     * `alongside` writes what must commit with the account (a pending one's code and mail), in its transaction.
     */
    async register(environmentId: string, input: RegistrationInput, context: RequestContext, alongside?: (trx: Db, user: User) => Promise<void>) {
      const { settings } = await environments.record(environmentId);
      if (settings.requiredFields.includes('name') && !(input.name || (input.firstName && input.lastName))) throw nameRequired();
      const email = normalizeEmail(input.email);
      const passwordHash = await checkedPasswordHash(input.password, settings, email);
      return inTransaction(db, async (trx) => {
        const user = await insertUser(trx, environmentId, {
          email, passwordHash, emailVerifiedAt: null,
          registrationState: input.pending ? 'pending_email_verification' : 'complete',
          firstName: input.firstName ?? null, lastName: input.lastName ?? null, name: input.name ?? joinName(input.firstName, input.lastName),
          locale: input.locale ?? null, publicMetadata: {}, privateMetadata: {}, unsafeMetadata: {},
        }, clock.now());
        if (alongside) await alongside(trx, user);
        await recordUserEvent(trx, environmentId, user.id, 'user.signed_up', userCaller(user.id, context), { pending: input.pending });
        return user;
      });
    },
    findCredentials: (environmentId: string, email: string) => users.findCredentials(environmentId, normalizeEmail(email)),
    /** Reserves an attempt of the client's budget (a rate-limit hit) and, when it admits it, one of the account's, in one statement. */
    /**
     * One statement before the password's hash: the client's budget, then the account's attempt, unless `refusal`
     * (a condition of the caller's, read in the same statement) holds; then nothing of the account is reserved.
     * `countsOnAccount` false only finds the account: the caller counts its failures per client instead.
     */
    reserveSignInAttempt: (environmentId: string, email: string, lockout: EnvironmentSettings['lockout'], budget: RawBuilder<{ count: number }>, refusal: RawBuilder<boolean>, countsOnAccount = true) =>
      users.reserveSignInAttempt(environmentId, normalizeEmail(email), lockout, clock.now(), budget, refusal, countsOnAccount),
    /** Reserves an attempt of an active account for a second-factor code (the lockout's budget); undefined while locked or full. */
    reserveAttemptById: (environmentId: string, userId: string, lockout: EnvironmentSettings['lockout']) =>
      users.reserveAttemptById(environmentId, userId, lockout, clock.now()),
    finishSignInAttempt: (environmentId: string, userId: string, succeeded: boolean, lockout: EnvironmentSettings['lockout']) =>
      users.finishSignInAttempt(environmentId, userId, succeeded, lockout, clock.now()),
    /** Completes a pending registration whose emailed code was right; undefined unless the user is active. */
    completeRegistration: (environmentId: string, userId: string, context: RequestContext) =>
      inTransaction(db, async (trx) => {
        const now = clock.now();
        const user = await mirrored(trx, environmentId, await createUsersStore(trx).completeRegistration(environmentId, userId, now), now);
        if (user) await recordUserEvent(trx, environmentId, userId, 'user.email_verified', userCaller(userId, context));
        if (user) await userHook('enrollByVerifiedEmail')(trx, environmentId, user, now);
        return user;
      }),

    /** Revokes every active session; recorded when there was at least one. */
    async revokeAllSessions(environmentId: string, userId: string, by: Caller): Promise<void> {
      await changeable(environmentId, userId);
      await inTransaction(db, async (trx) => {
        const revokedSessions = await revokeAllSessions(trx, environmentId, userId, clock.now());
        if (revokedSessions > 0) await recordUserEvent(trx, environmentId, userId, 'user.sessions_revoked', by, { revokedSessions });
      });
    },
    async listSessions(environmentId: string, userId: string, query: ListSessionsQuery) {
      await existing(environmentId, userId);
      return sessions.listForUser(environmentId, userId, query);
    },
    async revokeSession(environmentId: string, userId: string, sessionId: string, by: Caller) {
      await changeable(environmentId, userId);
      return sessions.revoke(environmentId, userId, sessionId, by);
    },
  };
}
export type UsersService = ReturnType<typeof createUsersService>;

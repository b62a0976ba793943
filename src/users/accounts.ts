import type { Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import type { EnvironmentSettings } from '../environments/settings.js';
import { hashPassword } from '../platform/crypto/passwords.js';
import type { Cte, CteChain } from '../platform/db/cte.js';
import { runChain } from '../platform/db/cte.js';
import { preparedAs, type Db } from '../platform/db/database.js';
import type { UserRow } from '../platform/db/tables.js';
import type { JsonObject } from '../platform/json.js';
import { userHook } from './hooks.js';
import { emailTaken, lastOwner, userNotFound, weakPassword } from './errors.js';
import { passwordProblem } from './password-policy.js';
import type { ClientUser, User } from './schemas.js';
import { createUsersStore, insertUserStatement, isUserEmailTaken, toUser, type NewUser, type ProfileChanges } from './store.js';

/**
 * What other domains use of users: plain functions, and for writes functions taking the caller's
 * transaction first, so a flow in another domain (an invitation accepted, a password reset) changes
 * the user in its own transaction. Every user is created by insertUser.
 */

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/**
 * Whether a user may have this email, by the rule the API's schemas apply: every flow that creates a user from
 * what an IdP, a provider or a directory sent checks its normalised email with it, so no user has an email
 * the API would refuse (`a@b.test@corp.test`, `"a b"@corp.test`). Bounded before it is matched.
 */
export { isAcceptableEmail } from '../platform/email.js';

export const joinName = (first?: string | null, last?: string | null) => [first, last].filter(Boolean).join(' ') || null;

/** The client form of a user: never its private metadata, whichever form it comes in. */
export function toClientUser(user: ClientUser & { privateMetadata?: unknown }): ClientUser {
  const { privateMetadata: _private, ...client } = user;
  return client;
}

const TIMESTAMP_COLUMNS = new Set(['created_at', 'updated_at', 'email_verified_at', 'deleted_at', 'locked_until', 'last_sign_in_attempt_at']);

/**
 * A users row that another domain's statement read along with its own (`to_jsonb(u) - 'password_hash'`),
 * in client form: one statement instead of a second round trip for the user.
 */
export function clientUserFromJson(row: JsonObject): ClientUser {
  const columns = Object.entries(row).map(([column, value]) => [column, TIMESTAMP_COLUMNS.has(column) && typeof value === 'string' ? new Date(value) : value]);
  return toClientUser(toUser(Object.fromEntries(columns) as Selectable<UserRow>));
}

/** 400 weak_password unless the password meets the environment's policy; cheap, so it runs before any hashing. */
export function assertPasswordPolicy(password: string, settings: EnvironmentSettings, email: string | null | undefined) {
  const problem = passwordProblem(password, settings.passwordPolicy, email);
  if (problem) throw weakPassword(problem);
}

/** The password's argon2id hash once it meets the environment's policy; 400 weak_password (before any hashing) otherwise. */
export async function checkedPasswordHash(password: string, settings: EnvironmentSettings, email: string | null | undefined) {
  assertPasswordPolicy(password, settings, email);
  return hashPassword(password);
}

/**
 * The one way a user is created, with its email as its primary address, in the caller's transaction:
 * 409 email_taken when another live user of the environment has the email (as its own, or verified as
 * one of its addresses).
 */
export async function insertUser(trx: Db, environmentId: string, user: NewUser, now: Date): Promise<User> {
  const inserted = await createUsersStore(trx).insert(environmentId, user, now);
  if (inserted === 'email_taken') throw emailTaken();
  return mirrored(trx, environmentId, inserted, now);
}

/**
 * A user created in ONE statement (one round trip, one commit, prepared as `name`): the user, its email
 * as its primary address, and what `after` adds for each row of the insert (its audit event). 409
 * email_taken as insertUser answers it. For a flow with nothing else to do in a transaction.
 */
export async function insertUserAlone(db: Db, name: string, environmentId: string, user: NewUser, now: Date,
  after: (chain: CteChain, created: Cte<Selectable<UserRow>>) => void): Promise<User> {
  try {
    const [row] = await runChain(db, preparedAs(name), (chain) => {
      const created = chain.add('new_user', insertUserStatement(environmentId, user.id ?? uuidv7(), user, now));
      userHook('addPrimaryAddressAfter')(chain, created, now);
      after(chain, created);
      return created;
    });
    return toUser(row);
  } catch (err) {
    if (isUserEmailTaken(err) || userHook('isPrimaryClaimedElsewhere')(err)) throw emailTaken();
    throw err;
  }
}

/**
 * The user after a change of users.email or users.email_verified_at, its primary address made to match
 * in the same transaction; 409 email_taken when another live user holds the email as an address.
 */
export async function mirrored<T extends User | undefined>(trx: Db, environmentId: string, user: T, now: Date): Promise<T> {
  if (user && (await userHook('mirrorPrimaryAddress')(trx, environmentId, user, now)) === 'email_taken') throw emailTaken();
  return user;
}

/**
 * The user a pending sign-up would have created, never stored: what a sign-up for an email that already
 * has an account answers under enumeration protection, so that answer looks like any other.
 */
export function unstoredPendingUser(environmentId: string, input: { email: string; firstName?: string; lastName?: string; name?: string }, now: Date): ClientUser {
  const at = now.toISOString();
  return {
    id: uuidv7(), environmentId, name: input.name ?? joinName(input.firstName, input.lastName), firstName: input.firstName ?? null,
    lastName: input.lastName ?? null, locale: null, status: 'active', registrationState: 'pending_email_verification',
    createdAt: at, updatedAt: at, email: normalizeEmail(input.email), emailVerifiedAt: null, deletedAt: null, publicMetadata: {}, unsafeMetadata: {},
  };
}

export interface VerifiedUser {
  /** Chosen by the caller when it must reference the user before the insert (invitation acceptance). */
  id?: string;
  email: string; passwordHash: string; name: string | null; publicMetadata: JsonObject;
}

/** A user whose email is already proven (an accepted invitation), registration complete, in the caller's transaction. */
export const insertVerifiedUser = (trx: Db, environmentId: string, user: VerifiedUser, now: Date) =>
  insertUser(trx, environmentId, {
    ...user, emailVerifiedAt: now, registrationState: 'complete', firstName: null, lastName: null, privateMetadata: {}, unsafeMetadata: {},
  }, now);

/**
 * The account side of a password reset, in the caller's transaction: the new hash, the sign-in lockout
 * cleared and a pending registration completed. `primaryProven` when the code went to the user's own
 * email (then verified), not to a secondary address. Undefined unless active.
 */
export const applyPasswordReset = async (trx: Db, environmentId: string, userId: string, passwordHash: string, primaryProven: boolean, now: Date) =>
  mirrored(trx, environmentId, await createUsersStore(trx).resetPassword(environmentId, userId, passwordHash, primaryProven, now), now);

/**
 * The primary address moved (email-addresses): the user's copy of it follows, in the caller's transaction.
 * 'email_taken' when another live user has the email as its own; undefined for a missing or deleted user.
 */
export const setPrimaryEmailCopy = (trx: Db, environmentId: string, userId: string, email: string, verifiedAt: Date | null, now: Date) =>
  createUsersStore(trx).setEmailCopy(environmentId, userId, email, verifiedAt, now);

/**
 * 409 last_owner, in the caller's transaction, when the user is the only active owner of an organization
 * (the organizations are locked, so co-owners leaving at once cannot each count on the other).
 */
export async function refuseLastOwner(trx: Db, environmentId: string, userId: string) {
  const organizationIds = await createUsersStore(trx).lastOwnerOf(environmentId, userId);
  if (organizationIds.length > 0) throw lastOwner(organizationIds);
}

/** The user (deleted ones too), locked for the caller's transaction; 404 user_not_found when absent. */
export async function lockExistingUser(trx: Db, environmentId: string, userId: string): Promise<User> {
  const found = await createUsersStore(trx).findForUpdate(environmentId, userId);
  if (!found) throw userNotFound();
  return found;
}

/** The organizations whose only active owner the user is, locked for the caller's transaction. */
export const lastOwnedOrganizations = (trx: Db, environmentId: string, userId: string) =>
  createUsersStore(trx).lastOwnerOf(environmentId, userId);

/**
 * Erasure of the account, in the caller's transaction: the user keeps its id and becomes deleted (its
 * deletedAt kept when it was deleted before), and loses email, password hash, names, locale and every
 * metadata bag. Answers the status it had, undefined when there is no such user.
 */
export const eraseAccount = (trx: Db, environmentId: string, userId: string, now: Date) =>
  createUsersStore(trx).erase(environmentId, userId, now).then((row) => row?.status);

/** The user and its password hash (null when it has none), read without a lock; undefined when there is no such user. */
export const userCredentials = (db: Db, environmentId: string, userId: string) =>
  createUsersStore(db).findCredentialsById(environmentId, userId);

/** The signed-in user's new password, in the caller's transaction; undefined unless the user is active. */
export const setPassword = (trx: Db, environmentId: string, userId: string, passwordHash: string, now: Date) =>
  createUsersStore(trx).setPassword(environmentId, userId, passwordHash, now);

/** The user and whether it has a password, locked for the caller's transaction; undefined when there is no such user. */
export const lockUserCredentials = (trx: Db, environmentId: string, userId: string) =>
  createUsersStore(trx).lockCredentials(environmentId, userId);

/** The live user with this (normalised) email, locked for the caller's transaction. */
export const lockLiveUserByEmail = (trx: Db, environmentId: string, email: string) =>
  createUsersStore(trx).lockLiveByEmail(environmentId, normalizeEmail(email));

/**
 * An external provider proved the email of a user whose email was unproven, in the caller's transaction:
 * verified, registration complete, the unproven password removed. Undefined unless the user is active.
 */
export const proveEmailByProvider = async (trx: Db, environmentId: string, userId: string, now: Date) =>
  mirrored(trx, environmentId, await createUsersStore(trx).proveEmailDroppingPassword(environmentId, userId, now), now);

/**
 * A directory (SCIM) turned the account off (`banned`: sign-in refused) or on again, in the caller's transaction,
 * which also revokes the sessions. Undefined for a missing or deleted user.
 */
export const setAccountStatus = (trx: Db, environmentId: string, userId: string, status: 'active' | 'banned', now: Date) =>
  createUsersStore(trx).setStatus(environmentId, userId, status, now);

/**
 * A directory's change of the profile (names, email), in the caller's transaction; an email set this way counts
 * as verified, as on the Server API. 409 email_taken on a clash; undefined for a missing or deleted user.
 */
export async function updateAccountProfile(trx: Db, environmentId: string, userId: string, changes: ProfileChanges, now: Date) {
  const updated = await createUsersStore(trx).updateProfile(environmentId, userId, changes, now);
  if (updated === 'email_taken') throw emailTaken();
  return changes.email === undefined ? updated : mirrored(trx, environmentId, updated, now);
}

/** Soft delete in the caller's transaction (a directory deleting a user it created): its addresses are released; undefined when already deleted. */
export async function softDeleteAccount(trx: Db, environmentId: string, userId: string, now: Date) {
  const user = await createUsersStore(trx).softDelete(environmentId, userId, now);
  if (user) await userHook('releaseEmailAddresses')(trx, environmentId, userId, now);
  return user;
}

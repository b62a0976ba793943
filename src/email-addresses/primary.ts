import type { Cte, CteChain } from '../platform/db/cte.js';
import type { Db } from '../platform/db/database.js';
import { createEmailAddressesStore, insertPrimaryAfter, isClaimedElsewhere, type NewUserCopy, type PrimaryCopy } from './store.js';

/**
 * What the users domain calls, in its own transaction, whenever users.email or users.email_verified_at
 * changes (a user created, an email set by the Server API, verified by a code or a provider, a password
 * reset): the primary address follows the user row. Nothing for a user without an email. 'email_taken'
 * when another live user has verified the email or has it as primary; the caller's transaction is then
 * aborted, and must throw.
 */
export async function mirrorPrimaryAddress(trx: Db, environmentId: string, user: PrimaryCopy, now: Date): Promise<'email_taken' | undefined> {
  if (user.email === null) return undefined;
  return createEmailAddressesStore(trx).mirrorPrimary(environmentId, { ...user, email: user.email }, now);
}

/**
 * A new user's primary address as a CTE of the statement that inserts the user (`user`): what
 * mirrorPrimaryAddress does for a user just created, in the same round trip. A clash with another live
 * user's address fails the statement; `isPrimaryClaimedElsewhere` recognises it.
 */
export const addPrimaryAddressAfter = (chain: CteChain, user: Cte<NewUserCopy>, now: Date) =>
  chain.add('primary_address', insertPrimaryAfter(user, now));
export const isPrimaryClaimedElsewhere = isClaimedElsewhere;

/**
 * Erasure, in the caller's transaction: deletes every address of the user (the primary's copy in users.email
 * is cleared by the account step). Answers how many there were.
 */
export const deleteEmailAddresses = (trx: Db, environmentId: string, userId: string) =>
  createEmailAddressesStore(trx).deleteAllForUser(environmentId, userId);

/**
 * Erasure, in the caller's transaction: the emails of the user's addresses, but one another user has taken
 * since the user was deleted (the mail and rate limits naming them go with the user; that user's stay).
 */
export const erasableEmailsOf = (trx: Db, environmentId: string, userId: string) =>
  createEmailAddressesStore(trx).listUnclaimedEmails(environmentId, userId);

/** A soft-deleted user's addresses free their emails, in the deletion's transaction. */
export const releaseEmailAddresses = (trx: Db, environmentId: string, userId: string, now: Date) =>
  createEmailAddressesStore(trx).release(environmentId, userId, now).then(() => undefined);

/** What this domain does at the users domain's lifecycle hooks (users/hooks.ts): the primary address follows the user row. */
export const emailAddressesUserHooks = { addPrimaryAddressAfter, isPrimaryClaimedElsewhere, mirrorPrimaryAddress, releaseEmailAddresses };

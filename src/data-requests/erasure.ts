import { scrubOwnTrailOf } from '../audit/service.js';
import { deleteEmailAddresses, erasableEmailsOf } from '../email-addresses/primary.js';
import { deleteSecondFactors } from '../factors/service.js';
import { deleteUserIdentities } from '../oauth/service.js';
import { deletePasskeys } from '../passkeys/service.js';
import type { Db } from '../platform/db/database.js';
import { createOutboxStore } from '../platform/mail/outbox-store.js';
import { deleteEmailWindows } from '../platform/rate-limit.js';
import { deleteAllSessions } from '../sessions/service.js';
import { deleteSsoIdentities } from '../sso/service.js';
import { eraseAccount } from '../users/accounts.js';
import { createDataRequestsStore } from './store.js';

export interface ErasureStep {
  name: string;
  /** Removes one kind of the user's personal data in the erasure's transaction; answers how many rows it changed. */
  erase(trx: Db, environmentId: string, userId: string, now: Date): Promise<number>;
}

/**
 * The steps of an erasure, each a plain function of the domain that owns the data, all in one
 * transaction: a new table of personal data is one more line here.
 * The account step keeps the user's id and sets it deleted; the trail step keeps every event but nulls
 * the IPs and user agents of the service's own events about the user; the customer's events stay as appended.
 */
export const ERASURE_STEPS: ErasureStep[] = [
  // These two look the user's addresses up, so they come before the steps that delete them.
  { name: 'outboxMessages', erase: async (trx, env, user) => createOutboxStore(trx).deleteAddressedTo(env, await erasableEmailsOf(trx, env, user)) },
  { name: 'rateLimitWindows', erase: async (trx, env, user) => deleteEmailWindows(trx, env, await erasableEmailsOf(trx, env, user)) },
  { name: 'sessions', erase: (trx, env, user) => deleteAllSessions(trx, env, user) },
  { name: 'identities', erase: (trx, env, user) => deleteUserIdentities(trx, env, user) },
  { name: 'ssoIdentities', erase: (trx, env, user) => deleteSsoIdentities(trx, env, user) },
  { name: 'emailAddresses', erase: (trx, env, user) => deleteEmailAddresses(trx, env, user) },
  { name: 'secondFactors', erase: (trx, env, user) => deleteSecondFactors(trx, env, user) },
  { name: 'passkeys', erase: (trx, env, user) => deletePasskeys(trx, env, user) },
  { name: 'account', erase: async (trx, env, user, now) => ((await eraseAccount(trx, env, user, now)) ? 1 : 0) },
  { name: 'ownTrail', erase: (trx, env, user) => scrubOwnTrailOf(trx, env, user) },
  // An export made before the erasure holds everything above: its archive goes too.
  { name: 'exportArchives', erase: (trx, env, user, now) => createDataRequestsStore(trx).dropArchivesOf(env, user, now) },
];

/** Runs every step; answers the rows each changed, by step name (for the user.erased event). */
export async function eraseUser(trx: Db, environmentId: string, userId: string, now: Date): Promise<Record<string, number>> {
  const changed: Record<string, number> = {};
  for (const step of ERASURE_STEPS) changed[step.name] = await step.erase(trx, environmentId, userId, now);
  return changed;
}

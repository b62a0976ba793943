import type { Cte, CteChain } from '../platform/db/cte.js';
import type { Db } from '../platform/db/database.js';

/** The user row's email as the primary address copies it. */
export interface PrimaryCopy { id: string; email: string | null; emailVerifiedAt: string | null }
/** The inserted user row, as a CTE of the statement that inserts it. */
export interface NewUserCopy { environment_id: string; id: string; email: string | null; email_verified_at: Date | null }
/** A user as a verified domain's enrollment weighs them. */
export interface EnrollableUser { id: string; status: string; email: string | null; emailVerifiedAt: string | null }

/**
 * What newer domains do when a user is created, changes email or is deleted, called by users/ inside that change's
 * transaction (as supabase/auth's triggerBeforeUserCreated/triggerAfterUserCreated are called from every flow).
 * users/ is a core floor: it names the moments, and email-addresses/ and organization-domains/ register what
 * happens at them (src/lifecycle.ts, at start), so no import runs from users/ up to them.
 */
export interface UserLifecycleHooks {
  /** The new user's primary address, as a CTE of the statement that inserts the user (one round trip). */
  addPrimaryAddressAfter(chain: CteChain, user: Cte<NewUserCopy>, now: Date): void;
  /** Whether the insert failed because another live user claims the email as an address. */
  isPrimaryClaimedElsewhere(err: unknown): boolean;
  /** users.email or email_verified_at changed: the primary address follows; 'email_taken' aborts the change. */
  mirrorPrimaryAddress(trx: Db, environmentId: string, user: PrimaryCopy, now: Date): Promise<'email_taken' | undefined>;
  /** The user was soft-deleted: their addresses free their emails. */
  releaseEmailAddresses(trx: Db, environmentId: string, userId: string, now: Date): Promise<void>;
  /** Whether a user created now with this verified email joins an organization (a domain's automatic enrollment). */
  enrollsAutomatically(db: Db, environmentId: string, email: string): Promise<boolean>;
  /** The user's primary email became verified in this change: a verified domain with automatic enrollment takes them in. */
  enrollByVerifiedEmail(trx: Db, environmentId: string, user: EnrollableUser, now: Date): Promise<void>;
}

let registered: Partial<UserLifecycleHooks> = {};

/** Registers a domain's part of the hooks; src/lifecycle.ts calls it for each domain before anything is served. */
export function registerUserHooks(hooks: Partial<UserLifecycleHooks>) {
  registered = { ...registered, ...hooks };
}

/** The registered hook; a missing one is a wiring mistake, never a silent no-op. */
export function userHook<K extends keyof UserLifecycleHooks>(name: K): UserLifecycleHooks[K] {
  const hook = registered[name];
  if (!hook) throw new Error(`users/ hook "${name}" is not registered: registerLifecycleHooks (src/lifecycle.ts) registers them at start`);
  return hook as UserLifecycleHooks[K];
}

import { recordOwnEvent } from '../audit/service.js';
import { joinOrganization, lockOrganization } from '../organizations/service.js';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import { ProblemError } from '../platform/http/problem.js';
import type { JsonObject } from '../platform/json.js';
import { revokeAllSessions } from '../sessions/service.js';
import {
  insertUser, joinName, lockExistingUser, lockLiveUserByEmail, normalizeEmail, setAccountStatus, softDeleteAccount, updateAccountProfile,
} from '../users/accounts.js';
import { isAtVerifiedDomainOf } from '../organization-domains/service.js';
import { emailOutsideVerifiedDomains, resourceNotFound, uniqueness } from './errors.js';
import { listFilter, listResponse, listWindow } from './filter.js';
import { applyPatch, patchOperations } from './patch.js';
import { parseUser, toScimUser, type ScimUser, type UserInput } from './resources.js';
import type { RoleResolver } from './roles.js';
import type { ScimListQuery } from './schemas.js';
import type { AuthenticatedDirectory } from './service.js';
import { createScimStore } from './store.js';

export interface ScimUsersDeps {
  db: Db; clock: Clock; roles: RoleResolver;
  removeMember(environmentId: string, organizationId: string, userId: string, by: Caller): Promise<void>;
}

type Event = { action: string; metadata: JsonObject };
const USER_NAME_TAKEN = 'Another User of this directory has this userName or externalId.';

/**
 * SCIM Users: a Gatehouse user of the directory's environment plus its membership in the directory's
 * organization. Every change runs in one transaction with the audit events it makes (webhooks follow them).
 */
export function createScimUsers({ db, clock, roles, removeMember }: ScimUsersDeps) {
  const store = createScimStore(db);

  const recordAll = async (trx: Db, dir: AuthenticatedDirectory, userId: string, by: Caller, events: Event[]) => {
    for (const event of events) {
      await recordOwnEvent(trx, dir.environmentId, {
        action: event.action, ...by, targets: [{ type: 'user', id: userId }, { type: 'scim_directory', id: dir.id }],
        metadata: { directoryId: dir.id, ...event.metadata },
      }, clock.now());
    }
  };

  /**
   * `active` as the directory wants it: false bans the user (sign-in refused) and revokes every session in this
   * transaction, so the next request with any of them is 401 on every process; true lifts a ban this directory
   * made, never one an operator or another directory made (that one stays, and the User reads `active: false`).
   */
  async function applyActive(trx: Db, dir: AuthenticatedDirectory, user: { id: string; status: string }, bannedByDirectory: boolean, active: boolean): Promise<Event[]> {
    const now = clock.now();
    const scim = createScimStore(trx);
    if (active && user.status === 'banned' && bannedByDirectory) {
      await setAccountStatus(trx, dir.environmentId, user.id, 'active', now);
      await scim.setBannedByDirectory(dir.environmentId, dir.id, user.id, false);
      return [{ action: 'user.unbanned', metadata: { reason: 'scim_activated' } }];
    }
    if (!active && user.status === 'active') {
      await setAccountStatus(trx, dir.environmentId, user.id, 'banned', now);
      await scim.setBannedByDirectory(dir.environmentId, dir.id, user.id, true);
      const revokedSessions = await revokeAllSessions(trx, dir.environmentId, user.id, now);
      return [{ action: 'user.banned', metadata: { reason: 'scim_deactivated', revokedSessions } }];
    }
    // Lifted elsewhere (an operator's unban): the next deactivation is the directory's again.
    if (active && user.status === 'active' && bannedByDirectory) await scim.setBannedByDirectory(dir.environmentId, dir.id, user.id, false);
    return [];
  }

  /** 400 unless the email is at a verified domain of the directory's organization: the only addresses its IdP speaks for. */
  async function assertOwnDomain(trx: Db, dir: AuthenticatedDirectory, email: string) {
    if (!(await isAtVerifiedDomainOf(trx, dir.environmentId, dir.organizationId, email))) throw emailOutsideVerifiedDomains(email);
  }

  async function linked(trx: Db, dir: AuthenticatedDirectory, userId: string) {
    const found = await createScimStore(trx).findLinkedUser(dir.environmentId, dir.id, userId);
    if (!found || found.user.status === 'deleted') throw resourceNotFound('User', userId);
    return found;
  }

  /** Back into the organization after an activation, if the deactivation kept them out of it (its own transaction, after the activation's). */
  async function rejoin(dir: AuthenticatedDirectory, userId: string, by: Caller) {
    const role = await roles.roleOf(dir, await store.groupNamesOf(dir.environmentId, dir.id, userId));
    await inTransaction(db, async (trx) => {
      await lockOrganization(trx, dir.environmentId, dir.organizationId);
      await joinOrganization(trx, dir.environmentId, dir.organizationId, userId, role, by, clock.now());
    });
  }

  async function create(dir: AuthenticatedDirectory, body: unknown, by: Caller, base: string): Promise<ScimUser> {
    const input = parseUser(body);
    const role = await roles.roleOf(dir, []);
    return inTransaction(db, async (trx) => {
      const { environmentId } = dir;
      const now = clock.now();
      const email = normalizeEmail(input.email);
      await assertOwnDomain(trx, dir, email);
      const found = await lockLiveUserByEmail(trx, environmentId, email);
      const user = found ?? await insertUser(trx, environmentId, {
        email, emailVerifiedAt: now, registrationState: 'complete', passwordHash: null, firstName: input.givenName, lastName: input.familyName,
        name: joinName(input.givenName, input.familyName), publicMetadata: {}, privateMetadata: {}, unsafeMetadata: {},
      }, now);
      const link = { userName: input.userName, externalId: input.externalId, createdUser: !found };
      if (await createScimStore(trx).insertUserLink(environmentId, dir.id, user.id, link, now) === 'conflict') throw uniqueness(USER_NAME_TAKEN);
      const events: Event[] = [{ action: found ? 'scim_user.linked' : 'user.created', metadata: found ? {} : { hasPassword: false } }];
      // Only an active user joins: a banned one the directory activates is let in first, one it deactivates afterwards.
      // The organization lock and the audit events come last: they serialize an organization's (and an
      // environment's) provisioning until commit, so the rest of the work runs in parallel before them.
      const join = async () => {
        await lockOrganization(trx, environmentId, dir.organizationId);
        await joinOrganization(trx, environmentId, dir.organizationId, user.id, role, by, now);
      };
      if (input.active) events.push(...await applyActive(trx, dir, user, false, true));
      else await join();
      if (!input.active) events.push(...await applyActive(trx, dir, user, false, false));
      const answer = toScimUser(await linked(trx, dir, user.id), base);
      if (input.active) await join();
      await recordAll(trx, dir, user.id, by, events);
      return answer;
    });
  }

  /** Sets what a PUT (or a patched User) describes: profile, userName/externalId, active. */
  async function replace(dir: AuthenticatedDirectory, userId: string, input: UserInput, by: Caller, base: string): Promise<ScimUser> {
    const { answer, activated } = await inTransaction(db, async (trx) => {
      const { environmentId } = dir;
      const current = await linked(trx, dir, userId);
      const user = await lockExistingUser(trx, environmentId, userId);
      const email = normalizeEmail(input.email);
      if (email !== user.email) await assertOwnDomain(trx, dir, email);
      const changes = {
        ...(email !== user.email && { email }),
        ...(input.givenName !== user.firstName && { firstName: input.givenName }),
        ...(input.familyName !== user.lastName && { lastName: input.familyName }),
      };
      const events: Event[] = [];
      if (Object.keys(changes).length > 0) {
        const name = joinName(input.givenName, input.familyName);
        await updateAccountProfile(trx, environmentId, userId, { ...changes, ...(name !== user.name && { name }) }, clock.now());
        events.push({ action: 'user.updated', metadata: { changedFields: Object.keys(changes).sort() } });
      }
      if (input.userName !== current.link.user_name || input.externalId !== current.link.external_id) {
        const link = { userName: input.userName, externalId: input.externalId };
        if (await createScimStore(trx).updateUserLink(environmentId, dir.id, userId, link, clock.now()) === 'conflict') throw uniqueness(USER_NAME_TAKEN);
      }
      const activity = await applyActive(trx, dir, user, current.link.banned_by_directory, input.active);
      events.push(...activity);
      const replaced = toScimUser(await linked(trx, dir, userId), base);
      await recordAll(trx, dir, userId, by, events);
      return { answer: replaced, activated: input.active && activity.length > 0 };
    });
    if (activated) await rejoin(dir, userId, by);
    return answer;
  }

  return {
    create,
    async get(dir: AuthenticatedDirectory, userId: string, base: string) {
      return toScimUser(await linked(db, dir, userId), base);
    },
    async list(dir: AuthenticatedDirectory, query: ScimListQuery, base: string) {
      const filter = listFilter('User', query.filter);
      const window = listWindow(query);
      const page = await store.listLinkedUsers(dir.environmentId, dir.id, filter, window);
      return listResponse(page.items.map((item) => toScimUser(item, base)), page.total, window);
    },
    replace: (dir: AuthenticatedDirectory, userId: string, body: unknown, by: Caller, base: string) => replace(dir, userId, parseUser(body), by, base),
    /** PATCH (RFC 7644 §3.5.2): the operations are applied by scim-patch to the User as it is, then stored as a replace. */
    async patch(dir: AuthenticatedDirectory, userId: string, body: unknown, by: Caller, base: string) {
      const current = toScimUser(await linked(db, dir, userId), base);
      return replace(dir, userId, parseUser(applyPatch('User', current, patchOperations(body))), by, base);
    },
    /**
     * DELETE: the membership ends, every session is revoked, and the user is deleted when this directory created
     * it (a user it linked by email keeps their account).
     */
    async delete(dir: AuthenticatedDirectory, userId: string, by: Caller) {
      await linked(db, dir, userId);
      try {
        await removeMember(dir.environmentId, dir.organizationId, userId, by);
      } catch (err) {
        if (!(err instanceof ProblemError && err.status === 404)) throw err;
      }
      await inTransaction(db, async (trx) => {
        const now = clock.now();
        const link = await createScimStore(trx).deleteUserLink(dir.environmentId, dir.id, userId);
        if (!link) throw resourceNotFound('User', userId);
        const revokedSessions = await revokeAllSessions(trx, dir.environmentId, userId, now);
        const deleted = link.created_user && await softDeleteAccount(trx, dir.environmentId, userId, now);
        await recordAll(trx, dir, userId, by, [{ action: deleted ? 'user.deleted' : 'scim_user.unlinked', metadata: { revokedSessions } }]);
      });
    },
  };
}
export type ScimUsers = ReturnType<typeof createScimUsers>;

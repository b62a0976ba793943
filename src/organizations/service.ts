import { recordOwnEvent } from '../audit/service.js';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { JsonObject } from '../platform/json.js';
import { assertMetadataBudget, mergeBags } from '../platform/metadata.js';
import type { EnvironmentsService } from '../environments/service.js';
import type { User } from '../users/schemas.js';
import { userDeleted } from '../users/errors.js';
import { alreadyMember, lastOwner, membershipNotFound, organizationNotFound, roleSetNotFound, slugTaken, userNotActive } from './errors.js';
import { authorize, type Action, type Target } from './policy.js';
import { assertRoleSet, DEFAULT_ROLE_SET, OWNER, roleIn, withPermissions, type Role, type RoleInput, type RoleSet } from './roles.js';
import type { AddMemberBody, CreateOrganizationBody, MetadataPatchBody, Organization, OrganizationPageQuery, UpdateOrganizationBody } from './schemas.js';
import { createOrganizationsStore, toClientOrganization, type OrganizationsStore } from './store.js';

export interface OrganizationsDeps { db: Db; clock: Clock; users: { get(environmentId: string, userId: string): Promise<User> }; environments: Pick<EnvironmentsService, 'record'> }

/**
 * Locks the organization in the caller's transaction, as every change of its memberships does first (so
 * they run one at a time, and no deletion of the organization interleaves); 404 when it is gone.
 */
export async function lockOrganization(trx: Db, environmentId: string, organizationId: string) {
  const org = await createOrganizationsStore(trx).lock(environmentId, organizationId);
  if (!org) throw organizationNotFound();
  return org;
}

/**
 * Makes an active user a member, in the caller's transaction, after lockOrganization (an accepted organization invitation):
 * the membership, or 'already_member', or undefined when the user is not active. Records the change.
 */
export async function joinOrganization(trx: Db, environmentId: string, organizationId: string, userId: string, role: Role, by: Caller, now: Date) {
  const member = await createOrganizationsStore(trx).insertMembership(environmentId, organizationId, userId, role, { publicMetadata: {}, privateMetadata: {} }, now);
  if (member && member !== 'already_member') {
    await recordOwnEvent(trx, environmentId, {
      action: 'organization_membership.created', ...by, metadata: { role: role.key },
      targets: [{ type: 'organization', id: organizationId }, { type: 'user', id: userId }],
    }, now);
  }
  return member;
}

/** The user's membership, read in the caller's transaction (undefined when they are not a member). */
export const membershipIn = (trx: Db, environmentId: string, organizationId: string, userId: string) =>
  createOrganizationsStore(trx).findMembership(environmentId, organizationId, userId);

/**
 * The role a member gets when nobody chose one (enrollment by a verified domain): `member` when the
 * organization's set has it, else the set's role with the fewest permissions, never `owner`.
 */
export const defaultRoleOf = (set: RoleSet): Role | undefined =>
  set.roles.find((r) => r.key === 'member')
  ?? set.roles.filter((r) => r.key !== OWNER).sort((a, b) => a.permissions.length - b.permissions.length)[0];

/**
 * Makes an active user a member with the default role, in the caller's transaction (a verified domain's
 * enrollment): locks the organization first, as every membership change does. The membership, or
 * 'already_member', or undefined when the organization is gone, the user is not active or the set has no
 * role to give. `metadata` goes into the recorded event beside the role.
 */
export async function enrollMember(trx: Db, environmentId: string, organizationId: string, userId: string, by: Caller, now: Date, metadata: JsonObject) {
  const store = createOrganizationsStore(trx);
  const org = await store.lock(environmentId, organizationId);
  const roleSet = org && (org.roleSetId ? await store.findRoleSet(environmentId, org.roleSetId) : DEFAULT_ROLE_SET);
  const role = roleSet && defaultRoleOf(roleSet);
  if (!role) return undefined;
  const member = await store.insertMembership(environmentId, organizationId, userId, role, { publicMetadata: {}, privateMetadata: {} }, now);
  if (member && member !== 'already_member') {
    await recordOwnEvent(trx, environmentId, {
      action: 'organization_membership.created', ...by, metadata: { role: role.key, ...metadata },
      targets: [{ type: 'organization', id: organizationId }, { type: 'user', id: userId }],
    }, now);
  }
  return member && member !== 'already_member' ? { member, organization: org! } : member;
}

/** Per bag a patch names, its top-level keys (never the values): what a metadata change records. */
const keysNamed = (patch: MetadataPatchBody) =>
  Object.fromEntries(Object.entries(patch).filter(([, bag]) => bag).map(([name, bag]) => [name, Object.keys(bag!).sort()]));

const unlessSlugTaken = <T>(result: T | 'slug_taken') => {
  if (result === 'slug_taken') throw slugTaken();
  return result;
};

/**
 * Organizations and their memberships: the rules both planes share. A signed-in caller's right to act is
 * policy.ts's `authorize`; the functions here read what it decides from, changes under the organization lock.
 */
export function createOrganizationsService({ db, clock, users, environments }: OrganizationsDeps) {
  const store = createOrganizationsStore(db);
  // A role set never changes once created, so a loaded one stays right for ever (bounded by the number of sets).
  const roleSets = new Map<string, RoleSet>();

  /** The organization's role set: the default for none; 400 role_set_not_found for an id of no set of the environment. */
  async function roleSetOf(reader: OrganizationsStore, environmentId: string, roleSetId: string | null | undefined): Promise<RoleSet> {
    if (!roleSetId) return DEFAULT_ROLE_SET;
    const key = `${environmentId}:${roleSetId}`;
    const cached = roleSets.get(key);
    if (cached) return cached;
    const found = await reader.findRoleSet(environmentId, roleSetId);
    if (!found) throw roleSetNotFound();
    roleSets.set(key, found);
    return found;
  }

  async function existing(environmentId: string, organizationId: string) {
    const org = await store.find(environmentId, organizationId);
    if (!org) throw organizationNotFound();
    return org;
  }

  /** Records a change in the audit trail as the last statement of its transaction. */
  const record = (trx: Db, environmentId: string, action: string, organizationId: string, by: Caller, metadata: JsonObject = {}, userId?: string) =>
    recordOwnEvent(trx, environmentId, {
      action, ...by, metadata,
      targets: [{ type: 'organization', id: organizationId }, ...(userId ? [{ type: 'user', id: userId }] : [])],
    }, clock.now());

  /**
   * Runs a change of the organization's memberships with the organization locked, so changes to its
   * owners run one after another across processes and each sees the one before (the last-owner rule).
   */
  function withOrganizationLocked<T>(environmentId: string, organizationId: string, change: (store: OrganizationsStore, trx: Db, org: Organization) => Promise<T>) {
    return inTransaction(db, async (trx) => {
      const org = await lockOrganization(trx, environmentId, organizationId);
      return change(createOrganizationsStore(trx), trx, org);
    });
  }

  /** The caller's active membership with the organization's role set: what the policy decides from. */
  async function memberIn(reader: OrganizationsStore, environmentId: string, org: Organization, userId: string) {
    const membership = await reader.findMembership(environmentId, org.id, userId);
    return membership && { ...membership, roleSet: await roleSetOf(reader, environmentId, org.roleSetId) };
  }

  /**
   * A signed-in caller's change, authorized with the store of the transaction that holds the organization
   * lock: role changes take that lock too, so none can land between this check and the change it allows.
   */
  async function authorizeLocked(locked: OrganizationsStore, environmentId: string, org: Organization, userId: string, action: Action, target?: Target) {
    const member = await memberIn(locked, environmentId, org, userId);
    authorize(member, action, target);
    return member;
  }

  /** The caller's right to change or remove a member: the policy weighs the member's current role. */
  async function authorizeMemberChange(locked: OrganizationsStore, environmentId: string, org: Organization, actorId: string, userId: string, grants?: string) {
    const target = await locked.findAnyMembership(environmentId, org.id, userId);
    await authorizeLocked(locked, environmentId, org, actorId, 'members.manage', { role: target?.role, grants });
  }

  /** Renames the organization the transaction has locked (name, slug). */
  async function renameLocked(locked: OrganizationsStore, trx: Db, environmentId: string, organizationId: string, changes: UpdateOrganizationBody, by: Caller) {
    const organization = unlessSlugTaken(await locked.update(environmentId, organizationId, changes, clock.now()));
    if (!organization) throw organizationNotFound();
    await record(trx, environmentId, 'organization.updated', organizationId, by, { changedFields: Object.keys(changes).sort() });
    return organization;
  }

  /** Removes a member (the caller's `check` done under the same lock); removing the last active owner is 409 last_owner. */
  const remove = (environmentId: string, organizationId: string, userId: string, by: Caller, check: (locked: OrganizationsStore, org: Organization) => Promise<unknown>) =>
    withOrganizationLocked(environmentId, organizationId, async (locked, trx, org) => {
      await check(locked, org);
      const removed = await ownerMayGo(locked, environmentId, organizationId, userId);
      await locked.deleteMembership(environmentId, organizationId, userId);
      await record(trx, environmentId, 'organization_membership.deleted', organizationId, by, { role: removed.role }, userId);
    });

  /** The membership, for a change that may take an owner away: 409 last_owner when no other active owner is left. */
  async function ownerMayGo(locked: OrganizationsStore, environmentId: string, organizationId: string, userId: string, newRole?: string) {
    const membership = await locked.findAnyMembership(environmentId, organizationId, userId);
    if (!membership) throw membershipNotFound();
    const losesOwner = membership.role === OWNER && newRole !== OWNER;
    if (losesOwner && (await locked.countOtherOwners(environmentId, organizationId, userId)) === 0) throw lastOwner();
    return membership;
  }

  /** Why a user cannot join: missing (404), deleted (403 user_deleted) or banned (409 user_not_active); undefined when active. */
  async function whyNotJoinable(environmentId: string, userId: string) {
    const { status } = await users.get(environmentId, userId);
    if (status === 'deleted') return userDeleted();
    return status === 'banned' ? userNotActive() : undefined;
  }
  async function explainNoMembership(environmentId: string, userId: string): Promise<never> {
    throw (await whyNotJoinable(environmentId, userId)) ?? userNotActive();
  }

  async function addMember(environmentId: string, organizationId: string, body: AddMemberBody, by: Caller) {
    const bags = { publicMetadata: body.publicMetadata ?? {}, privateMetadata: body.privateMetadata ?? {} };
    assertMetadataBudget(bags.publicMetadata, bags.privateMetadata);
    const added = await withOrganizationLocked(environmentId, organizationId, async (locked, trx, org) => {
      const role = roleIn(await roleSetOf(locked, environmentId, org.roleSetId), body.role);
      const member = await locked.insertMembership(environmentId, organizationId, body.userId, role, bags, clock.now());
      if (member === 'already_member') throw alreadyMember();
      if (member) await record(trx, environmentId, 'organization_membership.created', organizationId, by, { role: body.role }, body.userId);
      return member;
    });
    return added ?? explainNoMembership(environmentId, body.userId);
  }

  return {
    /** A new organization; with `createdBy`, that user joins as its owner in the same transaction. */
    async create(environmentId: string, body: CreateOrganizationBody, by: Caller): Promise<Organization> {
      const owner = roleIn(await roleSetOf(store, environmentId, body.roleSetId), OWNER);
      const bags = { publicMetadata: body.publicMetadata ?? {}, privateMetadata: body.privateMetadata ?? {} };
      assertMetadataBudget(bags.publicMetadata, bags.privateMetadata);
      const refusal = body.createdBy && (await whyNotJoinable(environmentId, body.createdBy));
      if (refusal) throw refusal;
      return inTransaction(db, async (trx) => {
        const txStore = createOrganizationsStore(trx);
        const now = clock.now();
        const organization = unlessSlugTaken(await txStore.insert(environmentId, { name: body.name, slug: body.slug ?? null, roleSetId: body.roleSetId ?? null, ...bags }, now));
        // Banned or deleted since the check above: the insert finds no active user, and everything rolls back.
        if (body.createdBy && !(await txStore.insertMembership(environmentId, organization.id, body.createdBy, owner, { publicMetadata: {}, privateMetadata: {} }, now))) throw userNotActive();
        await record(trx, environmentId, 'organization.created', organization.id, by, { createdBy: body.createdBy ?? null });
        if (body.createdBy) await record(trx, environmentId, 'organization_membership.created', organization.id, by, { role: OWNER }, body.createdBy);
        return organization;
      });
    },
    get: existing,
    list: (environmentId: string, filter: { name?: string }, page: OrganizationPageQuery) => store.list(environmentId, filter, page),
    update: (environmentId: string, organizationId: string, changes: UpdateOrganizationBody, by: Caller) =>
      withOrganizationLocked(environmentId, organizationId, (locked, trx) => renameLocked(locked, trx, environmentId, organizationId, changes, by)),
    /** A signed-in member's rename (organization:update), in client form with the role read under the lock. */
    updateAsMember: (environmentId: string, organizationId: string, userId: string, changes: UpdateOrganizationBody, by: Caller) =>
      withOrganizationLocked(environmentId, organizationId, async (locked, trx, org) => {
        const actor = await authorizeLocked(locked, environmentId, org, userId, 'organization.update');
        return toClientOrganization(await renameLocked(locked, trx, environmentId, organizationId, changes, by), actor);
      }),
    /** Deep-merges the given bags into the locked row; both bags together must fit the 8 KB budget. */
    mergeMetadata: (environmentId: string, organizationId: string, patch: MetadataPatchBody, by: Caller) =>
      withOrganizationLocked(environmentId, organizationId, async (locked, trx, { publicMetadata, privateMetadata }) => {
        const updated = await locked.setMetadata(environmentId, organizationId, mergeBags({ publicMetadata, privateMetadata }, patch), clock.now());
        await record(trx, environmentId, 'organization.metadata_updated', organizationId, by, { changedKeys: keysNamed(patch) });
        return updated;
      }),
    /** Deletes the organization and every membership of it; a signed-in `actorId` needs organization:delete. */
    async delete(environmentId: string, organizationId: string, by: Caller, actorId?: string) {
      await withOrganizationLocked(environmentId, organizationId, async (locked, trx, org) => {
        if (actorId) await authorizeLocked(locked, environmentId, org, actorId, 'organization.delete');
        const deleted = await locked.delete(environmentId, organizationId);
        if (!deleted) throw organizationNotFound();
        await record(trx, environmentId, 'organization.deleted', organizationId, by, { name: deleted.name });
      });
    },

    async listMembers(environmentId: string, organizationId: string, page: OrganizationPageQuery) {
      await existing(environmentId, organizationId);
      return store.listMembers(environmentId, organizationId, page);
    },
    listClientMembers: (environmentId: string, organizationId: string, page: OrganizationPageQuery) =>
      store.listClientMembers(environmentId, organizationId, page),
    findClientMember: (environmentId: string, organizationId: string, userId: string) => store.findClientMember(environmentId, organizationId, userId),
    findMembership: (environmentId: string, organizationId: string, userId: string) => store.findMembership(environmentId, organizationId, userId),
    /**
     * The caller's membership with the role set and the organization, read without a lock: for authorizing
     * a read, never a change (a change authorizes in its locked transaction). Undefined for a non-member,
     * as for a missing organization.
     */
    async memberOf(environmentId: string, organizationId: string, userId: string) {
      const organization = await store.find(environmentId, organizationId);
      const member = organization && await memberIn(store, environmentId, organization, userId);
      return member && { ...member, organization };
    },
    /**
     * For another domain's change under lockOrganization (an invitation): the caller's membership,
     * authorized with that transaction's reads, so the check holds until it commits.
     */
    authorizeIn: (trx: Db, environmentId: string, org: Organization, userId: string, action: Action, target?: Target) =>
      authorizeLocked(createOrganizationsStore(trx), environmentId, org, userId, action, target),
    addMember,
    /** A new role for a member; taking the owner role from the last active owner is 409 last_owner. */
    async changeRole(environmentId: string, organizationId: string, userId: string, roleKey: string, by: Caller, actorId?: string) {
      return withOrganizationLocked(environmentId, organizationId, async (locked, trx, org) => {
        if (actorId) await authorizeMemberChange(locked, environmentId, org, actorId, userId, roleKey);
        const role = roleIn(await roleSetOf(locked, environmentId, org.roleSetId), roleKey);
        const before = await ownerMayGo(locked, environmentId, organizationId, userId, role.key);
        if (before.role === role.key) return before;
        const updated = (await locked.updateRole(environmentId, organizationId, userId, role, clock.now()))!;
        await record(trx, environmentId, 'organization_membership.updated', organizationId, by, { role: role.key, previousRole: before.role }, userId);
        return updated;
      });
    },
    /** Removes a member; a signed-in `actorId` needs members:manage and every permission the member's role carries. */
    removeMember: (environmentId: string, organizationId: string, userId: string, by: Caller, actorId?: string) =>
      remove(environmentId, organizationId, userId, by, async (locked, org) => {
        if (actorId) await authorizeMemberChange(locked, environmentId, org, actorId, userId);
      }),
    /** A signed-in member leaves; the last active owner cannot (409 last_owner). */
    leave: (environmentId: string, organizationId: string, userId: string, by: Caller) =>
      remove(environmentId, organizationId, userId, by, (locked, org) => authorizeLocked(locked, environmentId, org, userId, 'leave')),
    mergeMembershipMetadata: (environmentId: string, organizationId: string, userId: string, patch: MetadataPatchBody, by: Caller) =>
      withOrganizationLocked(environmentId, organizationId, async (locked, trx) => {
        const member = await locked.findAnyMembership(environmentId, organizationId, userId);
        if (!member) throw membershipNotFound();
        const bags = mergeBags({ publicMetadata: member.publicMetadata, privateMetadata: member.privateMetadata }, patch);
        const updated = await locked.setMembershipMetadata(environmentId, organizationId, userId, bags, clock.now());
        await record(trx, environmentId, 'organization_membership.metadata_updated', organizationId, by, { changedKeys: keysNamed(patch) }, userId);
        return updated;
      }),
    /** The organization's role set (the default one without a roleSetId), each role with its permissions; 404 for an unknown organization. */
    async rolesOf(environmentId: string, organizationId: string) {
      const { roleSetId } = await existing(environmentId, organizationId);
      const { name, roles } = await roleSetOf(store, environmentId, roleSetId);
      return { roleSetId, name, roles };
    },
    /** The role of the organization's set for a key: 404 for an unknown organization, 400 invalid_role. */
    async roleOf(environmentId: string, organizationId: string, key: string): Promise<Role> {
      return roleIn(await roleSetOf(store, environmentId, (await existing(environmentId, organizationId)).roleSetId), key);
    },
    /** An operator's new role set (admin API, CLI): it must hold an `owner` role; it never changes afterwards. */
    async createRoleSet(environmentId: string, body: { name: string; roles: RoleInput[] }) {
      await environments.record(environmentId);
      const roles = body.roles.map(withPermissions);
      assertRoleSet(roles);
      return store.insertRoleSet(environmentId, { name: body.name, roles }, clock.now());
    },
    async listRoleSets(environmentId: string) {
      await environments.record(environmentId);
      return { items: await store.listRoleSets(environmentId) };
    },
    /** A user's memberships with their organizations; 404 user_not_found for an unknown user. */
    async listForUser(environmentId: string, userId: string, page: OrganizationPageQuery) {
      await users.get(environmentId, userId);
      return store.listForUser(environmentId, userId, page);
    },
  };
}
export type OrganizationsService = ReturnType<typeof createOrganizationsService>;

import { recordOwnEvent } from '../audit/service.js';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { JsonObject } from '../platform/json.js';
import { resourceNotFound, uniqueness } from './errors.js';
import { listFilter, listResponse, listWindow } from './filter.js';
import { applyPatch, patchOperations, splitMemberOperations } from './patch.js';
import { parseGroup, toScimGroup, type ScimGroup } from './resources.js';
import type { RoleResolver } from './roles.js';
import type { ScimListQuery } from './schemas.js';
import type { AuthenticatedDirectory } from './service.js';
import { createScimStore, type ScimStore } from './store.js';

export interface ScimGroupsDeps { db: Db; clock: Clock; roles: RoleResolver }

const NAME_TAKEN = 'Another Group of this directory has this displayName or externalId.';

/** Whether a list or get leaves members out (`excludedAttributes=members`, as Entra ID asks for large groups). */
export const membersExcluded = (excludedAttributes: string | undefined) =>
  (excludedAttributes ?? '').split(',').some((name) => name.trim().toLowerCase() === 'members');

/**
 * SCIM Groups of a directory: a name, an externalId and members (Users of the same directory). Membership
 * changes bring the members' organization roles in line with the directory's groupRoles once committed.
 */
export function createScimGroups({ db, clock, roles }: ScimGroupsDeps) {
  const store = createScimStore(db);

  const record = (trx: Db, dir: AuthenticatedDirectory, groupId: string, action: string, by: Caller, metadata: JsonObject) =>
    recordOwnEvent(trx, dir.environmentId, {
      action, ...by, targets: [{ type: 'scim_group', id: groupId }, { type: 'scim_directory', id: dir.id }],
      metadata: { directoryId: dir.id, ...metadata },
    }, clock.now());

  async function withMembers(reader: ScimStore, dir: AuthenticatedDirectory, groupId: string, base: string) {
    const group = await reader.findGroup(dir.environmentId, dir.id, groupId);
    if (!group) throw resourceNotFound('Group', groupId);
    const members = await reader.membersOf(dir.environmentId, dir.id, [groupId]);
    return toScimGroup(group, members.map((m) => m.user_id), base);
  }

  /**
   * Runs a change of one group with the group locked: `change` answers the new name (or undefined) and the users
   * it added and removed. The change is recorded, and roles follow after the commit.
   */
  async function changeGroup(dir: AuthenticatedDirectory, groupId: string, by: Caller, base: string,
    change: (scim: ScimStore, group: { display_name: string; external_id: string | null }) => Promise<{ displayName: string; externalId: string | null; add: string[]; remove: string[] | 'all'; set?: string[] }>) {
    const { result, affected } = await inTransaction(db, async (trx) => {
      const scim = createScimStore(trx);
      const group = await scim.lockGroup(dir.environmentId, dir.id, groupId);
      if (!group) throw resourceNotFound('Group', groupId);
      const wanted = await change(scim, group);
      const before = (await scim.membersOf(dir.environmentId, dir.id, [groupId])).map((m) => m.user_id);
      const toRemove = wanted.set ? before.filter((id) => !wanted.set!.includes(id)) : wanted.remove === 'all' ? before : wanted.remove;
      const toAdd = wanted.set ? wanted.set.filter((id) => !before.includes(id)) : wanted.add;
      const removed = await scim.removeMembers(dir.environmentId, dir.id, groupId, toRemove);
      const added = await scim.addMembers(dir.environmentId, dir.id, groupId, toAdd);
      const renamed = wanted.displayName !== group.display_name;
      if (renamed || wanted.externalId !== group.external_id) {
        if (await scim.updateGroup(dir.environmentId, dir.id, groupId, wanted, clock.now()) === 'conflict') throw uniqueness(NAME_TAKEN);
      }
      await record(trx, dir, groupId, 'scim_group.updated', by, { displayName: wanted.displayName, membersAdded: added.length, membersRemoved: removed.length });
      // A renamed group may map to another role: all its members are weighed again.
      const all = (await scim.membersOf(dir.environmentId, dir.id, [groupId])).map((m) => m.user_id);
      return { result: await withMembers(scim, dir, groupId, base), affected: [...new Set([...added, ...removed, ...(renamed ? all : [])])] };
    });
    await roles.sync(dir, affected, by);
    return result;
  }

  return {
    async create(dir: AuthenticatedDirectory, body: unknown, by: Caller, base: string): Promise<ScimGroup> {
      const input = parseGroup(body);
      const { group, added } = await inTransaction(db, async (trx) => {
        const scim = createScimStore(trx);
        const inserted = await scim.insertGroup(dir.environmentId, dir.id, input, clock.now());
        if (inserted === 'conflict') throw uniqueness(NAME_TAKEN);
        const members = await scim.addMembers(dir.environmentId, dir.id, inserted.id, input.members);
        await record(trx, dir, inserted.id, 'scim_group.created', by, { displayName: input.displayName, membersAdded: members.length });
        return { group: await withMembers(scim, dir, inserted.id, base), added: members };
      });
      await roles.sync(dir, added, by);
      return group;
    },
    async get(dir: AuthenticatedDirectory, groupId: string, base: string, excludeMembers: boolean) {
      const group = await withMembers(store, dir, groupId, base);
      return excludeMembers ? { ...group, members: undefined } : group;
    },
    async list(dir: AuthenticatedDirectory, query: ScimListQuery, base: string, excludeMembers: boolean) {
      const window = listWindow(query);
      const page = await store.listGroups(dir.environmentId, dir.id, listFilter('Group', query.filter), window);
      const members = excludeMembers ? [] : await store.membersOf(dir.environmentId, dir.id, page.items.map((g) => g.id));
      const resources = page.items.map((group) => toScimGroup(group, excludeMembers ? undefined : members.filter((m) => m.group_id === group.id).map((m) => m.user_id), base));
      return listResponse(resources, page.total, window);
    },
    replace(dir: AuthenticatedDirectory, groupId: string, body: unknown, by: Caller, base: string) {
      const input = parseGroup(body);
      return changeGroup(dir, groupId, by, base, async () => ({ displayName: input.displayName, externalId: input.externalId, add: [], remove: [], set: input.members }));
    },
    /**
     * PATCH: member operations (Entra ID's `add`/`remove` on `members`, `members[value eq "…"]`) are applied to
     * the membership rows directly, so a large group is never loaded; the rest goes through scim-patch.
     */
    patch(dir: AuthenticatedDirectory, groupId: string, body: unknown, by: Caller, base: string) {
      const { memberOps, otherOps } = splitMemberOperations(patchOperations(body));
      return changeGroup(dir, groupId, by, base, async (_scim, group) => {
        const current = { schemas: [], id: groupId, displayName: group.display_name, ...(group.external_id !== null && { externalId: group.external_id }) };
        const patched = otherOps.length ? parseGroup(applyPatch('Group', current, otherOps)) : { displayName: group.display_name, externalId: group.external_id };
        const add = memberOps.filter((op) => op.op === 'add').flatMap((op) => op.userIds);
        const replaced = memberOps.filter((op) => op.op === 'replace').at(-1);
        const removeAll = memberOps.some((op) => op.op === 'remove' && op.userIds.length === 0);
        const remove = memberOps.filter((op) => op.op === 'remove').flatMap((op) => op.userIds);
        return { displayName: patched.displayName, externalId: patched.externalId, add, remove: removeAll ? 'all' : remove, ...(replaced && { set: replaced.userIds }) };
      });
    },
    async delete(dir: AuthenticatedDirectory, groupId: string, by: Caller) {
      const members = await inTransaction(db, async (trx) => {
        const scim = createScimStore(trx);
        const former = (await scim.membersOf(dir.environmentId, dir.id, [groupId])).map((m) => m.user_id);
        const deleted = await scim.deleteGroup(dir.environmentId, dir.id, groupId);
        if (!deleted) throw resourceNotFound('Group', groupId);
        await record(trx, dir, groupId, 'scim_group.deleted', by, { displayName: deleted.display_name, membersRemoved: former.length });
        return former;
      });
      await roles.sync(dir, members, by);
    },
  };
}
export type ScimGroups = ReturnType<typeof createScimGroups>;

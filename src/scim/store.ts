import { sql, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { isUniqueViolation, jsonb, type Db } from '../platform/db/database.js';
import type { UserRow } from '../platform/db/tables.js';
import type { Directory } from './schemas.js';
import type { ScimDirectoryRow, ScimGroupRow, ScimUserRow } from './tables.js';
import './tables.js';

/** What a SCIM User is made of: the directory's link row and the Gatehouse user it names. */
export interface LinkedUser { link: Selectable<ScimUserRow>; user: Selectable<UserRow> }
export type GroupRow = Selectable<ScimGroupRow>;

/** The one attribute a list may be filtered on (an `eq` filter), already mapped to its column. */
export interface ListFilter { attribute: 'userName' | 'externalId' | 'displayName'; value: string }
export interface Window { startIndex: number; count: number }

export const toDirectory = (row: Selectable<ScimDirectoryRow>): Directory => ({
  id: row.id, organizationId: row.organization_id, name: row.name, groupRoles: row.group_roles as Record<string, string>,
  createdAt: row.created_at.toISOString(), updatedAt: row.updated_at.toISOString(),
});

/** Every statement of the SCIM domain; each one is scoped by environment, and below the directory by it too. */
export function createScimStore(db: Db) {
  const linkedUsers = (environmentId: string, directoryId: string) =>
    db.selectFrom('scim_users as s')
      .innerJoin('users as u', (join) => join.onRef('u.environment_id', '=', 's.environment_id').onRef('u.id', '=', 's.user_id'))
      .selectAll('u').select(['s.user_name', 's.external_id', 's.created_user', 's.banned_by_directory', 's.created_at as link_created_at', 's.updated_at as link_updated_at', 's.directory_id', 's.user_id'])
      .where('s.environment_id', '=', environmentId).where('s.directory_id', '=', directoryId);
  type Joined = Awaited<ReturnType<ReturnType<typeof linkedUsers>['executeTakeFirstOrThrow']>>;
  const toLinked = (row: Joined): LinkedUser => {
    const { user_name, external_id, created_user, banned_by_directory, link_created_at, link_updated_at, directory_id, user_id, ...user } = row;
    return {
      link: { environment_id: user.environment_id, directory_id, user_id, user_name, external_id, created_user, banned_by_directory, created_at: link_created_at, updated_at: link_updated_at },
      user,
    };
  };

  return {
    insertDirectory: (environmentId: string, organizationId: string, name: string, tokenHash: Buffer, now: Date) =>
      db.insertInto('scim_directories').values({
        environment_id: environmentId, id: uuidv7(), organization_id: organizationId, name, token_hash: tokenHash,
        group_roles: jsonb({}), created_at: now, updated_at: now,
      }).returningAll().executeTakeFirstOrThrow().then(toDirectory),
    listDirectories: (environmentId: string, organizationId: string) =>
      db.selectFrom('scim_directories').selectAll().where('environment_id', '=', environmentId).where('organization_id', '=', organizationId)
        .orderBy('id').execute().then((rows) => rows.map(toDirectory)),
    findDirectory: (environmentId: string, organizationId: string, directoryId: string) =>
      db.selectFrom('scim_directories').selectAll().where('environment_id', '=', environmentId).where('organization_id', '=', organizationId)
        .where('id', '=', directoryId).executeTakeFirst().then((row) => row && toDirectory(row)),
    /** The directory a bearer token opens, by the token's hash; it must be the directory the path names. */
    findByToken: (directoryId: string, tokenHash: Buffer) =>
      db.selectFrom('scim_directories').selectAll().where('token_hash', '=', tokenHash).where('id', '=', directoryId)
        .executeTakeFirst().then((row) => row && { ...toDirectory(row), environmentId: row.environment_id }),
    updateDirectory: (environmentId: string, directoryId: string, changes: { tokenHash?: Buffer; groupRoles?: Record<string, string>; name?: string }, now: Date) =>
      db.updateTable('scim_directories').set({
        ...(changes.tokenHash && { token_hash: changes.tokenHash }),
        ...(changes.groupRoles && { group_roles: jsonb(changes.groupRoles) }),
        ...(changes.name !== undefined && { name: changes.name }),
        updated_at: now,
      }).where('environment_id', '=', environmentId).where('id', '=', directoryId).returningAll().executeTakeFirst().then((row) => row && toDirectory(row)),
    deleteDirectory: (environmentId: string, directoryId: string) =>
      db.deleteFrom('scim_directories').where('environment_id', '=', environmentId).where('id', '=', directoryId).executeTakeFirst()
        .then((result) => result.numDeletedRows > 0n),

    /** 'conflict' when the directory already has this userName or externalId. */
    async insertUserLink(environmentId: string, directoryId: string, userId: string, link: { userName: string; externalId: string | null; createdUser: boolean }, now: Date) {
      try {
        await db.insertInto('scim_users').values({
          environment_id: environmentId, directory_id: directoryId, user_id: userId, user_name: link.userName, external_id: link.externalId,
          created_user: link.createdUser, created_at: now, updated_at: now,
        }).execute();
        return 'inserted' as const;
      } catch (err) {
        if (isUniqueViolation(err)) return 'conflict' as const;
        throw err;
      }
    },
    async updateUserLink(environmentId: string, directoryId: string, userId: string, link: { userName: string; externalId: string | null }, now: Date) {
      try {
        await db.updateTable('scim_users').set({ user_name: link.userName, external_id: link.externalId, updated_at: now })
          .where('environment_id', '=', environmentId).where('directory_id', '=', directoryId).where('user_id', '=', userId).execute();
        return 'updated' as const;
      } catch (err) {
        if (isUniqueViolation(err)) return 'conflict' as const;
        throw err;
      }
    },
    /** Records whether the directory's own ban is the one on the user. */
    setBannedByDirectory: (environmentId: string, directoryId: string, userId: string, banned: boolean) =>
      db.updateTable('scim_users').set({ banned_by_directory: banned })
        .where('environment_id', '=', environmentId).where('directory_id', '=', directoryId).where('user_id', '=', userId).execute(),
    deleteUserLink: (environmentId: string, directoryId: string, userId: string) =>
      db.deleteFrom('scim_users').where('environment_id', '=', environmentId).where('directory_id', '=', directoryId).where('user_id', '=', userId)
        .returningAll().executeTakeFirst(),
    findLinkedUser: (environmentId: string, directoryId: string, userId: string) =>
      linkedUsers(environmentId, directoryId).where('s.user_id', '=', userId).executeTakeFirst().then((row) => row && toLinked(row)),
    /** A page of the directory's users in creation order, and how many match in all. */
    async listLinkedUsers(environmentId: string, directoryId: string, filter: ListFilter | undefined, window: Window) {
      let query = linkedUsers(environmentId, directoryId);
      if (filter?.attribute === 'userName') query = query.where(sql<string>`lower(s.user_name)`, '=', filter.value.toLowerCase());
      if (filter?.attribute === 'externalId') query = query.where('s.external_id', '=', filter.value);
      const [rows, total] = await Promise.all([
        query.orderBy('s.user_id').offset(window.startIndex - 1).limit(window.count).execute(),
        query.clearSelect().select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toLinked), total: Number(total.n) };
    },

    /** 'conflict' when the directory has a group with this displayName or externalId. */
    async insertGroup(environmentId: string, directoryId: string, group: { displayName: string; externalId: string | null }, now: Date) {
      try {
        return await db.insertInto('scim_groups').values({
          environment_id: environmentId, directory_id: directoryId, id: uuidv7(), display_name: group.displayName, external_id: group.externalId,
          created_at: now, updated_at: now,
        }).returningAll().executeTakeFirstOrThrow();
      } catch (err) {
        if (isUniqueViolation(err)) return 'conflict' as const;
        throw err;
      }
    },
    async updateGroup(environmentId: string, directoryId: string, groupId: string, group: { displayName: string; externalId: string | null }, now: Date) {
      try {
        return await db.updateTable('scim_groups').set({ display_name: group.displayName, external_id: group.externalId, updated_at: now })
          .where('environment_id', '=', environmentId).where('directory_id', '=', directoryId).where('id', '=', groupId)
          .returningAll().executeTakeFirst();
      } catch (err) {
        if (isUniqueViolation(err)) return 'conflict' as const;
        throw err;
      }
    },
    /** The group, locked for the caller's transaction (membership changes run one at a time per group). */
    lockGroup: (environmentId: string, directoryId: string, groupId: string) =>
      db.selectFrom('scim_groups').selectAll().where('environment_id', '=', environmentId).where('directory_id', '=', directoryId)
        .where('id', '=', groupId).forUpdate().executeTakeFirst(),
    findGroup: (environmentId: string, directoryId: string, groupId: string) =>
      db.selectFrom('scim_groups').selectAll().where('environment_id', '=', environmentId).where('directory_id', '=', directoryId)
        .where('id', '=', groupId).executeTakeFirst(),
    deleteGroup: (environmentId: string, directoryId: string, groupId: string) =>
      db.deleteFrom('scim_groups').where('environment_id', '=', environmentId).where('directory_id', '=', directoryId).where('id', '=', groupId)
        .returningAll().executeTakeFirst(),
    async listGroups(environmentId: string, directoryId: string, filter: ListFilter | undefined, window: Window) {
      let query = db.selectFrom('scim_groups').where('environment_id', '=', environmentId).where('directory_id', '=', directoryId);
      if (filter?.attribute === 'displayName') query = query.where(sql<string>`lower(display_name)`, '=', filter.value.toLowerCase());
      if (filter?.attribute === 'externalId') query = query.where('external_id', '=', filter.value);
      const [rows, total] = await Promise.all([
        query.selectAll().orderBy('id').offset(window.startIndex - 1).limit(window.count).execute(),
        query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items: rows, total: Number(total.n) };
    },
    /** The members of these groups, as [groupId, userId] pairs in user order. */
    membersOf: (environmentId: string, directoryId: string, groupIds: string[]) =>
      groupIds.length === 0 ? Promise.resolve([]) : db.selectFrom('scim_group_members').select(['group_id', 'user_id'])
        .where('environment_id', '=', environmentId).where('directory_id', '=', directoryId).where('group_id', 'in', groupIds)
        .orderBy('user_id').execute(),
    /** Adds members that the directory provisioned (others are skipped); answers the user ids added. */
    addMembers: (environmentId: string, directoryId: string, groupId: string, userIds: string[]) =>
      userIds.length === 0 ? Promise.resolve([]) : sql<{ user_id: string }>`
        insert into scim_group_members (environment_id, directory_id, group_id, user_id)
        select s.environment_id, s.directory_id, ${groupId}::uuid, s.user_id from scim_users s
        where s.environment_id = ${environmentId}::uuid and s.directory_id = ${directoryId}::uuid and s.user_id = any(${userIds}::uuid[])
        on conflict do nothing returning user_id`.execute(db).then((r) => r.rows.map((row) => row.user_id)),
    removeMembers: (environmentId: string, directoryId: string, groupId: string, userIds: string[]) =>
      userIds.length === 0 ? Promise.resolve([]) : db.deleteFrom('scim_group_members')
        .where('environment_id', '=', environmentId).where('directory_id', '=', directoryId).where('group_id', '=', groupId)
        .where('user_id', 'in', userIds).returning('user_id').execute().then((rows) => rows.map((row) => row.user_id)),
    /** The displayNames of the user's groups in the directory: what their role follows. */
    groupNamesOf: (environmentId: string, directoryId: string, userId: string) =>
      db.selectFrom('scim_group_members as m')
        .innerJoin('scim_groups as g', (join) => join.onRef('g.environment_id', '=', 'm.environment_id').onRef('g.directory_id', '=', 'm.directory_id').onRef('g.id', '=', 'm.group_id'))
        .select('g.display_name').where('m.environment_id', '=', environmentId).where('m.directory_id', '=', directoryId).where('m.user_id', '=', userId)
        .execute().then((rows) => rows.map((row) => row.display_name)),
  };
}
export type ScimStore = ReturnType<typeof createScimStore>;

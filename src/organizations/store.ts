import { sql, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { containsPattern, isUniqueViolation, jsonb, type Db } from '../platform/db/database.js';
import type { OrganizationMembershipRow, OrganizationRoleSetRow, OrganizationRow } from '../platform/db/tables.js';
import { toPage } from '../platform/http/pagination.js';
import type { JsonObject } from '../platform/json.js';
import { isPermission, withPermissions, type Role, type RoleSet } from './roles.js';
import type { ClientMember, ClientOrganization, Organization, OrganizationMember, OrganizationPageQuery, UserOrganization } from './schemas.js';

export interface NewOrganization {
  name: string; slug: string | null; roleSetId: string | null; publicMetadata: JsonObject; privateMetadata: JsonObject;
}
export interface Bags { publicMetadata: JsonObject; privateMetadata: JsonObject }

const SLUG_KEY = 'organizations_slug_key';

export function createOrganizationsStore(db: Db) {
  const byId = (environmentId: string, id: string) =>
    db.updateTable('organizations').where('environment_id', '=', environmentId).where('id', '=', id);
  /** Memberships that count: their user is active (a banned or deleted user's stop counting). */
  const liveMemberships = (environmentId: string) =>
    db.selectFrom('organization_memberships as m')
      .innerJoin('users as u', (join) => join.onRef('u.environment_id', '=', 'm.environment_id').onRef('u.id', '=', 'm.user_id'))
      .where('m.environment_id', '=', environmentId).where('u.status', '=', 'active');

  return {
    async insert(environmentId: string, org: NewOrganization, now: Date): Promise<Organization | 'slug_taken'> {
      try {
        const row = await db.insertInto('organizations').values({
          environment_id: environmentId, id: uuidv7(), name: org.name, slug: org.slug, role_set_id: org.roleSetId,
          public_metadata: jsonb(org.publicMetadata), private_metadata: jsonb(org.privateMetadata), created_at: now, updated_at: now,
        }).returningAll().executeTakeFirstOrThrow();
        return toOrganization(row);
      } catch (err) {
        if (isUniqueViolation(err, SLUG_KEY)) return 'slug_taken';
        throw err;
      }
    },
    find: (environmentId: string, id: string) =>
      db.selectFrom('organizations').selectAll().where('environment_id', '=', environmentId).where('id', '=', id)
        .executeTakeFirst().then((row) => row && toOrganization(row)),
    /**
     * Locks the organization until the transaction ends: every change to its owners takes this lock first,
     * so two concurrent demotions or removals run one after the other and the second sees the first.
     */
    lock: (environmentId: string, id: string) =>
      db.selectFrom('organizations').selectAll().where('environment_id', '=', environmentId).where('id', '=', id)
        .forUpdate().executeTakeFirst().then((row) => row && toOrganization(row)),
    /** Name filter: a case-insensitive literal substring (the trigram index on lower(name) serves it). */
    async list(environmentId: string, filter: { name?: string }, page: OrganizationPageQuery) {
      let query = db.selectFrom('organizations').selectAll().where('environment_id', '=', environmentId);
      if (filter.name) query = query.where(sql<boolean>`lower(name) like ${containsPattern(filter.name)} escape '\\'`);
      if (page.cursor) query = query.where('id', '>', page.cursor);
      const rows = await query.orderBy('id').limit(page.limit + 1).execute();
      return toPage(rows.map(toOrganization), page.limit);
    },
    async update(environmentId: string, id: string, changes: { name?: string; slug?: string | null }, now: Date): Promise<Organization | undefined | 'slug_taken'> {
      try {
        const row = await byId(environmentId, id).set({
          ...(changes.name !== undefined && { name: changes.name }), ...(changes.slug !== undefined && { slug: changes.slug }), updated_at: now,
        }).returningAll().executeTakeFirst();
        return row && toOrganization(row);
      } catch (err) {
        if (isUniqueViolation(err, SLUG_KEY)) return 'slug_taken';
        throw err;
      }
    },
    setMetadata: (environmentId: string, id: string, bags: Bags, now: Date) =>
      byId(environmentId, id).set({ public_metadata: jsonb(bags.publicMetadata), private_metadata: jsonb(bags.privateMetadata), updated_at: now })
        .returningAll().executeTakeFirstOrThrow().then(toOrganization),
    /** Deletes the organization and (by cascade) its memberships; undefined when there was none. */
    delete: (environmentId: string, id: string) =>
      db.deleteFrom('organizations').where('environment_id', '=', environmentId).where('id', '=', id)
        .returningAll().executeTakeFirst().then((row) => row && toOrganization(row)),

    /**
     * Adds an active user (one statement: the user row is read FOR SHARE, so a ban or delete waits or wins);
     * 'already_member' when the membership exists, undefined when the user is not active.
     */
    async insertMembership(environmentId: string, organizationId: string, userId: string, role: Role, bags: Bags, now: Date) {
      const { rows } = await sql<Selectable<OrganizationMembershipRow>>`
        insert into organization_memberships (environment_id, organization_id, user_id, role, role_name, public_metadata, private_metadata, created_at, updated_at)
        select u.environment_id, ${organizationId}::uuid, u.id, ${role.key}, ${role.name}, ${jsonb(bags.publicMetadata)}::jsonb, ${jsonb(bags.privateMetadata)}::jsonb,
               ${now}::timestamptz, ${now}::timestamptz
        from users u where u.environment_id = ${environmentId} and u.id = ${userId} and u.status = 'active'
        for share
        on conflict (environment_id, organization_id, user_id) do nothing
        returning *`.execute(db);
      if (rows[0]) return toMember(rows[0]);
      const existing = await db.selectFrom('organization_memberships').select('user_id')
        .where('environment_id', '=', environmentId).where('organization_id', '=', organizationId).where('user_id', '=', userId).executeTakeFirst();
      return existing ? 'already_member' as const : undefined;
    },
    /** The membership whatever its user's status (management of a banned or deleted user's membership). */
    findAnyMembership: (environmentId: string, organizationId: string, userId: string) =>
      db.selectFrom('organization_memberships').selectAll()
        .where('environment_id', '=', environmentId).where('organization_id', '=', organizationId).where('user_id', '=', userId)
        .executeTakeFirst().then((row) => row && toMember(row)),
    /** The membership of an active user; undefined otherwise. */
    findMembership: (environmentId: string, organizationId: string, userId: string) =>
      liveMemberships(environmentId).selectAll('m').where('m.organization_id', '=', organizationId).where('m.user_id', '=', userId)
        .executeTakeFirst().then((row) => row && toMember(row)),
    /** Active owners other than this user. */
    countOtherOwners: (environmentId: string, organizationId: string, userId: string) =>
      liveMemberships(environmentId).select((eb) => eb.fn.countAll<number>().as('owners'))
        .where('m.organization_id', '=', organizationId).where('m.role', '=', 'owner').where('m.user_id', '!=', userId)
        .executeTakeFirstOrThrow().then((row) => Number(row.owners)),
    /** Members in user id order (creation order: ids are uuid v7), which is also the seek key. */
    async listMembers(environmentId: string, organizationId: string, page: OrganizationPageQuery) {
      let query = liveMemberships(environmentId).selectAll('m').where('m.organization_id', '=', organizationId);
      // The bound on both sides of the join: PostgreSQL does not carry it across, and a plan that walks the
      // users index would start from the environment's first user on every page.
      if (page.cursor) query = query.where('m.user_id', '>', page.cursor).where('u.id', '>', page.cursor);
      const rows = await query.orderBy('m.user_id').limit(page.limit + 1).execute();
      return toPage(rows.map(toMember), page.limit, (m) => m.userId);
    },
    /** The same page for the client plane: who each member is, never the membership's private metadata. */
    async listClientMembers(environmentId: string, organizationId: string, page: OrganizationPageQuery) {
      let query = clientMembers(environmentId, organizationId);
      // The bound on both sides of the join: PostgreSQL does not carry it across, and a plan that walks the
      // users index would start from the environment's first user on every page.
      if (page.cursor) query = query.where('m.user_id', '>', page.cursor).where('u.id', '>', page.cursor);
      const rows = await query.orderBy('m.user_id').limit(page.limit + 1).execute();
      return toPage(rows.map(toClientMember), page.limit, (m) => m.userId);
    },
    findClientMember: (environmentId: string, organizationId: string, userId: string) =>
      clientMembers(environmentId, organizationId).where('m.user_id', '=', userId).executeTakeFirst().then((row) => row && toClientMember(row)),
    /** A user's memberships with their organizations, in organization id order. */
    async listForUser(environmentId: string, userId: string, page: OrganizationPageQuery) {
      let query = db.selectFrom('organization_memberships as m')
        .innerJoin('organizations as o', (join) => join.onRef('o.environment_id', '=', 'm.environment_id').onRef('o.id', '=', 'm.organization_id'))
        .selectAll('m').select(['o.name', 'o.slug', 'o.role_set_id', 'o.public_metadata as org_public', 'o.private_metadata as org_private', 'o.created_at as org_created'])
        .where('m.environment_id', '=', environmentId).where('m.user_id', '=', userId);
      if (page.cursor) query = query.where('m.organization_id', '>', page.cursor);
      const rows = await query.orderBy('m.organization_id').limit(page.limit + 1).execute();
      return toPage(rows.map((r): UserOrganization => ({
        ...toMember(r),
        organization: {
          id: r.organization_id, name: r.name, slug: r.slug, roleSetId: r.role_set_id,
          publicMetadata: r.org_public, privateMetadata: r.org_private, createdAt: r.org_created.toISOString(),
        },
      })), page.limit, (m) => m.organizationId);
    },
    updateRole: (environmentId: string, organizationId: string, userId: string, role: Role, now: Date) =>
      memberships(environmentId, organizationId, userId).set({ role: role.key, role_name: role.name, updated_at: now })
        .returningAll().executeTakeFirst().then((row) => row && toMember(row)),
    setMembershipMetadata: (environmentId: string, organizationId: string, userId: string, bags: Bags, now: Date) =>
      memberships(environmentId, organizationId, userId)
        .set({ public_metadata: jsonb(bags.publicMetadata), private_metadata: jsonb(bags.privateMetadata), updated_at: now })
        .returningAll().executeTakeFirstOrThrow().then(toMember),
    insertRoleSet: (environmentId: string, set: { name: string; roles: Role[] }, now: Date) =>
      db.insertInto('organization_role_sets').values({ environment_id: environmentId, id: uuidv7(), name: set.name, roles: jsonb(set.roles), created_at: now })
        .returningAll().executeTakeFirstOrThrow().then(toRoleSet),
    findRoleSet: (environmentId: string, id: string) =>
      db.selectFrom('organization_role_sets').selectAll().where('environment_id', '=', environmentId).where('id', '=', id)
        .executeTakeFirst().then((row) => row && toRoleSet(row)),
    listRoleSets: (environmentId: string) =>
      db.selectFrom('organization_role_sets').selectAll().where('environment_id', '=', environmentId).orderBy('id').execute()
        .then((rows) => rows.map(toRoleSet)),
    deleteMembership: (environmentId: string, organizationId: string, userId: string) =>
      db.deleteFrom('organization_memberships')
        .where('environment_id', '=', environmentId).where('organization_id', '=', organizationId).where('user_id', '=', userId)
        .returningAll().executeTakeFirst().then((row) => row && toMember(row)),
  };

  function clientMembers(environmentId: string, organizationId: string) {
    return liveMemberships(environmentId).where('m.organization_id', '=', organizationId)
      .select(['m.user_id', 'm.role', 'm.role_name', 'm.public_metadata', 'm.created_at', 'u.email', 'u.name']);
  }

  function memberships(environmentId: string, organizationId: string, userId: string) {
    return db.updateTable('organization_memberships')
      .where('environment_id', '=', environmentId).where('organization_id', '=', organizationId).where('user_id', '=', userId);
  }
}
export type OrganizationsStore = ReturnType<typeof createOrganizationsStore>;

const toRoleSet = (row: Selectable<OrganizationRoleSetRow>): RoleSet & { id: string; createdAt: string } =>
  ({ id: row.id, name: row.name, roles: row.roles.map(toRole), createdAt: row.created_at.toISOString() });
// Every stored role carries permissions since migration 0017; withPermissions still fills in a role that a
// process of the version before wrote during a rolling upgrade, as that version's rules were exactly the defaults.
const toRole = ({ key, name, permissions }: OrganizationRoleSetRow['roles'][number]): Role =>
  withPermissions({ key, name, permissions: permissions?.filter(isPermission) });

const toOrganization = (row: Selectable<OrganizationRow>): Organization => ({
  id: row.id, name: row.name, slug: row.slug, roleSetId: row.role_set_id,
  publicMetadata: row.public_metadata, privateMetadata: row.private_metadata, createdAt: row.created_at.toISOString(),
});

const toMember = (row: Selectable<OrganizationMembershipRow>): OrganizationMember => ({
  organizationId: row.organization_id, userId: row.user_id, role: row.role, roleName: row.role_name,
  publicMetadata: row.public_metadata, privateMetadata: row.private_metadata, joinedAt: row.created_at.toISOString(),
});

interface ClientMemberRow { user_id: string; role: string; role_name: string | null; public_metadata: JsonObject; created_at: Date; email: string | null; name: string | null }
const toClientMember = (r: ClientMemberRow): ClientMember => ({
  userId: r.user_id, email: r.email, name: r.name, role: r.role, roleName: r.role_name, publicMetadata: r.public_metadata, joinedAt: r.created_at.toISOString(),
});

/** The client form: the organization as one of its members sees it, with their role. */
export const toClientOrganization = (org: Organization, { role, roleName }: Pick<OrganizationMember, 'role' | 'roleName'>): ClientOrganization =>
  ({ id: org.id, name: org.name, slug: org.slug, role, roleName, createdAt: org.createdAt });

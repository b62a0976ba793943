import type { OrganizationsService } from '../organizations/service.js';
import type { Role } from '../organizations/roles.js';
import type { Caller } from '../platform/caller.js';
import type { Db } from '../platform/db/database.js';
import { ProblemError } from '../platform/http/problem.js';
import type { AuthenticatedDirectory } from './service.js';
import { createScimStore } from './store.js';

export interface RoleResolverDeps { db: Db; organizations: Pick<OrganizationsService, 'rolesOf' | 'findMembership' | 'changeRole'> }

const DEFAULT_ROLE = 'member';

/**
 * Groups map to roles through the directory's `groupRoles` ({"<displayName>": "<role key>"}, names compared
 * case-insensitively). A provisioned member holds the highest mapped role of their groups, the role set's order
 * being its rank (owner, admin, member by default); with no mapped group, `member` (or the set's last role).
 */
export function createRoleResolver({ db, organizations }: RoleResolverDeps) {
  const store = createScimStore(db);

  async function roleOf(dir: AuthenticatedDirectory, groupNames: string[]): Promise<Role> {
    const { roles } = await organizations.rolesOf(dir.environmentId, dir.organizationId);
    const mapping = new Map(Object.entries(dir.groupRoles).map(([name, role]) => [name.toLowerCase(), role]));
    const mapped = new Set(groupNames.map((name) => mapping.get(name.toLowerCase())).filter((role) => role !== undefined));
    return roles.find((role) => mapped.has(role.key)) ?? roles.find((role) => role.key === DEFAULT_ROLE) ?? roles[roles.length - 1]!;
  }

  return {
    roleOf,
    /**
     * Brings the members' roles in line with their groups after a group change. Without a mapping roles are the
     * organization's to manage and nothing changes. Taking the owner role from the last owner is left undone.
     */
    async sync(dir: AuthenticatedDirectory, userIds: string[], by: Caller) {
      if (Object.keys(dir.groupRoles).length === 0) return;
      for (const userId of userIds) {
        const membership = await organizations.findMembership(dir.environmentId, dir.organizationId, userId);
        if (!membership) continue;
        const role = await roleOf(dir, await store.groupNamesOf(dir.environmentId, dir.id, userId));
        if (membership.role === role.key) continue;
        try {
          await organizations.changeRole(dir.environmentId, dir.organizationId, userId, role.key, by);
        } catch (err) {
          if (!(err instanceof ProblemError && err.code === 'last_owner')) throw err;
        }
      }
    },
  };
}
export type RoleResolver = ReturnType<typeof createRoleResolver>;

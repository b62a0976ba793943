import type { OrganizationsService } from '../organizations/service.js';
import { mappedRole, type Role } from '../organizations/roles.js';
import type { Caller } from '../platform/caller.js';
import type { Db } from '../platform/db/database.js';
import { ProblemError } from '../platform/http/problem.js';
import type { AuthenticatedDirectory } from './service.js';
import { createScimStore } from './store.js';

export interface RoleResolverDeps { db: Db; organizations: Pick<OrganizationsService, 'rolesOf' | 'findMembership' | 'changeRole'> }

/** Groups map to roles through the directory's `groupRoles` ({"<displayName>": "<role key>"}), as mappedRole reads them. */
export function createRoleResolver({ db, organizations }: RoleResolverDeps) {
  const store = createScimStore(db);

  async function roleOf(dir: AuthenticatedDirectory, groupNames: string[]): Promise<Role> {
    const { roles } = await organizations.rolesOf(dir.environmentId, dir.organizationId);
    return mappedRole(roles, dir.groupRoles, groupNames);
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

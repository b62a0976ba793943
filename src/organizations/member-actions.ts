import type { Caller } from '../platform/caller.js';
import { forbidden, organizationNotFound } from './errors.js';
import { ADMIN, OWNER } from './roles.js';
import type { ChangeRoleBody, ClientCreateOrganizationBody, OrganizationPageQuery, UpdateOrganizationBody } from './schemas.js';
import type { OrganizationsService } from './service.js';
import { toClientOrganization } from './store.js';

const MANAGERS = [OWNER, ADMIN];

/**
 * What a signed-in user may do to organizations on the client plane: the caller's own membership decides.
 * An organization the caller is not a member of is indistinguishable from a missing one (404); a role too
 * low is 403 forbidden. Changes of memberships and deletion check the caller under the organization lock
 * (the service's `actorId`), so a concurrent role change cannot slip in between.
 */
export function createMemberActions(organizations: OrganizationsService) {
  async function membershipOf(environmentId: string, organizationId: string, userId: string) {
    const membership = await organizations.findMembership(environmentId, organizationId, userId);
    if (!membership) throw organizationNotFound();
    return membership;
  }
  async function asRole(environmentId: string, organizationId: string, userId: string, roles: string[], what: string) {
    const membership = await membershipOf(environmentId, organizationId, userId);
    if (!roles.includes(membership.role)) throw forbidden(`Only ${roles.join(' or ')} members can ${what}.`);
    return membership;
  }

  return {
    async create(environmentId: string, userId: string, body: ClientCreateOrganizationBody, by: Caller) {
      const organization = await organizations.create(environmentId, { ...body, createdBy: userId }, by);
      return toClientOrganization(organization, (await organizations.findMembership(environmentId, organization.id, userId))!);
    },
    async listMine(environmentId: string, userId: string, page: OrganizationPageQuery) {
      const memberships = await organizations.listForUser(environmentId, userId, page);
      return { ...memberships, items: memberships.items.map((m) => toClientOrganization(m.organization, m)) };
    },
    async get(environmentId: string, organizationId: string, userId: string) {
      const membership = await membershipOf(environmentId, organizationId, userId);
      return toClientOrganization(await organizations.get(environmentId, organizationId), membership);
    },
    async update(environmentId: string, organizationId: string, userId: string, changes: UpdateOrganizationBody, by: Caller) {
      const membership = await asRole(environmentId, organizationId, userId, MANAGERS, 'rename an organization');
      return toClientOrganization(await organizations.update(environmentId, organizationId, changes, by), membership);
    },
    delete: (environmentId: string, organizationId: string, userId: string, by: Caller) =>
      organizations.delete(environmentId, organizationId, by, userId),
    async listMembers(environmentId: string, organizationId: string, userId: string, page: OrganizationPageQuery) {
      await membershipOf(environmentId, organizationId, userId);
      return organizations.listClientMembers(environmentId, organizationId, page);
    },
    async changeRole(environmentId: string, organizationId: string, userId: string, memberId: string, { role }: ChangeRoleBody, by: Caller) {
      await organizations.changeRole(environmentId, organizationId, memberId, role, by, userId);
      return (await organizations.findClientMember(environmentId, organizationId, memberId))!;
    },
    removeMember: (environmentId: string, organizationId: string, userId: string, memberId: string, by: Caller) =>
      organizations.removeMember(environmentId, organizationId, memberId, by, userId),
    async leave(environmentId: string, organizationId: string, userId: string, by: Caller) {
      await membershipOf(environmentId, organizationId, userId);
      await organizations.removeMember(environmentId, organizationId, userId, by);
    },
  };
}
export type MemberActions = ReturnType<typeof createMemberActions>;

import type { Caller } from '../platform/caller.js';
import { authorize } from './policy.js';
import type { ChangeRoleBody, ClientCreateOrganizationBody, OrganizationPageQuery, UpdateOrganizationBody } from './schemas.js';
import type { OrganizationsService } from './service.js';
import { toClientOrganization } from './store.js';

/**
 * What a signed-in user may do to organizations on the client plane: policy.ts decides from the caller's
 * own membership. Changes pass the caller to the service, which authorizes them under the organization
 * lock the change holds. Reads authorize from a membership read without the lock: a read changes nothing,
 * so a role change that lands just after it allows nothing it should not have.
 */
export function createMemberActions(organizations: OrganizationsService) {
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
      const member = await organizations.memberOf(environmentId, organizationId, userId);
      authorize(member, 'organization.read');
      return toClientOrganization(member.organization, member);
    },
    update: (environmentId: string, organizationId: string, userId: string, changes: UpdateOrganizationBody, by: Caller) =>
      organizations.updateAsMember(environmentId, organizationId, userId, changes, by),
    delete: (environmentId: string, organizationId: string, userId: string, by: Caller) =>
      organizations.delete(environmentId, organizationId, by, userId),
    async listMembers(environmentId: string, organizationId: string, userId: string, page: OrganizationPageQuery) {
      authorize(await organizations.memberOf(environmentId, organizationId, userId), 'members.read');
      return organizations.listClientMembers(environmentId, organizationId, page);
    },
    async changeRole(environmentId: string, organizationId: string, userId: string, memberId: string, { role }: ChangeRoleBody, by: Caller) {
      await organizations.changeRole(environmentId, organizationId, memberId, role, by, userId);
      return (await organizations.findClientMember(environmentId, organizationId, memberId))!;
    },
    removeMember: (environmentId: string, organizationId: string, userId: string, memberId: string, by: Caller) =>
      organizations.removeMember(environmentId, organizationId, memberId, by, userId),
    leave: (environmentId: string, organizationId: string, userId: string, by: Caller) =>
      organizations.leave(environmentId, organizationId, userId, by),
  };
}
export type MemberActions = ReturnType<typeof createMemberActions>;

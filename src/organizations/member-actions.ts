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
 * low is 403 forbidden; an admin manages members but never owners, and never makes one.
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
  /** An admin may not act on an owner's membership, nor hand out the owner role. */
  async function assertMayManage(environmentId: string, organizationId: string, actorRole: string, targetUserId: string, newRole?: string) {
    if (actorRole === OWNER) return;
    const target = await organizations.findMembership(environmentId, organizationId, targetUserId);
    if (target?.role === OWNER || newRole === OWNER) throw forbidden('Only an owner can change or remove an owner, or make a member owner.');
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
    async delete(environmentId: string, organizationId: string, userId: string, by: Caller) {
      await asRole(environmentId, organizationId, userId, [OWNER], 'delete an organization');
      await organizations.delete(environmentId, organizationId, by);
    },
    async listMembers(environmentId: string, organizationId: string, userId: string, page: OrganizationPageQuery) {
      await membershipOf(environmentId, organizationId, userId);
      return organizations.listClientMembers(environmentId, organizationId, page);
    },
    async changeRole(environmentId: string, organizationId: string, userId: string, memberId: string, { role }: ChangeRoleBody, by: Caller) {
      const actor = await asRole(environmentId, organizationId, userId, MANAGERS, 'change roles');
      await assertMayManage(environmentId, organizationId, actor.role, memberId, role);
      await organizations.changeRole(environmentId, organizationId, memberId, role, by);
      return (await organizations.findClientMember(environmentId, organizationId, memberId))!;
    },
    async removeMember(environmentId: string, organizationId: string, userId: string, memberId: string, by: Caller) {
      const actor = await asRole(environmentId, organizationId, userId, MANAGERS, 'remove members');
      await assertMayManage(environmentId, organizationId, actor.role, memberId);
      await organizations.removeMember(environmentId, organizationId, memberId, by);
    },
    async leave(environmentId: string, organizationId: string, userId: string, by: Caller) {
      await membershipOf(environmentId, organizationId, userId);
      await organizations.removeMember(environmentId, organizationId, userId, by);
    },
  };
}
export type MemberActions = ReturnType<typeof createMemberActions>;

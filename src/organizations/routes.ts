import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { NoContent, noContent, Page } from '../platform/http/common-schemas.js';
import { clientCaller, NOT_UNDER_IMPERSONATION, serverCaller, signedIn } from '../platform/http/planes.js';
import { UserParams } from '../users/schemas.js';
import type { MemberActions } from './member-actions.js';
import {
  AddMemberBody, ChangeRoleBody, CreateRoleSetBody, RoleSet, RoleSetParams, ClientCreateOrganizationBody, ClientMember, ClientOrganization, CreateOrganizationBody, ListOrganizationsQuery,
  MemberParams, MetadataPatchBody, Organization, OrganizationMember, OrganizationPageQuery, OrganizationParams, OrganizationRoles, UpdateOrganizationBody, UserOrganization,
} from './schemas.js';
import type { OrganizationsService } from './service.js';

const tags = ['Organizations'];
const LAST_OWNER = 'An organization always keeps an active owner: taking the owner role from the last one, or removing them, is 409 last_owner.';

/** Server API: organizations, their memberships and a user's organizations. */
export function organizationsServerRoutes(organizations: OrganizationsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/organizations', {
      schema: { operationId: 'createOrganization', summary: 'Create an organization (with createdBy: that user becomes its owner)', tags, body: CreateOrganizationBody, response: { 201: Organization } },
    }, async (req, reply) => reply.code(201).send(await organizations.create(req.environmentId, req.body, serverCaller(req))));
    app.get('/organizations', { schema: { operationId: 'listOrganizations', summary: 'List organizations (name substring; limit clamped to 1..100)', tags, querystring: ListOrganizationsQuery, response: { 200: Page(Organization) } } },
      (req) => organizations.list(req.environmentId, { name: req.query.name }, req.query));
    app.get('/organizations/:organizationId', { schema: { operationId: 'getOrganization', summary: 'Get an organization', tags, params: OrganizationParams, response: { 200: Organization } } },
      (req) => organizations.get(req.environmentId, req.params.organizationId));
    app.patch('/organizations/:organizationId', { schema: { operationId: 'updateOrganization', summary: "Change an organization's name or slug", tags, params: OrganizationParams, body: UpdateOrganizationBody, response: { 200: Organization } } },
      (req) => organizations.update(req.environmentId, req.params.organizationId, req.body, serverCaller(req)));
    app.get('/organizations/:organizationId/roles', { schema: { operationId: 'getOrganizationRoles', summary: "The roles an organization's members may hold, with their permissions", tags, params: OrganizationParams, response: { 200: OrganizationRoles } } },
      (req) => organizations.rolesOf(req.environmentId, req.params.organizationId));
    app.patch('/organizations/:organizationId/metadata', { schema: { operationId: 'mergeOrganizationMetadata', summary: "Deep-merge an organization's metadata", tags, params: OrganizationParams, body: MetadataPatchBody, response: { 200: Organization } } },
      (req) => organizations.mergeMetadata(req.environmentId, req.params.organizationId, req.body, serverCaller(req)));
    app.delete('/organizations/:organizationId', { schema: { operationId: 'deleteOrganization', summary: 'Delete an organization and its memberships', tags, params: OrganizationParams, response: { 204: NoContent } } },
      async (req, reply) => { await organizations.delete(req.environmentId, req.params.organizationId, serverCaller(req)); return noContent(reply); });

    app.get('/organizations/:organizationId/members', {
      schema: { operationId: 'listOrganizationMembers', summary: 'List members (ascending user id; limit clamped to 1..100)', tags, params: OrganizationParams, querystring: OrganizationPageQuery, response: { 200: Page(OrganizationMember) } },
    }, (req) => organizations.listMembers(req.environmentId, req.params.organizationId, req.query));
    app.post('/organizations/:organizationId/members', { schema: { operationId: 'addOrganizationMember', summary: 'Add a member with a role', tags, params: OrganizationParams, body: AddMemberBody, response: { 201: OrganizationMember } } },
      async (req, reply) => reply.code(201).send(await organizations.addMember(req.environmentId, req.params.organizationId, req.body, serverCaller(req))));
    app.patch('/organizations/:organizationId/members/:userId', { schema: { operationId: 'updateOrganizationMember', summary: "Change a member's role", description: LAST_OWNER, tags, params: MemberParams, body: ChangeRoleBody, response: { 200: OrganizationMember } } },
      (req) => organizations.changeRole(req.environmentId, req.params.organizationId, req.params.userId, req.body.role, serverCaller(req)));
    app.patch('/organizations/:organizationId/members/:userId/metadata', { schema: { operationId: 'mergeMembershipMetadata', summary: "Deep-merge a membership's metadata", tags, params: MemberParams, body: MetadataPatchBody, response: { 200: OrganizationMember } } },
      (req) => organizations.mergeMembershipMetadata(req.environmentId, req.params.organizationId, req.params.userId, req.body, serverCaller(req)));
    app.delete('/organizations/:organizationId/members/:userId', { schema: { operationId: 'removeOrganizationMember', summary: 'Remove a member', description: LAST_OWNER, tags, params: MemberParams, response: { 204: NoContent } } },
      async (req, reply) => { await organizations.removeMember(req.environmentId, req.params.organizationId, req.params.userId, serverCaller(req)); return noContent(reply); });
    app.get('/users/:userId/organizations', { schema: { operationId: 'listUserOrganizations', summary: "List a user's organizations with the membership", tags, params: UserParams, querystring: OrganizationPageQuery, response: { 200: Page(UserOrganization) } } },
      (req) => organizations.listForUser(req.environmentId, req.params.userId, req.query));
  };
}

/** Admin API: the role sets of an environment, which organizations pick by roleSetId. */
export function organizationRoleSetsAdminRoutes(organizations: OrganizationsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const adminTags = ['Admin: role sets'];
    app.post('/environments/:id/role-sets', {
      schema: { operationId: 'createRoleSet', summary: 'Create an organization role set', description: 'Distinct role keys, one of them `owner`. Each role carries permissions, declared or else those of its key (`owner` every one, `admin` all but `organization:delete`, others none); `owner` must carry every one. A set never changes once created.', tags: adminTags, params: RoleSetParams, body: CreateRoleSetBody, response: { 201: RoleSet } },
    }, async (req, reply) => reply.code(201).send(await organizations.createRoleSet(req.params.id, req.body)));
    app.get('/environments/:id/role-sets', { schema: { operationId: 'listRoleSets', summary: "List an environment's role sets", tags: adminTags, params: RoleSetParams, response: { 200: Type.Object({ items: Type.Array(RoleSet) }) } } },
      (req) => organizations.listRoleSets(req.params.id));
  };
}

/** Client plane, signed in: the caller's organizations; their membership and role decide what they may do. */
export function organizationsClientRoutes(members: MemberActions): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const clientTags = ['Client: organizations'];
    const me = (req: Parameters<typeof signedIn>[0]) => signedIn(req).userId;
    app.post('/organizations', { schema: { operationId: 'createMyOrganization', summary: 'Create an organization; the caller becomes its owner', tags: clientTags, body: ClientCreateOrganizationBody, response: { 201: ClientOrganization } } },
      async (req, reply) => reply.code(201).send(await members.create(req.environmentId, me(req), req.body, clientCaller(req))));
    app.get('/organizations', { schema: { operationId: 'listMyOrganizations', summary: "List the caller's organizations", tags: clientTags, querystring: OrganizationPageQuery, response: { 200: Page(ClientOrganization) } } },
      (req) => members.listMine(req.environmentId, me(req), req.query));
    app.get('/organizations/:organizationId', { schema: { operationId: 'getMyOrganization', summary: 'Get one of the caller\'s organizations', tags: clientTags, params: OrganizationParams, response: { 200: ClientOrganization } } },
      (req) => members.get(req.environmentId, req.params.organizationId, me(req)));
    app.patch('/organizations/:organizationId', { schema: { operationId: 'updateMyOrganization', summary: 'Rename an organization or change its slug (organization:update: owner or admin by default)', tags: clientTags, params: OrganizationParams, body: UpdateOrganizationBody, response: { 200: ClientOrganization } } },
      (req) => members.update(req.environmentId, req.params.organizationId, me(req), req.body, clientCaller(req)));
    app.delete('/organizations/:organizationId', { config: NOT_UNDER_IMPERSONATION, schema: { operationId: 'deleteMyOrganization', summary: 'Delete an organization (organization:delete: owner by default)', tags: clientTags, params: OrganizationParams, response: { 204: NoContent } } },
      async (req, reply) => { await members.delete(req.environmentId, req.params.organizationId, me(req), clientCaller(req)); return noContent(reply); });
    app.get('/organizations/:organizationId/members', { schema: { operationId: 'listMyOrganizationMembers', summary: 'List the members (any member)', tags: clientTags, params: OrganizationParams, querystring: OrganizationPageQuery, response: { 200: Page(ClientMember) } } },
      (req) => members.listMembers(req.environmentId, req.params.organizationId, me(req), req.query));
    app.patch('/organizations/:organizationId/members/:userId', {
      schema: { operationId: 'updateMyOrganizationMember', summary: "Change a member's role (members:manage: owner or admin by default; only an owner touches owners)", description: LAST_OWNER, tags: clientTags, params: MemberParams, body: ChangeRoleBody, response: { 200: ClientMember } },
    }, (req) => members.changeRole(req.environmentId, req.params.organizationId, me(req), req.params.userId, req.body, clientCaller(req)));
    app.delete('/organizations/:organizationId/members/:userId', {
      schema: { operationId: 'removeMyOrganizationMember', summary: 'Remove a member (members:manage: owner or admin by default; only an owner removes an owner)', description: LAST_OWNER, tags: clientTags, params: MemberParams, response: { 204: NoContent } },
    }, async (req, reply) => { await members.removeMember(req.environmentId, req.params.organizationId, me(req), req.params.userId, clientCaller(req)); return noContent(reply); });
    app.post('/organizations/:organizationId/leave', { schema: { operationId: 'leaveOrganization', summary: 'Leave an organization', description: LAST_OWNER, tags: clientTags, params: OrganizationParams, response: { 204: NoContent } } },
      async (req, reply) => { await members.leave(req.environmentId, req.params.organizationId, me(req), clientCaller(req)); return noContent(reply); });
  };
}

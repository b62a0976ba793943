import { Type, type Static } from 'typebox';
import { DateTime, JsonObject, Nullable, NullableInput, pageQuery, Uuid } from '../platform/http/common-schemas.js';
import { PERMISSIONS } from './roles.js';

const Name = Type.String({ minLength: 1, maxLength: 256, description: 'Display name, 1 to 256 characters.' });
const Slug = Type.String({
  minLength: 1, maxLength: 64, pattern: '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$',
  description: 'Unique in the environment: lower-case letters, digits and inner hyphens, at most 64 characters.',
});
export const Role = Type.String({ minLength: 1, maxLength: 64, description: 'A role of the organization\'s role set: `owner`, `admin` or `member` by default.' });

/** An organization as the Server API shows it, with both metadata bags. */
export const Organization = Type.Object({
  id: Uuid, name: Type.String(), slug: Nullable(Type.String()), roleSetId: Nullable(Uuid),
  publicMetadata: JsonObject, privateMetadata: JsonObject, createdAt: DateTime,
}, { title: 'Organization', additionalProperties: false, description: 'An organization of the environment.' });
export type Organization = Static<typeof Organization>;

const memberFields = {
  organizationId: Uuid, userId: Uuid, role: Type.String(), roleName: Nullable(Type.String()),
  publicMetadata: JsonObject, privateMetadata: JsonObject, joinedAt: DateTime,
};
/** A USER membership as the Server API shows it. */
export const OrganizationMember = Type.Object(memberFields, { title: 'OrganizationMember', additionalProperties: false, description: 'A member of an organization: the user, the role and the membership\'s metadata.' });
export type OrganizationMember = Static<typeof OrganizationMember>;

/** One of a user's memberships, with its organization (Server API). */
export const UserOrganization = Type.Object({ ...memberFields, organization: Organization }, { title: 'UserOrganization', additionalProperties: false, description: 'One of the user\'s memberships, with its organization.' });
export type UserOrganization = Static<typeof UserOrganization>;

/** An organization as a member sees it on the client plane: their own role, never metadata. */
export const ClientOrganization = Type.Object({
  id: Uuid, name: Type.String(), slug: Nullable(Type.String()), role: Type.String(), roleName: Nullable(Type.String()), createdAt: DateTime,
}, { title: 'ClientOrganization', additionalProperties: false, description: 'One of the signed-in user\'s organizations, with their role.' });
export type ClientOrganization = Static<typeof ClientOrganization>;

/** A fellow member as the client plane shows them: who, and in which role; never private metadata. */
export const ClientMember = Type.Object({
  userId: Uuid, email: Nullable(Type.String()), name: Nullable(Type.String()),
  role: Type.String(), roleName: Nullable(Type.String()), publicMetadata: JsonObject, joinedAt: DateTime,
}, { title: 'ClientMember', additionalProperties: false, description: 'A member as another member sees them.' });
export type ClientMember = Static<typeof ClientMember>;

export const OrganizationParams = Type.Object({ organizationId: Uuid }, { additionalProperties: false });
/** The environment of the admin API's role-set routes (named `id` as in every /environments/{id} route). */
export const RoleSetParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const MemberParams = Type.Object({ organizationId: Uuid, userId: Uuid }, { additionalProperties: false });

/** Organization lists clamp `limit` to 1..100 (the spec), where invitation search refuses it. */
export const OrganizationPageQuery = pageQuery({ outOfRange: 'clamp' });
export type OrganizationPageQuery = Static<typeof OrganizationPageQuery>;
export const ListOrganizationsQuery = Type.Object({
  ...OrganizationPageQuery.properties,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Case-insensitive substring of the name; %, _ and \\ match themselves.' })),
}, { additionalProperties: false });
export type ListOrganizationsQuery = Static<typeof ListOrganizationsQuery>;

export const CreateOrganizationBody = Type.Object({
  name: Name,
  createdBy: Type.Optional(Uuid),
  slug: Type.Optional(NullableInput(Slug)),
  roleSetId: Type.Optional(NullableInput(Uuid)),
  publicMetadata: Type.Optional(JsonObject),
  privateMetadata: Type.Optional(JsonObject),
}, { additionalProperties: false });
export type CreateOrganizationBody = Static<typeof CreateOrganizationBody>;

export const ClientCreateOrganizationBody = Type.Object({
  name: Name, slug: Type.Optional(NullableInput(Slug)), roleSetId: Type.Optional(NullableInput(Uuid)),
}, { additionalProperties: false });
export type ClientCreateOrganizationBody = Static<typeof ClientCreateOrganizationBody>;

export const UpdateOrganizationBody = Type.Object({ name: Type.Optional(Name), slug: Type.Optional(NullableInput(Slug)) }, { additionalProperties: false, minProperties: 1 });
export type UpdateOrganizationBody = Static<typeof UpdateOrganizationBody>;

export const MetadataPatchBody = Type.Object({
  publicMetadata: Type.Optional(JsonObject), privateMetadata: Type.Optional(JsonObject),
}, { additionalProperties: false });
export type MetadataPatchBody = Static<typeof MetadataPatchBody>;

export const AddMemberBody = Type.Object({
  userId: Uuid, role: Role, publicMetadata: Type.Optional(JsonObject), privateMetadata: Type.Optional(JsonObject),
}, { additionalProperties: false });
export type AddMemberBody = Static<typeof AddMemberBody>;

const roleFields = {
  key: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_:-]*$', description: 'The role as members carry it: lower-case, e.g. `billing`.' }),
  name: Type.String({ minLength: 1, maxLength: 100, description: 'Its display name, e.g. "Billing".' }),
};
export const Permission = Type.Enum(PERMISSIONS, {
  description: 'What a role lets its members do on the client plane: `organization:update` (rename), `organization:delete`, '
    + '`members:manage` (change roles, remove members), `invitations:manage` (invite, list and revoke invitations).',
});
const permissions = (description?: string) => Type.Array(Permission, { uniqueItems: true, maxItems: PERMISSIONS.length, ...(description && { description }) });

/** A role set an operator defines; an organization picks one by roleSetId when it is created. */
export const RoleSet = Type.Object({
  id: Uuid, name: Type.String(),
  roles: Type.Array(Type.Object({ ...roleFields, permissions: permissions() }, { additionalProperties: false })),
  createdAt: DateTime,
}, { title: 'RoleSet', additionalProperties: false, description: 'An organization role set: the roles organizations of the environment use, each with its permissions.' });

/** The roles an organization's members may hold: its role set, or the default one (roleSetId null). */
export const OrganizationRoles = Type.Object({
  roleSetId: Nullable(Uuid), name: Type.String(),
  roles: Type.Array(Type.Object({ ...roleFields, permissions: permissions() }, { additionalProperties: false })),
}, { title: 'OrganizationRoles', additionalProperties: false, description: "The organization's role set (the default one when roleSetId is null): each role with its permissions." });

export const CreateRoleSetBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  roles: Type.Array(Type.Object({
    ...roleFields,
    permissions: Type.Optional(permissions('Without it: every permission for `owner`, all but `organization:delete` for `admin`, none for any other key.')),
  }, { additionalProperties: false }), { minItems: 1, maxItems: 50, description: 'Distinct keys; must include `owner`, which carries every permission.' }),
}, { additionalProperties: false });

export const ChangeRoleBody = Type.Object({ role: Role }, { additionalProperties: false });
export type ChangeRoleBody = Static<typeof ChangeRoleBody>;


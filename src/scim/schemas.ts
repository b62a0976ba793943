import { Type, type Static } from 'typebox';
import { DateTime, Uuid } from '../platform/http/common-schemas.js';

const GroupRoles = Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.String({ minLength: 1, maxLength: 64 }), {
  description: 'Maps a SCIM group\'s displayName (compared case-insensitively) to a role key of the organization. A provisioned member holds the '
    + 'highest role (earliest in the role set) of their mapped groups, else `member` (or the set\'s last role).',
});

/** A SCIM directory as the Server API shows it: never its token. */
export const Directory = Type.Object({
  id: Uuid, organizationId: Uuid, name: Type.String(), groupRoles: GroupRoles, createdAt: DateTime, updatedAt: DateTime,
}, { title: 'ScimDirectory', additionalProperties: false, description: 'A SCIM 2.0 directory: an identity provider provisioning users and groups into the organization.' });
export type Directory = Static<typeof Directory>;

/** A new directory or a new token: the bearer token, shown only in this answer. */
export const DirectoryWithToken = Type.Object({
  ...Directory.properties,
  token: Type.String({ description: 'The bearer token for the SCIM base URL, shown once; only its hash is stored.' }),
  scimBaseUrl: Type.String({ description: 'The SCIM base URL to enter at the identity provider: whole when GATEHOUSE_BASE_URL is set, else its path (prefix it with the origin the service is reached at).' }),
}, { title: 'ScimDirectoryWithToken', additionalProperties: false, description: 'A directory with its bearer token, shown once.' });
export type DirectoryWithToken = Static<typeof DirectoryWithToken>;

export const CreateDirectoryBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 256, description: 'What the directory is, e.g. "Okta".' }),
  groupRoles: Type.Optional(GroupRoles),
}, { additionalProperties: false });
export type CreateDirectoryBody = Static<typeof CreateDirectoryBody>;

export const UpdateDirectoryBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  groupRoles: Type.Optional(GroupRoles),
}, { additionalProperties: false });
export type UpdateDirectoryBody = Static<typeof UpdateDirectoryBody>;

export const DirectoryList = Type.Object({ items: Type.Array(Directory) }, { title: 'ScimDirectoryList', additionalProperties: false });

export const DirectoriesParams = Type.Object({ organizationId: Uuid }, { additionalProperties: false });
export const DirectoryParams = Type.Object({ organizationId: Uuid, directoryId: Uuid }, { additionalProperties: false });

/** SCIM routes take any JSON object: what SCIM requires of it is checked by the service, answered in SCIM's error form. */
export const ScimBody = Type.Object({}, { additionalProperties: true });
export const ScimResourceParams = Type.Object({ directoryId: Type.String(), resourceId: Type.String() });
export const ScimListQuery = Type.Object({
  filter: Type.Optional(Type.String({ maxLength: 1024 })),
  startIndex: Type.Optional(Type.String()),
  count: Type.Optional(Type.String()),
});
export type ScimListQuery = Static<typeof ScimListQuery>;

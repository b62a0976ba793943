import { invalidRole, invalidRoleSet } from './errors.js';

/**
 * What a role lets its members do to their organization on the client plane. policy.ts maps every action
 * to one of these, so a role set grants rights through data: a new set needs no code.
 */
export const PERMISSIONS = ['organization:update', 'organization:delete', 'members:manage', 'invitations:manage'] as const;
export type Permission = typeof PERMISSIONS[number];
export const isPermission = (value: string): value is Permission => (PERMISSIONS as readonly string[]).includes(value);

export interface Role { key: string; name: string; permissions: Permission[] }
export interface RoleSet { id: string | null; name: string; roles: Role[] }
/** A role as an operator declares it: without permissions, it gets those of its key (defaultPermissions). */
export type RoleInput = Omit<Role, 'permissions'> & { permissions?: Permission[] };

export const OWNER = 'owner';
const ADMIN = 'admin';
const ADMIN_PERMISSIONS: Permission[] = ['organization:update', 'members:manage', 'invitations:manage'];

/**
 * The permissions of a role declared without any: every one for `owner`, the managing ones for `admin`,
 * none for any other key. These are the rights the keys carried before permissions were data, so sets
 * and clients that never name permissions keep working as they did.
 */
export function defaultPermissions(key: string): Permission[] {
  if (key === OWNER) return [...PERMISSIONS];
  return key === ADMIN ? [...ADMIN_PERMISSIONS] : [];
}

export const withPermissions = (role: RoleInput): Role =>
  ({ key: role.key, name: role.name, permissions: role.permissions ?? defaultPermissions(role.key) });

/** The contract's set, for every organization created without a roleSetId. */
export const DEFAULT_ROLE_SET: RoleSet = {
  id: null, name: 'Default', roles: [{ key: OWNER, name: 'Owner' }, { key: ADMIN, name: 'Admin' }, { key: 'member', name: 'Member' }].map(withPermissions),
};

/** The role with its name; 400 invalid_role (naming the set's roles) when the set has no such role. */
export function roleIn(set: RoleSet, key: string): Role {
  const role = set.roles.find((r) => r.key === key);
  if (!role) throw invalidRole(key, set.roles.map((r) => r.key));
  return role;
}

/**
 * A new set must hold an `owner` role (every organization keeps one active owner) carrying every
 * permission, so an organization always has a member who may do everything; keys are distinct.
 */
export function assertRoleSet(roles: Role[]) {
  const keys = roles.map((r) => r.key);
  if (new Set(keys).size !== keys.length) throw invalidRoleSet('Role keys must be distinct.');
  const owner = roles.find((r) => r.key === OWNER);
  if (!owner) throw invalidRoleSet('A role set must have an "owner" role: every organization keeps an active owner.');
  const missing = PERMISSIONS.filter((p) => !owner.permissions.includes(p));
  if (missing.length) throw invalidRoleSet(`The "owner" role carries every permission; it lacks ${missing.join(', ')}.`);
}

/**
 * The role an identity provider's groups give (SCIM directories, SSO connections): `groupRoles` maps a group's
 * name (compared case-insensitively) to a role key; the highest mapped role wins, the set's order being its
 * rank (owner, admin, member by default). With no mapped group, `member` (or the set's last role).
 */
export function mappedRole(roles: Role[], groupRoles: Record<string, string>, groups: string[]): Role {
  const mapping = new Map(Object.entries(groupRoles).map(([name, role]) => [name.toLowerCase(), role]));
  const mapped = new Set(groups.map((name) => mapping.get(name.toLowerCase())).filter((role) => role !== undefined));
  return roles.find((role) => mapped.has(role.key)) ?? roles.find((role) => role.key === 'member') ?? roles[roles.length - 1]!;
}

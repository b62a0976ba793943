import { invalidRole, invalidRoleSet } from './errors.js';

export interface Role { key: string; name: string }
export interface RoleSet { id: string | null; name: string; roles: Role[] }

export const OWNER = 'owner';
export const ADMIN = 'admin';

/** The contract's set, for every organization created without a roleSetId. */
export const DEFAULT_ROLE_SET: RoleSet = {
  id: null, name: 'Default', roles: [{ key: OWNER, name: 'Owner' }, { key: ADMIN, name: 'Admin' }, { key: 'member', name: 'Member' }],
};

/** The role with its name; 400 invalid_role (naming the set's roles) when the set has no such role. */
export function roleIn(set: RoleSet, key: string): Role {
  const role = set.roles.find((r) => r.key === key);
  if (!role) throw invalidRole(key, set.roles.map((r) => r.key));
  return role;
}

/**
 * A new set must hold an `owner` role (every organization keeps one active owner) and distinct keys.
 * `admin`, when present, may manage members as in the default set.
 */
export function assertRoleSet(roles: Role[]) {
  const keys = roles.map((r) => r.key);
  if (new Set(keys).size !== keys.length) throw invalidRoleSet('Role keys must be distinct.');
  if (!keys.includes(OWNER)) throw invalidRoleSet('A role set must have an "owner" role: every organization keeps an active owner.');
}

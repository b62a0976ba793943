import { invalidRole, roleSetNotFound } from './errors.js';

/**
 * The default role set (the contract's): every organization uses it until role sets land. `owner` is the
 * role an organization must always have one active holder of.
 */
export const DEFAULT_ROLES: readonly { key: string; name: string }[] = [
  { key: 'owner', name: 'Owner' }, { key: 'admin', name: 'Admin' }, { key: 'member', name: 'Member' },
];
export const OWNER = 'owner';
export const ADMIN = 'admin';

export const roleName = (role: string) => DEFAULT_ROLES.find((r) => r.key === role)?.name ?? null;

/** 400 invalid_role unless the role is in the organization's set. */
export function assertRole(role: string) {
  if (!DEFAULT_ROLES.some((r) => r.key === role)) throw invalidRole(role, DEFAULT_ROLES.map((r) => r.key));
}

/** Only the default set exists so far: any other role set id is unknown. */
export function assertRoleSet(roleSetId: string | null | undefined) {
  if (roleSetId) throw roleSetNotFound();
}

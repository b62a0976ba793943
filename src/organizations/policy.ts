import { forbidden, organizationNotFound } from './errors.js';
import { roleIn, type Permission, type RoleSet } from './roles.js';

/**
 * The one authorization policy of organizations on the client plane, where a signed-in user acts through
 * their own membership. It decides from data alone (the caller's role, the permissions its role set gives
 * that role, and the role of what the action touches or grants), so it reads nothing: the caller reads the
 * memberships, under the organization lock when the action is a change (see service.ts).
 */

/** A caller's membership with its organization's role set, where the role's permissions are. */
export interface Member { role: string; roleSet: RoleSet }

/** What an action touches: the role of the membership it changes or removes, the role it grants (or invites to). */
export interface Target { role?: string; grants?: string }

/** Each action with the permission it takes (null: any member may) and how a refusal names it. */
const ACTIONS = {
  'organization.read': { needs: null, what: 'see the organization' },
  'organization.update': { needs: 'organization:update', what: 'rename an organization' },
  'organization.delete': { needs: 'organization:delete', what: 'delete an organization' },
  'members.read': { needs: null, what: 'list the members' },
  'members.manage': { needs: 'members:manage', what: 'manage members' },
  'invitations.manage': { needs: 'invitations:manage', what: 'manage invitations' },
  'invitations.invite': { needs: 'invitations:manage', what: 'manage invitations' },
  leave: { needs: null, what: 'leave the organization' },
} satisfies Record<string, { needs: Permission | null; what: string }>;
export type Action = keyof typeof ACTIONS;

/** The permissions a key carries in the set; none for a key the set lacks. */
export const permissionsOf = (set: RoleSet, key: string): Permission[] => set.roles.find((r) => r.key === key)?.permissions ?? [];

/**
 * Throws unless the member may take the action on the target.
 * - No membership: 404 organization_not_found, exactly as for an organization that does not exist, so a
 *   non-member learns nothing.
 * - The action's permission missing from the caller's role: 403 forbidden, naming the roles that have it.
 * - A role granted (a role change, an invitation) that is not in the set: 400 invalid_role.
 * - No escalation: a caller may touch a membership, or grant a role, only when that role carries no
 *   permission the caller's own role lacks. In the default set this is "an admin may neither change nor
 *   remove an owner, nor make or invite one", since the owner role alone deletes organizations.
 */
export function authorize(member: Member | undefined, action: Action, target: Target = {}): asserts member is Member {
  if (!member) throw organizationNotFound();
  const { needs, what } = ACTIONS[action];
  const held = permissionsOf(member.roleSet, member.role);
  if (needs && !held.includes(needs)) {
    const holders = member.roleSet.roles.filter((r) => r.permissions.includes(needs)).map((r) => r.key);
    throw forbidden(`Only ${holders.join(' or ')} members can ${what}.`);
  }
  if (target.role !== undefined) {
    const beyond = lacking(held, permissionsOf(member.roleSet, target.role));
    if (beyond.length) throw forbidden(`Your role cannot change or remove a member with the role ${target.role}: it carries ${beyond.join(', ')}, which yours does not.`);
  }
  if (target.grants !== undefined) {
    const granted = roleIn(member.roleSet, target.grants);
    const beyond = lacking(held, granted.permissions);
    if (beyond.length) throw forbidden(`Your role cannot give the role ${granted.key}: it carries ${beyond.join(', ')}, which yours does not.`);
  }
}

const lacking = (held: Permission[], wanted: Permission[]) => wanted.filter((p) => !held.includes(p));

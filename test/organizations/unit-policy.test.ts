import { describe, expect, it } from 'vitest';
import { authorize, type Action, type Member, type Target } from '../../src/organizations/policy.js';
import { assertRoleSet, DEFAULT_ROLE_SET, defaultPermissions, PERMISSIONS, withPermissions, type RoleSet } from '../../src/organizations/roles.js';
import { ProblemError } from '../../src/platform/http/problem.js';

const as = (role: string, roleSet: RoleSet = DEFAULT_ROLE_SET): Member => ({ role, roleSet });

/** The refusal authorize throws, as `status code`; 'allowed' when it throws nothing. */
function decide(member: Member | undefined, action: Action, target?: Target) {
  try {
    authorize(member, action, target);
    return 'allowed';
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
    return `${err.status} ${err.code}`;
  }
}

/** A custom set: `manager` manages members only, `billing` and `viewer` carry nothing, `admin` is declared with nothing. */
const CUSTOM: RoleSet = {
  id: '00000000-0000-7000-8000-000000000001', name: 'Custom',
  roles: [
    withPermissions({ key: 'owner', name: 'Owner' }),
    { key: 'manager', name: 'Manager', permissions: ['members:manage'] },
    { key: 'inviter', name: 'Inviter', permissions: ['invitations:manage'] },
    { key: 'admin', name: 'Admin', permissions: [] },
    withPermissions({ key: 'viewer', name: 'Viewer' }),
  ],
};

describe('the organization policy', () => {
  it('answers 404 organization_not_found to a non-member for every action, as for a missing organization', () => {
    const actions: Action[] = ['organization.read', 'organization.update', 'organization.delete', 'members.read', 'members.manage', 'invitations.manage', 'invitations.invite', 'leave'];
    for (const action of actions) expect(decide(undefined, action)).toBe('404 organization_not_found');
  });

  it('lets any member read the organization and its members, and leave', () => {
    for (const action of ['organization.read', 'members.read', 'leave'] as const) expect(decide(as('member'), action)).toBe('allowed');
  });

  it("refuses an action whose permission the caller's role lacks with 403, naming the roles that carry it", () => {
    expect(decide(as('member'), 'organization.update')).toBe('403 forbidden');
    expect(decide(as('member'), 'members.manage')).toBe('403 forbidden');
    expect(decide(as('member'), 'invitations.manage')).toBe('403 forbidden');
    expect(decide(as('admin'), 'organization.delete')).toBe('403 forbidden');
    expect(() => authorize(as('member'), 'organization.update')).toThrow('Only owner or admin members can rename an organization.');
    expect(() => authorize(as('admin'), 'organization.delete')).toThrow('Only owner members can delete an organization.');
  });

  it('gives the default set owner every permission and admin all but deleting', () => {
    for (const action of ['organization.update', 'organization.delete', 'members.manage', 'invitations.manage'] as const) expect(decide(as('owner'), action)).toBe('allowed');
    for (const action of ['organization.update', 'members.manage', 'invitations.manage'] as const) expect(decide(as('admin'), action)).toBe('allowed');
  });

  it("lets an admin manage members and admins but neither touch an owner's membership nor make or invite an owner", () => {
    expect(decide(as('admin'), 'members.manage', { role: 'member', grants: 'admin' })).toBe('allowed');
    expect(decide(as('admin'), 'members.manage', { role: 'admin', grants: 'member' })).toBe('allowed');
    expect(decide(as('admin'), 'members.manage', { role: 'admin' })).toBe('allowed');
    expect(decide(as('admin'), 'members.manage', { role: 'owner', grants: 'member' })).toBe('403 forbidden');
    expect(decide(as('admin'), 'members.manage', { role: 'owner' })).toBe('403 forbidden');
    expect(decide(as('admin'), 'members.manage', { role: 'member', grants: 'owner' })).toBe('403 forbidden');
    expect(decide(as('admin'), 'invitations.invite', { grants: 'admin' })).toBe('allowed');
    expect(decide(as('admin'), 'invitations.invite', { grants: 'owner' })).toBe('403 forbidden');
    expect(decide(as('owner'), 'invitations.invite', { grants: 'owner' })).toBe('allowed');
    expect(decide(as('owner'), 'members.manage', { role: 'owner', grants: 'member' })).toBe('allowed');
  });

  it('refuses a granted role outside the set with 400 invalid_role, after the permission check', () => {
    expect(decide(as('admin'), 'members.manage', { role: 'member', grants: 'superuser' })).toBe('400 invalid_role');
    expect(decide(as('admin'), 'invitations.invite', { grants: 'superuser' })).toBe('400 invalid_role');
    expect(decide(as('member'), 'invitations.invite', { grants: 'superuser' })).toBe('403 forbidden');
  });

  it("decides a custom set's roles by their declared permissions, not their keys", () => {
    expect(decide(as('admin', CUSTOM), 'organization.update')).toBe('403 forbidden');
    expect(decide(as('admin', CUSTOM), 'members.manage')).toBe('403 forbidden');
    expect(decide(as('manager', CUSTOM), 'members.manage', { role: 'viewer', grants: 'admin' })).toBe('allowed');
    expect(decide(as('manager', CUSTOM), 'members.manage', { role: 'viewer', grants: 'manager' })).toBe('allowed');
    expect(decide(as('manager', CUSTOM), 'members.manage', { role: 'viewer', grants: 'inviter' })).toBe('403 forbidden');
    expect(decide(as('manager', CUSTOM), 'members.manage', { role: 'inviter' })).toBe('403 forbidden');
    expect(decide(as('manager', CUSTOM), 'invitations.invite', { grants: 'viewer' })).toBe('403 forbidden');
    expect(decide(as('inviter', CUSTOM), 'invitations.invite', { grants: 'viewer' })).toBe('allowed');
    expect(decide(as('inviter', CUSTOM), 'invitations.invite', { grants: 'manager' })).toBe('403 forbidden');
    expect(() => authorize(as('viewer', CUSTOM), 'invitations.manage')).toThrow('Only owner or inviter members can manage invitations.');
  });

  it('gives a role the set does not know no permission', () => {
    expect(decide(as('retired'), 'organization.read')).toBe('allowed');
    expect(decide(as('retired'), 'members.manage', { role: 'member' })).toBe('403 forbidden');
  });
});

describe('role permissions', () => {
  it('default to every permission for owner, the managing ones for admin and none for other keys', () => {
    expect(defaultPermissions('owner')).toEqual([...PERMISSIONS]);
    expect(defaultPermissions('admin')).toEqual(['organization:update', 'members:manage', 'invitations:manage']);
    expect(defaultPermissions('billing')).toEqual([]);
    expect(withPermissions({ key: 'admin', name: 'Admin', permissions: [] }).permissions).toEqual([]);
  });

  it('refuse a set whose owner role lacks a permission, since an organization always keeps an owner who may do everything', () => {
    expect(() => assertRoleSet([{ key: 'owner', name: 'Owner', permissions: ['members:manage'] }])).toThrow(/lacks organization:update, organization:delete, invitations:manage/);
    expect(() => assertRoleSet([withPermissions({ key: 'owner', name: 'Owner' }), { key: 'x', name: 'X', permissions: [] }])).not.toThrow();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { addMember, createOrganization, expectProblem, MEMBER_KEYS, MISSING_ID, storedRoles } from './support.js';

describe('organization members on the Server API', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  async function orgWithOwner(env: TestEnv) {
    const owner = await t.given.user(env);
    return { owner, org: await createOrganization(t, env, { createdBy: owner.id }) };
  }

  it('adds a member with exactly the fields of the spec, and refuses a second membership with 409 already_member', async () => {
    const env = await t.given.environment();
    const { org } = await orgWithOwner(env);
    const user = await t.given.user(env);
    const res = await t.server(env).post(`/organizations/${org.id}/members`, { userId: user.id, role: 'admin', publicMetadata: { team: 'a' } });
    expect(res.statusCode).toBe(201);
    expect(Object.keys(res.json()).sort()).toEqual(MEMBER_KEYS);
    expect(res.json()).toMatchObject({ organizationId: org.id, userId: user.id, role: 'admin', roleName: 'Admin', publicMetadata: { team: 'a' }, privateMetadata: {} });
    expectProblem(await t.server(env).post(`/organizations/${org.id}/members`, { userId: user.id, role: 'member' }), 409, 'already_member');
    expect((await storedRoles(t, env, org.id))[user.id]).toBe('admin');
  });

  it('refuses a role outside the set with 400 invalid_role, an unknown user with 404, a banned one with 409 user_not_active', async () => {
    const env = await t.given.environment();
    const { org, owner } = await orgWithOwner(env);
    const [user, banned] = [await t.given.user(env), await t.given.user(env)];
    await t.server(env).post(`/users/${banned.id}/ban`);
    const invalid = expectProblem(await t.server(env).post(`/organizations/${org.id}/members`, { userId: user.id, role: 'superuser' }), 400, 'invalid_role');
    expect(invalid.properties.allowed).toEqual(['owner', 'admin', 'member']);
    expectProblem(await t.server(env).post(`/organizations/${org.id}/members`, { userId: MISSING_ID, role: 'member' }), 404, 'user_not_found');
    expectProblem(await t.server(env).post(`/organizations/${org.id}/members`, { userId: banned.id, role: 'member' }), 409, 'user_not_active');
    expect(await storedRoles(t, env, org.id)).toEqual({ [owner.id]: 'owner' });
  });

  it('lists members in ascending user id order with a clamped limit, leaving out banned and deleted users', async () => {
    const env = await t.given.environment();
    const { org, owner } = await orgWithOwner(env);
    const [a, b, c] = [await t.given.user(env), await t.given.user(env), await t.given.user(env)];
    for (const user of [c, a, b]) await addMember(t, env, org.id, user.id);
    await t.server(env).post(`/users/${b.id}/ban`);
    const all = (await t.server(env).get(`/organizations/${org.id}/members?limit=1000`)).json();
    expect(all.items.map((m: { userId: string }) => m.userId)).toEqual([owner.id, a.id, c.id].sort());
    const first = (await t.server(env).get(`/organizations/${org.id}/members?limit=0`)).json();
    expect(first).toMatchObject({ hasMore: true, nextCursor: first.items[0].userId });
    expect(first.items).toHaveLength(1);
  });

  it('changes a role, and refuses to take the owner role from the last active owner with 409 last_owner', async () => {
    const env = await t.given.environment();
    const { org, owner } = await orgWithOwner(env);
    const user = await t.given.user(env);
    await addMember(t, env, org.id, user.id);
    expectProblem(await t.server(env).patch(`/organizations/${org.id}/members/${owner.id}`, { role: 'admin' }), 409, 'last_owner');
    expect((await t.server(env).patch(`/organizations/${org.id}/members/${user.id}`, { role: 'owner' })).json()).toMatchObject({ role: 'owner', roleName: 'Owner' });
    expect((await t.server(env).patch(`/organizations/${org.id}/members/${owner.id}`, { role: 'member' })).statusCode).toBe(200);
    expect(await storedRoles(t, env, org.id)).toEqual({ [owner.id]: 'member', [user.id]: 'owner' });
  });

  it('does not count a banned owner: the last active owner cannot be removed while the other is banned', async () => {
    const env = await t.given.environment();
    const { org, owner } = await orgWithOwner(env);
    const other = await t.given.user(env);
    await addMember(t, env, org.id, other.id, 'owner');
    await t.server(env).post(`/users/${other.id}/ban`);
    expectProblem(await t.server(env).delete(`/organizations/${org.id}/members/${owner.id}`), 409, 'last_owner');
    await t.server(env).post(`/users/${other.id}/unban`);
    expect((await t.server(env).delete(`/organizations/${org.id}/members/${owner.id}`)).statusCode).toBe(204);
    expect(await storedRoles(t, env, org.id)).toEqual({ [other.id]: 'owner' });
  });

  it('keeps an owner when two owners demote each other at the same time: exactly one succeeds', async () => {
    const env = await t.given.environment();
    const { org, owner } = await orgWithOwner(env);
    const other = await t.given.user(env);
    await addMember(t, env, org.id, other.id, 'owner');
    const results = await Promise.all([owner, other].map((u) => t.server(env).patch(`/organizations/${org.id}/members/${u.id}`, { role: 'member' })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(Object.values(await storedRoles(t, env, org.id)).sort()).toEqual(['member', 'owner']);
  });

  it("still lets the operator manage a banned member's membership: change its metadata and remove it", async () => {
    const env = await t.given.environment();
    const { org, owner } = await orgWithOwner(env);
    const user = await t.given.user(env);
    await addMember(t, env, org.id, user.id);
    await t.server(env).post(`/users/${user.id}/ban`);
    expect((await t.server(env).patch(`/organizations/${org.id}/members/${user.id}/metadata`, { publicMetadata: { left: true } })).statusCode).toBe(200);
    expect((await t.server(env).delete(`/organizations/${org.id}/members/${user.id}`)).statusCode).toBe(204);
    expect(await storedRoles(t, env, org.id)).toEqual({ [owner.id]: 'owner' });
  });

  it('deep-merges membership metadata and removes a member; both answer 404 for a non-member', async () => {
    const env = await t.given.environment();
    const { org } = await orgWithOwner(env);
    const user = await t.given.user(env);
    await addMember(t, env, org.id, user.id);
    const merged = await t.server(env).patch(`/organizations/${org.id}/members/${user.id}/metadata`, { privateMetadata: { seat: 7 } });
    expect(merged.json()).toMatchObject({ privateMetadata: { seat: 7 }, publicMetadata: {} });
    expect((await t.server(env).delete(`/organizations/${org.id}/members/${user.id}`)).statusCode).toBe(204);
    expectProblem(await t.server(env).delete(`/organizations/${org.id}/members/${user.id}`), 404, 'resource_not_found');
    expectProblem(await t.server(env).patch(`/organizations/${org.id}/members/${user.id}/metadata`, { publicMetadata: {} }), 404, 'resource_not_found');
  });

  it("lists a user's organizations with the membership, and answers 404 for another environment's user", async () => {
    const [env, other] = [await t.given.environment(), await t.given.environment()];
    const { org, owner } = await orgWithOwner(env);
    const second = await createOrganization(t, env, { name: 'Second' });
    await addMember(t, env, second.id, owner.id, 'admin');
    const page = (await t.server(env).get(`/users/${owner.id}/organizations`)).json();
    expect(page.items.map((m: { organization: { id: string }; role: string }) => [m.organization.id, m.role])).toEqual([[org.id, 'owner'], [second.id, 'admin']]);
    expectProblem(await t.server(other).get(`/users/${owner.id}/organizations`), 404, 'user_not_found');
  });

  it('records membership changes in the audit trail with the organization and the user as targets', async () => {
    const env = await t.given.environment();
    const { org } = await orgWithOwner(env);
    const user = await t.given.user(env);
    await addMember(t, env, org.id, user.id);
    await t.server(env).patch(`/organizations/${org.id}/members/${user.id}`, { role: 'admin' });
    await t.server(env).delete(`/organizations/${org.id}/members/${user.id}`);
    const events = (await t.server(env).get(`/audit-events?targetType=user&targetId=${user.id}`)).json().items
      .filter((e: { action: string }) => e.action.startsWith('organization_membership.'));
    expect(events.map((e: { action: string; metadata: unknown; targets: unknown }) => [e.action, e.metadata, e.targets])).toEqual([
      ['organization_membership.created', { role: 'member' }, [{ type: 'organization', id: org.id }, { type: 'user', id: user.id }]],
      ['organization_membership.updated', { role: 'admin', previousRole: 'member' }, [{ type: 'organization', id: org.id }, { type: 'user', id: user.id }]],
      ['organization_membership.deleted', { role: 'admin' }, [{ type: 'organization', id: org.id }, { type: 'user', id: user.id }]],
    ]);
  });
});

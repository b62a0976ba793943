import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganizationsService } from '../../src/organizations/service.js';
import { systemCaller } from '../../src/platform/caller.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { addMember, createOrganization, expectProblem, MISSING_ID, storedRoles } from './support.js';

const BILLING_SET = { name: 'Billing teams', roles: [{ key: 'owner', name: 'Proprietor' }, { key: 'billing', name: 'Billing' }, { key: 'viewer', name: 'Viewer' }] };

describe('organization role sets', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const createSet = (env: TestEnv, body: unknown = BILLING_SET) => t.admin.post(`/environments/${env.id}/role-sets`, body as Record<string, unknown>);

  it('lets the operator create and list role sets through the admin API', async () => {
    const env = await t.given.environment();
    const res = await createSet(env);
    expect(res.statusCode).toBe(201);
    expect(Object.keys(res.json()).sort()).toEqual(['createdAt', 'id', 'name', 'roles']);
    expect(res.json()).toMatchObject(BILLING_SET);
    expect((await t.admin.get(`/environments/${env.id}/role-sets`)).json()).toEqual({ items: [res.json()] });
    expect((await t.admin.get(`/environments/${(await t.given.environment()).id}/role-sets`)).json()).toEqual({ items: [] });
  });

  it('refuses a set without an owner role or with repeated keys with 400, and an unknown environment with 404', async () => {
    const env = await t.given.environment();
    expectProblem(await createSet(env, { name: 'x', roles: [{ key: 'admin', name: 'Admin' }] }), 400, 'invalid_request');
    expectProblem(await createSet(env, { name: 'x', roles: [{ key: 'owner', name: 'A' }, { key: 'owner', name: 'B' }] }), 400, 'invalid_request');
    expectProblem(await createSet(env, { name: 'x', roles: [{ key: 'Owner', name: 'A' }] }), 400, 'invalid_request');
    expectProblem(await t.admin.post(`/environments/${MISSING_ID}/role-sets`, BILLING_SET), 404, 'resource_not_found');
    expect((await t.admin.get(`/environments/${env.id}/role-sets`)).json()).toEqual({ items: [] });
  });

  it("gives an organization created with a roleSetId that set's roles and names, and refuses roles outside it", async () => {
    const env = await t.given.environment();
    const set = (await createSet(env)).json();
    const owner = await t.given.user(env);
    const org = await createOrganization(t, env, { roleSetId: set.id, createdBy: owner.id });
    expect(org.roleSetId).toBe(set.id);
    const billing = await t.given.user(env);
    expect(await addMember(t, env, org.id, billing.id, 'billing')).toMatchObject({ role: 'billing', roleName: 'Billing' });
    const refused = expectProblem(await t.server(env).post(`/organizations/${org.id}/members`, { userId: (await t.given.user(env)).id, role: 'admin' }), 400, 'invalid_role');
    expect(refused.properties.allowed).toEqual(['owner', 'billing', 'viewer']);
    expectProblem(await t.server(env).patch(`/organizations/${org.id}/members/${billing.id}`, { role: 'member' }), 400, 'invalid_role');
    const members = (await t.server(env).get(`/organizations/${org.id}/members`)).json().items;
    expect(members.map((m: { role: string; roleName: string }) => [m.role, m.roleName]).sort()).toEqual([['billing', 'Billing'], ['owner', 'Proprietor']]);
    const client = t.client(env, { token: (await t.given.session(env, owner)).token });
    expect((await client.get(`/organizations/${org.id}`)).json()).toMatchObject({ role: 'owner', roleName: 'Proprietor' });
    expect(await storedRoles(t, env, org.id)).toEqual({ [owner.id]: 'owner', [billing.id]: 'billing' });
  });

  it('gives each role its permissions: those declared, else those of its key (owner all, admin all but delete, others none)', async () => {
    const env = await t.given.environment();
    const res = await createSet(env, { name: 'Mixed', roles: [
      { key: 'owner', name: 'Owner' }, { key: 'admin', name: 'Admin' }, { key: 'billing', name: 'Billing', permissions: ['invitations:manage'] }, { key: 'viewer', name: 'Viewer' },
    ] });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().roles.map((r: { key: string; permissions: string[] }) => [r.key, r.permissions])).toEqual([
      ['owner', ['organization:update', 'organization:delete', 'members:manage', 'invitations:manage']],
      ['admin', ['organization:update', 'members:manage', 'invitations:manage']],
      ['billing', ['invitations:manage']],
      ['viewer', []],
    ]);
    expect((await t.admin.get(`/environments/${env.id}/role-sets`)).json().items).toEqual([res.json()]);
  });

  it('refuses an owner role without every permission, and an unknown or repeated permission, with 400 invalid_request', async () => {
    const env = await t.given.environment();
    const owner = (permissions: string[]) => ({ name: 'x', roles: [{ key: 'owner', name: 'Owner', permissions }] });
    const refused = expectProblem(await createSet(env, owner(['members:manage'])), 400, 'invalid_request');
    expect(refused.detail).toContain('organization:delete');
    expectProblem(await createSet(env, owner(['organization:update', 'organization:delete', 'members:manage', 'invitations:manage', 'billing:manage'])), 400, 'invalid_request');
    expectProblem(await createSet(env, owner(['members:manage', 'members:manage'])), 400, 'invalid_request');
    expect((await t.admin.get(`/environments/${env.id}/role-sets`)).json()).toEqual({ items: [] });
  });

  it('lets members of a custom set act on the client plane by their roles\' declared permissions, not their keys', async () => {
    const env = await t.given.environment();
    const set = (await createSet(env, { name: 'Declared', roles: [
      { key: 'owner', name: 'Owner' }, { key: 'admin', name: 'Admin', permissions: [] },
      { key: 'billing', name: 'Billing', permissions: ['invitations:manage'] }, { key: 'viewer', name: 'Viewer' },
    ] })).json();
    const org = await createOrganization(t, env, { roleSetId: set.id, createdBy: (await t.given.user(env)).id });
    const signedIn = async (role: string) => {
      const user = await t.given.user(env);
      await addMember(t, env, org.id, user.id, role);
      return t.client(env, { token: (await t.given.session(env, user)).token });
    };
    const [billing, admin] = [await signedIn('billing'), await signedIn('admin')];
    expect((await billing.post(`/organizations/${org.id}/invitations`, { email: 'v@example.com', role: 'viewer' })).statusCode).toBe(201);
    expect((await billing.get(`/organizations/${org.id}/invitations`)).statusCode).toBe(200);
    expectProblem(await billing.post(`/organizations/${org.id}/invitations`, { email: 'o@example.com', role: 'owner' }), 403, 'forbidden');
    expectProblem(await billing.patch(`/organizations/${org.id}`, { name: 'Billing Inc' }), 403, 'forbidden');
    const refused = expectProblem(await admin.patch(`/organizations/${org.id}`, { name: 'Admin Inc' }), 403, 'forbidden');
    expect(refused.detail).toBe('Only owner members can rename an organization.');
    expectProblem(await admin.post(`/organizations/${org.id}/invitations`, { email: 'a@example.com', role: 'viewer' }), 403, 'forbidden');
  });

  it("refuses another environment's role set with 400 role_set_not_found, on both planes, creating nothing", async () => {
    const [env, other] = [await t.given.environment(), await t.given.environment()];
    const theirs = (await createSet(other)).json();
    expectProblem(await t.server(env).post('/organizations', { name: 'A', roleSetId: theirs.id }), 400, 'role_set_not_found');
    const user = await t.given.user(env);
    const client = t.client(env, { token: (await t.given.session(env, user)).token });
    expectProblem(await client.post('/organizations', { name: 'A', roleSetId: theirs.id }), 400, 'role_set_not_found');
    expect((await t.server(env).get('/organizations')).json().items).toEqual([]);
  });
});

describe('organization role sets read inside a membership change', () => {
  it('loads a role set not yet cached within the change, on the embedded database too (one connection)', async () => {
    const t = await startTestApp();
    try {
      const env = await t.given.environment();
      const set = (await t.admin.post(`/environments/${env.id}/role-sets`, BILLING_SET)).json();
      const org = await createOrganization(t, env, { roleSetId: set.id });
      const user = await t.given.user(env);
      // A service with an empty cache, as another process or a restart would have.
      const fresh = createOrganizationsService({ db: t.db, clock: t.clock, users: { get: async () => ({}) as never }, environments: { record: async () => ({}) as never } });
      const member = await fresh.addMember(env.id, org.id, { userId: user.id, role: 'viewer' }, systemCaller('cli'));
      expect(member).toMatchObject({ role: 'viewer', roleName: 'Viewer' });
    } finally {
      await t.close();
    }
  });
});

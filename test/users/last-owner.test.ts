import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';

// Deleting or banning the only active owner left an organization nobody could manage.
describe('banning or deleting the last active owner of an organization', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  async function organizationOf(env: TestEnv, ownerId: string, name = 'Acme') {
    const res = await t.server(env).post('/organizations', { name, createdBy: ownerId });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  }
  const addOwner = async (env: TestEnv, organizationId: string, userId: string) =>
    expect((await t.server(env).post(`/organizations/${organizationId}/members`, { userId, role: 'owner' })).statusCode).toBe(201);
  const statusOf = async (env: TestEnv, userId: string) => (await t.server(env).get(`/users/${userId}`)).json().status;

  it('refuses both with 409 last_owner naming the organizations, and changes nothing', async () => {
    const env = await t.given.environment();
    const owner = await t.given.user(env);
    const orgs = [await organizationOf(env, owner.id, 'One'), await organizationOf(env, owner.id, 'Two')];
    const session = await t.given.session(env, owner);
    for (const res of [await t.server(env).delete(`/users/${owner.id}`), await t.server(env).post(`/users/${owner.id}/ban`)]) {
      const body = expectProblem(res, 409, 'last_owner');
      expect(body.properties.organizationIds).toEqual([...orgs].sort());
    }
    expect(await statusOf(env, owner.id)).toBe('active');
    expect((await t.client(env, { token: session.token }).get('/me')).statusCode).toBe(200);
  });

  it('lets it through while another active owner remains, and counts a banned co-owner as none', async () => {
    const env = await t.given.environment();
    const [first, second, third] = [await t.given.user(env), await t.given.user(env), await t.given.user(env)];
    const org = await organizationOf(env, first.id);
    await addOwner(env, org, second.id);
    await addOwner(env, org, third.id);
    expect((await t.server(env).post(`/users/${second.id}/ban`)).statusCode).toBe(200);
    expect((await t.server(env).delete(`/users/${first.id}`)).statusCode).toBe(204);
    expectProblem(await t.server(env).delete(`/users/${third.id}`), 409, 'last_owner');
    expect([await statusOf(env, first.id), await statusOf(env, second.id), await statusOf(env, third.id)]).toEqual(['deleted', 'banned', 'active']);
  });

  it('bans a banned owner again without a check (it changes nothing), and lets a banned owner go while an active one remains', async () => {
    const env = await t.given.environment();
    const [owner, other] = [await t.given.user(env), await t.given.user(env)];
    const org = await organizationOf(env, owner.id);
    await addOwner(env, org, other.id);
    expect((await t.server(env).post(`/users/${owner.id}/ban`)).statusCode).toBe(200);
    expect((await t.server(env).delete(`/users/${other.id}`)).statusCode).toBe(409);
    expect((await t.server(env).post(`/users/${other.id}/ban`)).statusCode).toBe(409);
    expect((await t.server(env).post(`/users/${owner.id}/ban`)).statusCode).toBe(200);
    expect((await t.server(env).delete(`/users/${owner.id}`)).statusCode).toBe(204);
  });

  it('still answers a repeat delete with 403 user_deleted', async () => {
    const env = await t.given.environment();
    const [owner, other] = [await t.given.user(env), await t.given.user(env)];
    const org = await organizationOf(env, owner.id);
    await addOwner(env, org, other.id);
    expect((await t.server(env).delete(`/users/${owner.id}`)).statusCode).toBe(204);
    expectProblem(await t.server(env).delete(`/users/${owner.id}`), 403, 'user_deleted');
  });
});

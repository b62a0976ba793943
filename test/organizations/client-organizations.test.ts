import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import type { TestSession, TestUser } from '../helpers/given.js';
import { addMember, createOrganization, expectProblem, storedRoles } from './support.js';

const CLIENT_ORGANIZATION_KEYS = ['createdAt', 'id', 'name', 'role', 'roleName', 'slug'];
const CLIENT_MEMBER_KEYS = ['email', 'joinedAt', 'name', 'publicMetadata', 'role', 'roleName', 'userId'];

describe('organizations on the client plane', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  /** A signed-in user and their bearer client. */
  async function member(env: TestEnv): Promise<{ user: TestUser; session: TestSession; client: ReturnType<TestApp['client']> }> {
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    return { user, session, client: t.client(env, { token: session.token }) };
  }

  /** An organization owned by one signed-in user, with an admin and a member (both signed in). */
  async function team(env: TestEnv) {
    const [owner, admin, plain] = [await member(env), await member(env), await member(env)];
    const org = (await owner.client.post('/organizations', { name: 'Acme' })).json();
    await addMember(t, env, org.id, admin.user.id, 'admin');
    await addMember(t, env, org.id, plain.user.id, 'member');
    return { org, owner, admin, plain };
  }

  it('creates an organization in client form with the caller as owner, and answers 401 without a session', async () => {
    const env = await t.given.environment();
    const { user, client } = await member(env);
    const res = await client.post('/organizations', { name: 'Acme', slug: 'acme' });
    expect(res.statusCode).toBe(201);
    expect(Object.keys(res.json()).sort()).toEqual(CLIENT_ORGANIZATION_KEYS);
    expect(res.json()).toMatchObject({ name: 'Acme', slug: 'acme', role: 'owner', roleName: 'Owner' });
    expect(await storedRoles(t, env, res.json().id)).toEqual({ [user.id]: 'owner' });
    expectProblem(await t.client(env).post('/organizations', { name: 'Acme' }), 401, 'unauthenticated');
  });

  it("lists only the caller's organizations with their role, and never metadata", async () => {
    const env = await t.given.environment();
    const { org, admin } = await team(env);
    await createOrganization(t, env, { name: 'Not mine', publicMetadata: { x: 1 }, privateMetadata: { y: 2 } });
    const page = (await admin.client.get('/organizations')).json();
    expect(page).toEqual({ items: [{ id: org.id, name: 'Acme', slug: null, role: 'admin', roleName: 'Admin', createdAt: org.createdAt }], nextCursor: null, hasMore: false });
  });

  it('answers 404 organization_not_found to a non-member for an organization that exists, as for one that does not', async () => {
    const env = await t.given.environment();
    const { org } = await team(env);
    const outsider = await member(env);
    for (const res of [
      await outsider.client.get(`/organizations/${org.id}`),
      await outsider.client.get(`/organizations/${org.id}/members`),
      await outsider.client.patch(`/organizations/${org.id}`, { name: 'Mine now' }),
      await outsider.client.delete(`/organizations/${org.id}`),
      await outsider.client.post(`/organizations/${org.id}/leave`),
    ]) expectProblem(res, 404, 'organization_not_found');
  });

  it('lets owners and admins rename, answers 403 forbidden to a member, and lets only the owner delete', async () => {
    const env = await t.given.environment();
    const { org, admin, plain, owner } = await team(env);
    expectProblem(await plain.client.patch(`/organizations/${org.id}`, { name: 'Plain' }), 403, 'forbidden');
    expect((await admin.client.patch(`/organizations/${org.id}`, { name: 'Renamed' })).json()).toMatchObject({ name: 'Renamed', role: 'admin' });
    expectProblem(await admin.client.delete(`/organizations/${org.id}`), 403, 'forbidden');
    expect((await owner.client.delete(`/organizations/${org.id}`)).statusCode).toBe(204);
    expectProblem(await owner.client.get(`/organizations/${org.id}`), 404, 'organization_not_found');
  });

  it('lists members to any member, with who they are and never private metadata', async () => {
    const env = await t.given.environment();
    const { org, plain, owner } = await team(env);
    await t.server(env).patch(`/organizations/${org.id}/members/${owner.user.id}/metadata`, { publicMetadata: { title: 'CEO' }, privateMetadata: { salary: 1 } });
    const page = (await plain.client.get(`/organizations/${org.id}/members`)).json();
    expect(page.items).toHaveLength(3);
    for (const item of page.items) expect(Object.keys(item).sort()).toEqual(CLIENT_MEMBER_KEYS);
    expect(page.items.find((m: { userId: string }) => m.userId === owner.user.id)).toMatchObject({ email: owner.user.email, role: 'owner', publicMetadata: { title: 'CEO' } });
    expect(JSON.stringify(page)).not.toContain('salary');
  });

  it('lets an admin change and remove members but never touch an owner or make one', async () => {
    const env = await t.given.environment();
    const { org, admin, plain, owner } = await team(env);
    expect((await admin.client.patch(`/organizations/${org.id}/members/${plain.user.id}`, { role: 'admin' })).json()).toMatchObject({ userId: plain.user.id, role: 'admin' });
    expectProblem(await admin.client.patch(`/organizations/${org.id}/members/${plain.user.id}`, { role: 'owner' }), 403, 'forbidden');
    expectProblem(await admin.client.patch(`/organizations/${org.id}/members/${owner.user.id}`, { role: 'member' }), 403, 'forbidden');
    expectProblem(await admin.client.delete(`/organizations/${org.id}/members/${owner.user.id}`), 403, 'forbidden');
    expect((await admin.client.delete(`/organizations/${org.id}/members/${plain.user.id}`)).statusCode).toBe(204);
    expect(await storedRoles(t, env, org.id)).toEqual({ [owner.user.id]: 'owner', [admin.user.id]: 'admin' });
  });

  it('answers 403 forbidden when a plain member changes or removes anyone', async () => {
    const env = await t.given.environment();
    const { org, admin, plain } = await team(env);
    expectProblem(await plain.client.patch(`/organizations/${org.id}/members/${admin.user.id}`, { role: 'member' }), 403, 'forbidden');
    expectProblem(await plain.client.delete(`/organizations/${org.id}/members/${admin.user.id}`), 403, 'forbidden');
    expect((await storedRoles(t, env, org.id))[admin.user.id]).toBe('admin');
  });

  it('lets a member leave, and refuses the last owner with 409 last_owner until another owner exists', async () => {
    const env = await t.given.environment();
    const { org, owner, admin, plain } = await team(env);
    expect((await plain.client.post(`/organizations/${org.id}/leave`)).statusCode).toBe(204);
    expectProblem(await plain.client.get(`/organizations/${org.id}`), 404, 'organization_not_found');
    expectProblem(await owner.client.post(`/organizations/${org.id}/leave`), 409, 'last_owner');
    expect((await owner.client.patch(`/organizations/${org.id}/members/${admin.user.id}`, { role: 'owner' })).json()).toMatchObject({ role: 'owner' });
    expect((await owner.client.post(`/organizations/${org.id}/leave`)).statusCode).toBe(204);
    expect(await storedRoles(t, env, org.id)).toEqual({ [admin.user.id]: 'owner' });
  });

  it('records a client-plane creation with the signed-in user as actor', async () => {
    const env = await t.given.environment();
    const { user, client } = await member(env);
    const org = (await client.post('/organizations', { name: 'Acme' })).json();
    const [event] = (await t.server(env).get(`/audit-events?action=organization.created&targetId=${org.id}`)).json().items;
    expect(event).toMatchObject({
      actor: { type: 'user', id: user.id, impersonatorId: null }, producer: { type: 'gatehouse', via: 'client_api' }, metadata: { createdBy: user.id },
    });
  });
});

import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import type { TestSession } from '../helpers/given.js';
import { expectProblem } from '../helpers/problem.js';

describe('POST /_svc/sessions/current/active-organization', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  async function member(env: TestEnv, role = 'admin', slug: string | null = `acme-${Math.random().toString(36).slice(2, 8)}`) {
    const user = await t.given.user(env);
    const org = (await t.server(env).post('/organizations', { name: 'Acme', ...(slug && { slug }) })).json();
    expect((await t.server(env).post(`/organizations/${org.id}/members`, { userId: user.id, role })).statusCode).toBe(201);
    return { user, org, session: await t.given.session(env, user) };
  }
  const choose = (env: TestEnv, session: TestSession, organizationId: string | null) =>
    t.client(env, { token: session.token }).post('/sessions/current/active-organization', { organizationId });
  const claimsOf = async (env: TestEnv, session: TestSession) => {
    const res = await t.client(env, { token: session.token }).post('/sessions/current/token');
    expect(res.statusCode, res.body).toBe(200);
    return decodeJwt(res.json().token);
  };
  const storedActive = async (env: TestEnv, session: TestSession) =>
    (await t.db.selectFrom('sessions').select('active_organization_id').where('environment_id', '=', env.id).where('id', '=', session.id).executeTakeFirstOrThrow()).active_organization_id;
  const eventsOf = (env: TestEnv) => t.db.selectFrom('audit_events').selectAll().where('environment_id', '=', env.id)
    .where('action', '=', 'session.active_organization_changed').orderBy('sequence').execute();

  it('answers the session with its active organization, and its JWTs then carry org_id, org_role and org_slug', async () => {
    const env = await t.given.environment();
    const { user, org, session } = await member(env, 'admin', 'acme');
    const res = await choose(env, session, org.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: session.id, userId: user.id, status: 'active', activeOrganizationId: org.id });
    expect(await claimsOf(env, session)).toMatchObject({ sub: user.id, sid: session.id, org_id: org.id, org_role: 'admin', org_slug: 'acme' });
    const listed = (await t.client(env, { token: session.token }).get('/sessions')).json().items;
    expect(listed).toEqual([expect.objectContaining({ id: session.id, activeOrganizationId: org.id })]);
  });

  it('carries the role as it is now and leaves org_slug out for an organization without a slug', async () => {
    const env = await t.given.environment();
    const { user, org, session } = await member(env, 'member', null);
    await choose(env, session, org.id);
    expect((await t.server(env).patch(`/organizations/${org.id}/members/${user.id}`, { role: 'admin' })).statusCode).toBe(200);
    const claims = await claimsOf(env, session);
    expect(claims).toMatchObject({ org_id: org.id, org_role: 'admin' });
    expect(claims).not.toHaveProperty('org_slug');
  });

  it('clears it with null: the JWTs carry no organization claim, and another session of the user is untouched', async () => {
    const env = await t.given.environment();
    const { user, org, session } = await member(env);
    const other = await t.given.session(env, user);
    await choose(env, session, org.id);
    await choose(env, other, org.id);
    const res = await choose(env, session, null);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().activeOrganizationId).toBeNull();
    const claims = await claimsOf(env, session);
    for (const claim of ['org_id', 'org_role', 'org_slug']) expect(claims).not.toHaveProperty(claim);
    expect(await claimsOf(env, other)).toMatchObject({ org_id: org.id });
  });

  it('returns 404 organization_not_found for an organization the user is not a member of, one that does not exist, and another environment\'s', async () => {
    const [env, theirs] = [await t.given.environment(), await t.given.environment()];
    const { org: mine, session } = await member(env);
    const stranger = (await t.server(env).post('/organizations', { name: 'Not mine' })).json();
    const foreign = (await member(theirs)).org;
    await choose(env, session, mine.id);
    const bodies = [];
    for (const id of [stranger.id, '01890000-0000-7000-8000-000000000000', foreign.id]) {
      const body = expectProblem(await choose(env, session, id), 404, 'organization_not_found');
      bodies.push({ ...body, instance: undefined });
    }
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
    expect(await storedActive(env, session)).toBe(mine.id);
  });

  it('refuses a body without organizationId or with a non-uuid one (400, nothing stored), and a request without a session (401)', async () => {
    const env = await t.given.environment();
    const { session } = await member(env);
    const client = t.client(env, { token: session.token });
    expectProblem(await client.post('/sessions/current/active-organization', {}), 400, 'invalid_request');
    expectProblem(await client.post('/sessions/current/active-organization', { organizationId: 'acme' }), 400, 'invalid_request');
    expectProblem(await t.client(env).post('/sessions/current/active-organization', { organizationId: null }), 401, 'unauthenticated');
    expect(await storedActive(env, session)).toBeNull();
  });

  it('drops the organization from the session and its JWTs when the membership ends: removed, or the organization deleted', async () => {
    const env = await t.given.environment();
    const removed = await member(env);
    await choose(env, removed.session, removed.org.id);
    expect((await t.server(env).delete(`/organizations/${removed.org.id}/members/${removed.user.id}`)).statusCode).toBe(204);
    expect(await claimsOf(env, removed.session)).not.toHaveProperty('org_id');
    expect(await storedActive(env, removed.session)).toBeNull();
    // Joining again later does not bring it back: the user chooses again.
    expect((await t.server(env).post(`/organizations/${removed.org.id}/members`, { userId: removed.user.id, role: 'member' })).statusCode).toBe(201);
    expect(await claimsOf(env, removed.session)).not.toHaveProperty('org_id');

    const deleted = await member(env);
    await choose(env, deleted.session, deleted.org.id);
    expect((await t.server(env).delete(`/organizations/${deleted.org.id}`)).statusCode).toBe(204);
    expect(await claimsOf(env, deleted.session)).not.toHaveProperty('org_id');
    expect((await t.server(env).get(`/users/${deleted.user.id}/sessions`)).json().items[0].activeOrganizationId).toBeNull();
  });

  it('records a change in the trail, and a choice that changes nothing not at all', async () => {
    const env = await t.given.environment();
    const { user, org, session } = await member(env);
    await choose(env, session, org.id);
    await choose(env, session, org.id);
    await choose(env, session, null);
    const events = await eventsOf(env);
    expect(events.map((e) => [e.actor_type, e.actor_id, e.metadata])).toEqual([
      ['user', user.id, { organizationId: org.id }],
      ['user', user.id, { organizationId: null }],
    ]);
    expect(events[0]!.targets).toEqual([{ type: 'session', id: session.id }, { type: 'user', id: user.id }, { type: 'organization', id: org.id }]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD, sessionIsActive } from '../helpers/given.js';
import { signIn } from '../helpers/flows.js';
import { eventsOf, expectProblem } from './support.js';

describe('DELETE /_svc/me', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('soft-deletes the account as the Server API does: every session revoked, the cookie cleared, the email freed, the trail told', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'leaving@example.com' });
    const [current, other] = [await t.given.session(env, user), await t.given.session(env, user)];

    const res = await t.client(env, { cookie: current.token, origin: `http://${env.frontendHost}` }).delete('/me');

    expect(res.statusCode, res.body).toBe(204);
    expect(String(res.headers['set-cookie'])).toMatch(/^__session=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Lax$/);
    const stored = (await t.server(env).get(`/users/${user.id}`)).json();
    expect(stored).toMatchObject({ status: 'deleted', deletedAt: t.clock.now().toISOString(), email: 'leaving@example.com' });
    expect([await sessionIsActive(t, env, current), await sessionIsActive(t, env, other)]).toEqual([false, false]);
    expectProblem(await signIn(t, env, user.email, PASSWORD), 401, 'invalid_credentials');
    expect((await t.server(env).post('/users', { email: 'leaving@example.com' })).statusCode).toBe(201);
    const [event] = await eventsOf(t, env, 'user.deleted');
    expect(event).toMatchObject({ actor_type: 'user', actor_id: user.id, targets: [{ type: 'user', id: user.id }], metadata: { revokedSessions: 2 } });
  });

  it('answers 403 self_deletion_disabled where the environment turned it off, and deletes nothing', async () => {
    const env = await t.given.environment({ selfDeletionEnabled: false });
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);

    expectProblem(await t.client(env, { token: session.token }).delete('/me'), 403, 'self_deletion_disabled');
    expect((await t.server(env).get(`/users/${user.id}`)).json().status).toBe('active');
    expect(await sessionIsActive(t, env, session)).toBe(true);
  });

  it('answers 409 last_owner to the only active owner of an organization, and deletes once another owner is there', async () => {
    const env = await t.given.environment();
    const [owner, colleague] = [await t.given.user(env), await t.given.user(env)];
    const org = (await t.server(env).post('/organizations', { name: 'Acme', createdBy: owner.id })).json();
    const session = await t.given.session(env, owner);

    const refused = expectProblem(await t.client(env, { token: session.token }).delete('/me'), 409, 'last_owner');
    expect(refused.properties.organizationIds).toEqual([org.id]);
    expect((await t.server(env).get(`/users/${owner.id}`)).json().status).toBe('active');

    expect((await t.server(env).post(`/organizations/${org.id}/members`, { userId: colleague.id, role: 'owner' })).statusCode).toBe(201);
    expect((await t.client(env, { token: session.token }).delete('/me')).statusCode).toBe(204);
  });

  it("touches only the signed-in user's own account, never another environment's", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const [me, them] = [await t.given.user(mine), await t.given.user(theirs)];
    const theirSession = await t.given.session(theirs, them);
    expectProblem(await t.client(mine, { token: theirSession.token }).delete('/me'), 401, 'unauthenticated');
    expect((await t.client(mine, { token: (await t.given.session(mine, me)).token }).delete('/me')).statusCode).toBe(204);
    expect((await t.server(theirs).get(`/users/${them.id}`)).json().status).toBe('active');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { sessionIsActive } from '../helpers/given.js';

describe('POST /api/server/v1/users/:userId/ban and /unban', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('bans the user and revokes their sessions on the very next request', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const session = await t.given.session(env, user);
    expect(await sessionIsActive(t, env, session)).toBe(true);

    const res = await t.server(env).post(`/users/${user.id}/ban`);

    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: user.id, status: 'banned' });
    expect(await sessionIsActive(t, env, session)).toBe(false);
  });

  it('refuses sign-in to a banned user with 403 user_banned, and unban lets them in again without reviving old sessions', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const old = await t.given.session(env, user);
    await t.server(env).post(`/users/${user.id}/ban`);

    const refused = await t.client(env).post('/auth/sign-in?_is_native=true', { email: user.email, password: user.password });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().properties.code).toBe('user_banned');

    const unbanned = await t.server(env).post(`/users/${user.id}/unban`);
    expect(unbanned.statusCode).toBe(200);
    expect(unbanned.json().status).toBe('active');
    expect(await sessionIsActive(t, env, old)).toBe(false);
    const fresh = await t.given.session(env, user);
    expect(await sessionIsActive(t, env, fresh)).toBe(true);
  });

  it("returns 404 user_not_found for another environment's user, exactly like a missing one", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const foreign = await t.server(mine).post(`/users/${(await t.given.user(theirs)).id}/ban`);
    const missing = await t.server(mine).post('/users/01900000-0000-7000-8000-000000000000/ban');
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().properties).toEqual({ code: 'user_not_found' });
    expect(Object.keys(foreign.json()).sort()).toEqual(Object.keys(missing.json()).sort());
    expect(foreign.json().detail).toBe(missing.json().detail);
  });

  it('answers 403 user_deleted when banning a deleted user', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    expect((await t.server(env).delete(`/users/${user.id}`)).statusCode).toBe(204);
    const res = await t.server(env).post(`/users/${user.id}/ban`);
    expect(res.statusCode).toBe(403);
    expect(res.json().properties.code).toBe('user_deleted');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { sessionIsActive, type TestSession, type TestUser } from '../helpers/given.js';
import { expectProblem, MISSING_ID, storedUser } from './support.js';

describe('GET and DELETE /api/server/v1/users/:userId', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  describe('GET', () => {
    it('answers 200 with the user exactly as it was created', async () => {
      const env = await t.given.environment();
      const created = await t.server(env).post('/users', {
        email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', privateMetadata: { internal: { score: 7 } },
      });

      const res = await t.server(env).get(`/users/${created.json().id}`);

      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(created.json());
      expect(res.json().privateMetadata).toEqual({ internal: { score: 7 } });
    });

    it("answers 404 user_not_found for another environment's user, with the same body as for a missing id", async () => {
      const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
      const foreignUser = await t.given.user(theirs);

      const foreign = expectProblem(await t.server(mine).get(`/users/${foreignUser.id}`), 404, 'user_not_found');
      const missing = expectProblem(await t.server(mine).get(`/users/${MISSING_ID}`), 404, 'user_not_found');

      const { instance: _a, ...foreignRest } = foreign;
      const { instance: _b, ...missingRest } = missing;
      expect(foreignRest).toEqual(missingRest);
      expect(foreign.properties).toEqual({ code: 'user_not_found' });
      expect(JSON.stringify(foreign)).not.toContain(foreignUser.id);
    });

    it('answers 400 invalid_request for an id that is not a uuid', async () => {
      const env = await t.given.environment();
      const body = expectProblem(await t.server(env).get('/users/not-a-uuid'), 400, 'invalid_request');
      expect(body.properties.errors).toEqual([{ path: '/params/userId', message: expect.any(String) }]);
    });
  });

  describe('DELETE', () => {
    it('answers 204 with an empty body, and the user then reads as deleted with deletedAt', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      t.clock.set('2026-11-23T08:30:00.000Z');

      const res = await t.server(env).delete(`/users/${user.id}`);

      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      const after = await t.server(env).get(`/users/${user.id}`);
      expect(after.statusCode).toBe(200);
      expect(after.json()).toMatchObject({
        id: user.id, status: 'deleted', deletedAt: '2026-11-23T08:30:00.000Z', updatedAt: '2026-11-23T08:30:00.000Z',
      });
      const row = await storedUser(t, env, user.id);
      expect(row.status).toBe('deleted');
      expect(row.deleted_at?.toISOString()).toBe('2026-11-23T08:30:00.000Z');
    });

    it('answers 403 user_deleted to a repeat delete and leaves deletedAt at the first delete', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      expect((await t.server(env).delete(`/users/${user.id}`)).statusCode).toBe(204);
      const firstDeletedAt = (await storedUser(t, env, user.id)).deleted_at;
      t.clock.advance(60_000);

      expectProblem(await t.server(env).delete(`/users/${user.id}`), 403, 'user_deleted');

      expect((await storedUser(t, env, user.id)).deleted_at).toEqual(firstDeletedAt);
    });

    it("answers 404 user_not_found for another environment's user and leaves that user active", async () => {
      const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
      const foreignUser = await t.given.user(theirs);

      expectProblem(await t.server(mine).delete(`/users/${foreignUser.id}`), 404, 'user_not_found');
      expectProblem(await t.server(mine).delete(`/users/${MISSING_ID}`), 404, 'user_not_found');

      expect((await storedUser(t, theirs, foreignUser.id)).status).toBe('active');
    });

    it('answers 400 invalid_request for an id that is not a uuid', async () => {
      const env = await t.given.environment();
      expectProblem(await t.server(env).delete('/users/1234'), 400, 'invalid_request');
    });

    it('revokes every session of the user, refused on the very next request', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const sessions = [await t.given.session(env, user), await t.given.session(env, user)];
      for (const session of sessions) expect(await sessionIsActive(t, env, session)).toBe(true);

      expect((await t.server(env).delete(`/users/${user.id}`)).statusCode).toBe(204);

      for (const session of sessions) expect(await sessionIsActive(t, env, session)).toBe(false);
      const rows = await t.db.selectFrom('sessions').select('revoked_at').where('environment_id', '=', env.id).where('user_id', '=', user.id).execute();
      expect(rows).toHaveLength(2);
      for (const row of rows) expect(row.revoked_at).not.toBeNull();
    });

    it('stops the deleted user from signing in', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      await t.server(env).delete(`/users/${user.id}`);
      const res = await t.client(env).post('/auth/sign-in?_is_native=true', { email: user.email, password: user.password });
      expectProblem(res, 401, 'invalid_credentials');
    });

    it("does not touch the other users' sessions", async () => {
      const env = await t.given.environment();
      const [doomed, bystander] = [await t.given.user(env), await t.given.user(env)];
      const bystanderSession = await t.given.session(env, bystander);
      await t.given.session(env, doomed);

      expect((await t.server(env).delete(`/users/${doomed.id}`)).statusCode).toBe(204);

      expect(await sessionIsActive(t, env, bystanderSession)).toBe(true);
    });
  });

  describe('changes to a deleted user', () => {
    let env: TestEnv;
    let user: TestUser;
    let session: TestSession;
    beforeAll(async () => {
      env = await t.given.environment();
      user = await t.given.user(env, { firstName: 'Ada', publicMetadata: { plan: 'pro' } });
      session = await t.given.session(env, user);
      expect((await t.server(env).delete(`/users/${user.id}`)).statusCode).toBe(204);
    });

    it.each([
      ['PATCH the profile', (id: string) => t.server(env).patch(`/users/${id}`, { firstName: 'Grace' })],
      ['PATCH the metadata', (id: string) => t.server(env).patch(`/users/${id}/metadata`, { publicMetadata: { plan: 'free' } })],
      ['ban', (id: string) => t.server(env).post(`/users/${id}/ban`)],
      ['unban', (id: string) => t.server(env).post(`/users/${id}/unban`)],
      ['revoke all sessions', (id: string) => t.server(env).delete(`/users/${id}/sessions`)],
      ['revoke one session', (id: string) => t.server(env).delete(`/users/${id}/sessions/${session.id}`)],
    ])('answers 403 user_deleted to %s and changes nothing', async (_case, change) => {
      const before = await storedUser(t, env, user.id);
      t.clock.advance(1000);

      expectProblem(await change(user.id), 403, 'user_deleted');

      expect(await storedUser(t, env, user.id)).toEqual(before);
      const read = (await t.server(env).get(`/users/${user.id}`)).json();
      expect(read).toMatchObject({ status: 'deleted', firstName: 'Ada', publicMetadata: { plan: 'pro' } });
    });
  });

  describe('authentication', () => {
    it.each([
      ['no Authorization header', {}],
      ['a wrong secret key', { authorization: 'Bearer sk_not-a-real-key-0123456789abcdefghijklmno' }],
      ['an empty bearer token', { authorization: 'Bearer ' }],
      ['a Basic credential', { authorization: 'Basic dXNlcjpwYXNz' }],
    ])('answers 401 unauthenticated with WWW-Authenticate: Bearer for %s', async (_case, headers) => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const res = await t.app.inject({ method: 'GET', url: `/api/server/v1/users/${user.id}`, headers });
      expectProblem(res, 401, 'unauthenticated');
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it('answers 401 before looking at the body or the user, so nothing is created without a key', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/api/server/v1/users', payload: { email: 'sneaky@example.com' } });
      expectProblem(res, 401, 'unauthenticated');
      expect(await t.db.selectFrom('users').select('id').where('email', '=', 'sneaky@example.com').execute()).toEqual([]);
    });

    it('answers 401 to a secret key from the moment it is revoked, while other keys keep working', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const extra = await t.admin.post(`/environments/${env.id}/secret-keys`);
      expect(extra.statusCode).toBe(201);
      const { id: keyId, secretKey } = extra.json();
      expect((await t.server(env, secretKey).get(`/users/${user.id}`)).statusCode).toBe(200);

      expect((await t.admin.delete(`/secret-keys/${keyId}`)).statusCode).toBe(204);

      const res = await t.server(env, secretKey).get(`/users/${user.id}`);
      expectProblem(res, 401, 'unauthenticated');
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect((await t.server(env).get(`/users/${user.id}`)).statusCode).toBe(200);
    });

    it('answers 401 to a client session token used as a secret key', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const session = await t.given.session(env, user);
      expectProblem(await t.server(env, session.token).get(`/users/${user.id}`), 401, 'unauthenticated');
    });
  });
});

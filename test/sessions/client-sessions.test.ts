import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../helpers/problem.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { sessionIsActive, type TestUser } from '../helpers/given.js';

const CLIENT_USER_KEYS = [
  'createdAt', 'deletedAt', 'email', 'emailVerifiedAt', 'environmentId', 'firstName', 'id', 'lastName', 'locale', 'name',
  'publicMetadata', 'registrationState', 'status', 'unsafeMetadata', 'updatedAt',
].sort();


function expectUnauthenticated(res: LightMyRequestResponse) {
  expectProblem(res, 401, 'unauthenticated');
  expect(res.headers['www-authenticate']).toBe('Bearer');
}

describe('client-plane sessions and the current user', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const frontendOrigin = (env: TestEnv) => `http://${env.frontendHost}`;

  /** Signs in as a browser would and returns the __session cookie value and the session id. */
  async function cookieSession(env: TestEnv, user: TestUser) {
    const res = await t.client(env).post('/auth/sign-in', { email: user.email, password: user.password });
    if (res.statusCode !== 200) throw new Error(`sign-in: ${res.statusCode} ${res.body}`);
    return { cookie: res.cookies.find((c) => c.name === '__session')!.value, id: res.json().session.id as string };
  }

  const me = (env: TestEnv, auth: { token?: string; cookie?: string }) => t.client(env, auth).get('/me');

  describe('GET /_svc/me', () => {
    it('returns the signed-in user in client form, without private metadata, and a null actor', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env, {
        email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace',
        publicMetadata: { plan: 'pro' }, privateMetadata: { stripeId: 'cus_123' }, unsafeMetadata: { theme: 'dark' },
      });
      const session = await t.given.session(env, user);

      const res = await me(env, { token: session.token });

      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual([...CLIENT_USER_KEYS, 'actor'].sort());
      expect(body).toMatchObject({
        actor: null, id: user.id, environmentId: env.id, email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', name: 'Ada Lovelace',
        status: 'active', registrationState: 'complete', publicMetadata: { plan: 'pro' }, unsafeMetadata: { theme: 'dark' },
      });
      expect(res.body).not.toContain('cus_123');
      expect(res.body).not.toContain('privateMetadata');
    });

    it('answers 401 unauthenticated with WWW-Authenticate when no session is sent', async () => {
      const env = await t.given.environment();
      expectUnauthenticated(await t.client(env).get('/me'));
    });

    it('answers 401 unauthenticated to a made-up token', async () => {
      const env = await t.given.environment();
      expectUnauthenticated(await me(env, { token: 'sess_madeUpTokenThatWasNeverIssued000000000000' }));
      expectUnauthenticated(await me(env, { cookie: 'sess_madeUpTokenThatWasNeverIssued000000000000' }));
    });
  });

  describe('PATCH /_svc/me', () => {
    it('updates firstName, lastName, name and locale', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env, { firstName: 'Ada', lastName: 'Byron' });
      const { token } = await t.given.session(env, user);

      const res = await t.client(env, { token }).patch('/me', { lastName: 'Lovelace', locale: 'da' });

      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace', name: 'Ada Lovelace', locale: 'da' });
      expect(res.json()).not.toHaveProperty('privateMetadata');
      expect((await t.server(env).get(`/users/${user.id}`)).json()).toMatchObject({ lastName: 'Lovelace', name: 'Ada Lovelace', locale: 'da' });

      const named = await t.client(env, { token }).patch('/me', { name: 'Countess of Lovelace' });
      expect(named.json()).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace', name: 'Countess of Lovelace' });

      const cleared = await t.client(env, { token }).patch('/me', { locale: null, firstName: null });
      expect(cleared.statusCode).toBe(200);
      expect(cleared.json()).toMatchObject({ locale: null, firstName: null });
      expect((await t.server(env).get(`/users/${user.id}`)).json()).toMatchObject({ locale: null, firstName: null });
    });

    it('deep-merges unsafeMetadata: nested objects merge, arrays replace and null removes a key', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env, {
        unsafeMetadata: { prefs: { theme: 'dark', font: 'serif' }, tags: ['a', 'b'], old: true },
        publicMetadata: { plan: 'pro' }, privateMetadata: { note: 'x' },
      });
      const { token } = await t.given.session(env, user);

      const res = await t.client(env, { token }).patch('/me', { unsafeMetadata: { prefs: { font: 'mono', size: 12 }, tags: ['c'], old: null } });

      expect(res.statusCode).toBe(200);
      const expected = { prefs: { theme: 'dark', font: 'mono', size: 12 }, tags: ['c'] };
      expect(res.json().unsafeMetadata).toEqual(expected);
      const stored = (await t.server(env).get(`/users/${user.id}`)).json();
      expect(stored.unsafeMetadata).toEqual(expected);
      expect(stored.publicMetadata).toEqual({ plan: 'pro' });
      expect(stored.privateMetadata).toEqual({ note: 'x' });
    });

    it('refuses unsafeMetadata that would take the three bags over 8 KB with 400 metadata_too_large and stores nothing', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const { token } = await t.given.session(env, user);

      const res = await t.client(env, { token }).patch('/me', { firstName: 'Ada', unsafeMetadata: { blob: 'x'.repeat(8200) } });

      expectProblem(res, 400, 'metadata_too_large');
      const stored = (await t.server(env).get(`/users/${user.id}`)).json();
      expect(stored.unsafeMetadata).toEqual({});
      expect(stored.firstName).toBeNull();
    });

    it.each([
      ['publicMetadata', { plan: 'enterprise' }],
      ['privateMetadata', { role: 'admin' }],
      ['email', 'mallory@example.com'],
      ['status', 'active'],
      ['password', 'a brand new password'],
      ['emailVerifiedAt', '2020-01-01T00:00:00.000Z'],
    ])('refuses %s with 400 invalid_request and stores nothing', async (field, value) => {
      const env = await t.given.environment();
      const user = await t.given.user(env, { firstName: 'Ada' });
      const { token } = await t.given.session(env, user);
      const before = (await t.server(env).get(`/users/${user.id}`)).json();

      const res = await t.client(env, { token }).patch('/me', { firstName: 'Mallory', unsafeMetadata: { x: 1 }, [field]: value });

      expectProblem(res, 400, 'invalid_request');
      expect(res.json().properties.errors).toContainEqual(expect.objectContaining({ path: `/body/${field}` }));
      expect((await t.server(env).get(`/users/${user.id}`)).json()).toEqual(before);
      expect((await t.given.session(env, user)).userId).toBe(user.id);
    });

    it('refuses a locale outside en and da with 400 invalid_request', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const { token } = await t.given.session(env, user);
      expectProblem(await t.client(env, { token }).patch('/me', { locale: 'fr' }), 400, 'invalid_request');
      expect((await t.server(env).get(`/users/${user.id}`)).json().locale).toBeNull();
    });
  });

  describe('POST /_svc/auth/sign-out', () => {
    it('ends a cookie session with 204, clears the cookie, and the cookie is refused on the next request', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const { cookie } = await cookieSession(env, user);

      const res = await t.client(env, { cookie, origin: frontendOrigin(env) }).post('/auth/sign-out');

      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      const cleared = res.cookies.find((c) => c.name === '__session');
      expect(cleared).toMatchObject({ value: '', path: '/', httpOnly: true });
      expect(cleared!.expires!.getTime()).toBeLessThanOrEqual(Date.now());
      expectUnauthenticated(await me(env, { cookie }));
    });

    it('ends a bearer session with 204, and the token is refused on the next request', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const session = await t.given.session(env, user);
      const other = await t.given.session(env, user);

      const res = await t.client(env, { token: session.token }).post('/auth/sign-out');

      expect(res.statusCode).toBe(204);
      expectUnauthenticated(await me(env, { token: session.token }));
      expect(await sessionIsActive(t, env, other)).toBe(true);
    });

    it('answers 401 unauthenticated when signing out without a session', async () => {
      const env = await t.given.environment();
      expectUnauthenticated(await t.client(env).post('/auth/sign-out'));
    });
  });

  describe('GET /_svc/sessions', () => {
    it("lists only the user's own active sessions, in creation order", async () => {
      const env = await t.given.environment();
      const [user, stranger] = [await t.given.user(env), await t.given.user(env)];
      const browser = await cookieSession(env, user);
      const phone = await t.given.session(env, user);
      const ended = await t.given.session(env, user);
      await t.client(env, { token: ended.token }).post('/auth/sign-out');
      await t.given.session(env, stranger);

      const res = await t.client(env, { token: phone.token }).get('/sessions');

      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.items.map((s: { id: string }) => s.id)).toEqual([browser.id, phone.id]);
      expect(body.items.every((s: { userId: string; status: string; revokedAt: null }) => s.userId === user.id && s.status === 'active' && s.revokedAt === null)).toBe(true);
      expect(body).toMatchObject({ nextCursor: null, hasMore: false });
      expect(res.body).not.toContain(phone.token);
    });

    it('pages with limit and cursor', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const sessions = [await t.given.session(env, user), await t.given.session(env, user), await t.given.session(env, user)];
      const client = t.client(env, { token: sessions[0].token });

      const first = (await client.get('/sessions?limit=2')).json();
      expect(first.items.map((s: { id: string }) => s.id)).toEqual([sessions[0].id, sessions[1].id]);
      expect(first).toMatchObject({ hasMore: true, nextCursor: sessions[1].id });
      const second = (await client.get(`/sessions?limit=2&cursor=${first.nextCursor}`)).json();
      expect(second).toEqual({ items: [expect.objectContaining({ id: sessions[2].id })], hasMore: false, nextCursor: null });
    });

    it('leaves out sessions that have expired', async () => {
      const env = await t.given.environment({ session: { idleTimeoutSeconds: 600 } });
      const user = await t.given.user(env);
      const old = await t.given.session(env, user);
      t.clock.advance(601_000);
      const fresh = await t.given.session(env, user);

      const res = await t.client(env, { token: fresh.token }).get('/sessions');

      expect(res.json().items.map((s: { id: string }) => s.id)).toEqual([fresh.id]);
      expect(res.json().items).not.toContainEqual(expect.objectContaining({ id: old.id }));
    });
  });

  describe('DELETE /_svc/sessions/:sessionId', () => {
    it('ends another session of the same user, which is refused on its next request, and keeps the current one', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const [current, other] = [await t.given.session(env, user), await t.given.session(env, user)];

      const res = await t.client(env, { token: current.token }).delete(`/sessions/${other.id}`);

      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect(await sessionIsActive(t, env, other)).toBe(false);
      expect(await sessionIsActive(t, env, current)).toBe(true);
      const listed = (await t.client(env, { token: current.token }).get('/sessions')).json().items;
      expect(listed.map((s: { id: string }) => s.id)).toEqual([current.id]);
    });

    it('ends the current session when given its own id', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const current = await t.given.session(env, user);
      expect((await t.client(env, { token: current.token }).delete(`/sessions/${current.id}`)).statusCode).toBe(204);
      expect(await sessionIsActive(t, env, current)).toBe(false);
    });

    it("answers 404 resource_not_found for another user's session and leaves it active", async () => {
      const env = await t.given.environment();
      const [user, stranger] = [await t.given.user(env), await t.given.user(env)];
      const mine = await t.given.session(env, user);
      const theirs = await t.given.session(env, stranger);

      const res = await t.client(env, { token: mine.token }).delete(`/sessions/${theirs.id}`);

      expectProblem(res, 404, 'resource_not_found');
      expect(await sessionIsActive(t, env, theirs)).toBe(true);
    });

    it('answers 404 for an unknown session id and 400 invalid_request for a malformed one', async () => {
      const env = await t.given.environment();
      const { token } = await t.given.session(env, await t.given.user(env));
      expectProblem(await t.client(env, { token }).delete('/sessions/01900000-0000-7000-8000-000000000000'), 404, 'resource_not_found');
      expectProblem(await t.client(env, { token }).delete('/sessions/not-a-uuid'), 400, 'invalid_request');
    });
  });

  describe('lifetimes', () => {
    it('expires a session that has been idle for longer than session.idleTimeoutSeconds', async () => {
      const env = await t.given.environment({ session: { idleTimeoutSeconds: 600 } });
      const session = await t.given.session(env, await t.given.user(env));

      t.clock.advance(599_000);
      expect(await sessionIsActive(t, env, session)).toBe(true);
      t.clock.advance(599_000);
      expect(await sessionIsActive(t, env, session)).toBe(true);
      t.clock.advance(600_000);
      expectUnauthenticated(await me(env, { token: session.token }));
    });

    it('keeps a session with a short idle timeout alive while it is used more often than the timeout', async () => {
      const env = await t.given.environment({ session: { idleTimeoutSeconds: 30 } });
      const session = await t.given.session(env, await t.given.user(env));

      for (let i = 0; i < 6; i++) {
        t.clock.advance(20_000);
        expect(await sessionIsActive(t, env, session)).toBe(true);
      }
      t.clock.advance(30_000);
      expect(await sessionIsActive(t, env, session)).toBe(false);
    });

    it('expires a cookie session after session.maxLifetimeSeconds even while it is in use', async () => {
      const env = await t.given.environment({ session: { maxLifetimeSeconds: 3600, idleTimeoutSeconds: 1800 } });
      const user = await t.given.user(env);
      const res = await t.client(env).post('/auth/sign-in', { email: user.email, password: user.password });
      const { cookie } = { cookie: res.cookies.find((c) => c.name === '__session')!.value };
      const started = t.clock.now().getTime();
      expect(res.json().session.expiresAt).toBe(new Date(started + 3_600_000).toISOString());

      for (let i = 0; i < 3; i++) {
        t.clock.advance(1_000_000);
        expect((await me(env, { cookie })).statusCode).toBe(200);
      }
      t.clock.advance(599_000);
      expect((await me(env, { cookie })).statusCode).toBe(200);
      t.clock.advance(1_000);
      expectUnauthenticated(await me(env, { cookie }));
    });
  });

  describe('revocation from the Server API', () => {
    it('DELETE /users/:id/sessions ends cookie and bearer sessions on the very next request', async () => {
      const env = await t.given.environment();
      const [user, bystander] = [await t.given.user(env), await t.given.user(env)];
      const { cookie } = await cookieSession(env, user);
      const bearer = await t.given.session(env, user);
      const unrelated = await t.given.session(env, bystander);
      expect((await me(env, { cookie })).statusCode).toBe(200);

      const res = await t.server(env).delete(`/users/${user.id}/sessions`);

      expect(res.statusCode).toBe(204);
      expectUnauthenticated(await me(env, { cookie }));
      expectUnauthenticated(await me(env, { token: bearer.token }));
      expect(await sessionIsActive(t, env, unrelated)).toBe(true);
      const fresh = await t.given.session(env, user);
      expect(await sessionIsActive(t, env, fresh)).toBe(true);
    });
  });

  describe('plane boundaries', () => {
    it('answers 404 resource_not_found for a Host that no environment serves', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const session = await t.given.session(env, user);
      const nowhere = { ...env, frontendHost: 'nowhere.localhost:3000' };

      expectProblem(await t.client(nowhere, { token: session.token }).get('/me'), 404, 'resource_not_found');
      expectProblem(await t.client(nowhere).post('/auth/sign-in', { email: user.email, password: user.password }), 404, 'resource_not_found');
    });

    it('refuses a secret key on the client plane with 401 unauthenticated', async () => {
      const env = await t.given.environment();
      expectUnauthenticated(await t.client(env, { token: env.secretKey }).get('/me'));
      expectUnauthenticated(await t.client(env, { cookie: env.secretKey }).get('/me'));
    });

    it('refuses a session token on the Server API with 401 unauthenticated', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const session = await t.given.session(env, user);
      expectUnauthenticated(await t.server(env, session.token).get(`/users/${user.id}`));
      const { cookie } = await cookieSession(env, user);
      expectUnauthenticated(await t.app.inject({ method: 'GET', url: `/api/server/v1/users/${user.id}`, headers: { cookie: `__session=${cookie}` } }));
    });

    it("refuses a session of one environment on another environment's host", async () => {
      const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
      const session = await t.given.session(theirs, await t.given.user(theirs));
      expectUnauthenticated(await me(mine, { token: session.token }));
      expect(await sessionIsActive(t, theirs, session)).toBe(true);
    });
  });

  describe('CSRF defence on cookie-authenticated changes', () => {
    it('refuses a cookie-authenticated PATCH /me without Origin with 403 forbidden and changes nothing', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env, { firstName: 'Ada' });
      const { cookie } = await cookieSession(env, user);

      const res = await t.client(env, { cookie }).patch('/me', { firstName: 'Mallory' });

      expectProblem(res, 403, 'forbidden');
      expect((await t.server(env).get(`/users/${user.id}`)).json().firstName).toBe('Ada');
    });

    it('refuses a cookie-authenticated PATCH /me from a foreign Origin with 403 forbidden and changes nothing', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env, { firstName: 'Ada' });
      const { cookie } = await cookieSession(env, user);

      for (const origin of ['https://evil.example', `http://${env.frontendHost}.evil.example`, 'null', `http://${env.frontendHost.split(':')[0]}`]) {
        const res = await t.client(env, { cookie, origin }).patch('/me', { firstName: 'Mallory' });
        expectProblem(res, 403, 'forbidden');
      }
      expect((await t.server(env).get(`/users/${user.id}`)).json().firstName).toBe('Ada');
    });

    it('accepts a cookie-authenticated PATCH /me from the frontend host origin', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const { cookie } = await cookieSession(env, user);

      const res = await t.client(env, { cookie, origin: frontendOrigin(env) }).patch('/me', { firstName: 'Ada' });

      expect(res.statusCode).toBe(200);
      expect((await t.server(env).get(`/users/${user.id}`)).json().firstName).toBe('Ada');
    });

    it('accepts a cookie-authenticated PATCH /me from an allowed origin once it is in the list, and not before', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const { cookie } = await cookieSession(env, user);
      const app = 'https://app.example.com';
      expectProblem(await t.client(env, { cookie, origin: app }).patch('/me', { firstName: 'Ada' }), 403, 'forbidden');

      const put = await t.server(env).put('/allowed-origins', { origins: [app] });
      expect(put.statusCode).toBe(200);

      const res = await t.client(env, { cookie, origin: app }).patch('/me', { firstName: 'Ada' });
      expect(res.statusCode).toBe(200);
      expect(res.json().firstName).toBe('Ada');
    });

    it('refuses cookie-authenticated sign-out and session deletion without Origin, leaving the sessions alive', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const browser = await cookieSession(env, user);
      const phone = await t.given.session(env, user);

      expectProblem(await t.client(env, { cookie: browser.cookie }).post('/auth/sign-out'), 403, 'forbidden');
      expectProblem(await t.client(env, { cookie: browser.cookie }).delete(`/sessions/${phone.id}`), 403, 'forbidden');

      expect((await me(env, { cookie: browser.cookie })).statusCode).toBe(200);
      expect(await sessionIsActive(t, env, phone)).toBe(true);
    });

    it('refuses sign-in from a foreign Origin with 403 forbidden and sets no cookie (login CSRF)', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);

      const res = await t.client(env, { origin: 'https://evil.example' }).post('/auth/sign-in', { email: user.email, password: user.password });

      expectProblem(res, 403, 'forbidden');
      expect(res.headers['set-cookie']).toBeUndefined();
      const ok = await t.client(env, { origin: frontendOrigin(env) }).post('/auth/sign-in', { email: user.email, password: user.password });
      expect(ok.statusCode).toBe(200);
    });

    it('lets cookie-authenticated reads through without Origin', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const { cookie } = await cookieSession(env, user);
      expect((await me(env, { cookie })).statusCode).toBe(200);
      expect((await t.client(env, { cookie }).get('/sessions')).statusCode).toBe(200);
    });

    it('lets bearer-token changes through without Origin', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const { token } = await t.given.session(env, user);

      const res = await t.client(env, { token }).patch('/me', { firstName: 'Ada' });

      expect(res.statusCode).toBe(200);
      expect((await t.server(env).get(`/users/${user.id}`)).json().firstName).toBe('Ada');
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD, sessionIsActive, type TestSession, type TestUser } from '../helpers/given.js';
import { createUser, expectProblem, MISSING_ID, storedUser } from './support.js';
import { signIn } from '../helpers/flows.js';

const NEW_PASSWORD = 'an entirely different passphrase';

describe('PATCH /api/server/v1/users/:userId and the user sessions endpoints', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());


  describe('PATCH /users/:userId', () => {
    it('recomputes the full name from a new first name, keeping the last name, and moves updatedAt', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' });
      t.clock.advance(60_000);

      const res = await t.server(env).patch(`/users/${user.id}`, { firstName: 'Augusta' });

      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        ...user, firstName: 'Augusta', name: 'Augusta Lovelace', updatedAt: t.clock.now().toISOString(),
      });
      const row = await storedUser(t, env, user.id);
      expect([row.first_name, row.last_name, row.name]).toEqual(['Augusta', 'Lovelace', 'Augusta Lovelace']);
    });

    it('recomputes the full name when a name part is cleared with null', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' });
      expect((await t.server(env).patch(`/users/${user.id}`, { lastName: null })).json())
        .toMatchObject({ firstName: 'Ada', lastName: null, name: 'Ada' });
      expect((await t.server(env).patch(`/users/${user.id}`, { firstName: null })).json())
        .toMatchObject({ firstName: null, lastName: null, name: null });
    });

    it('keeps an explicitly given full name instead of recomputing it', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' });
      const res = await t.server(env).patch(`/users/${user.id}`, { firstName: 'Augusta', name: 'Augusta Ada King' });
      expect(res.json()).toMatchObject({ firstName: 'Augusta', lastName: 'Lovelace', name: 'Augusta Ada King' });

      const onlyName = await t.server(env).patch(`/users/${user.id}`, { name: 'Countess of Lovelace' });
      expect(onlyName.json()).toMatchObject({ firstName: 'Augusta', lastName: 'Lovelace', name: 'Countess of Lovelace' });
    });

    it('sets the locale to en or da, and clears it with null', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com' });
      expect((await t.server(env).patch(`/users/${user.id}`, { locale: 'da' })).json().locale).toBe('da');
      expect((await t.server(env).patch(`/users/${user.id}`, { locale: 'en' })).json().locale).toBe('en');
      expect((await storedUser(t, env, user.id)).locale).toBe('en');
      expect((await t.server(env).patch(`/users/${user.id}`, { locale: null })).json().locale).toBeNull();
    });

    it.each(['fr', 'EN', 'da-DK', '', false])('answers 400 invalid_request for the locale %j and keeps the old one', async (locale) => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com' });
      await t.server(env).patch(`/users/${user.id}`, { locale: 'da' });
      const body = expectProblem(await t.server(env).patch(`/users/${user.id}`, { locale }), 400, 'invalid_request');
      expect(body.properties.errors).toContainEqual({ path: '/body/locale', message: expect.any(String) });
      expect((await storedUser(t, env, user.id)).locale).toBe('da');
    });

    it('answers 400 invalid_request for an empty name part instead of clearing it', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com', firstName: 'Ada' });
      expectProblem(await t.server(env).patch(`/users/${user.id}`, { firstName: '' }), 400, 'invalid_request');
      expect((await storedUser(t, env, user.id)).first_name).toBe('Ada');
    });

    it('changes the email, lower-cased and verified', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com', password: PASSWORD });
      t.clock.advance(1000);

      const res = await t.server(env).patch(`/users/${user.id}`, { email: 'Ada.King@Example.com' });

      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ email: 'ada.king@example.com', emailVerifiedAt: t.clock.now().toISOString() });
      expect((await signIn(t, env, 'ada.king@example.com', PASSWORD)).statusCode).toBe(200);
      expectProblem(await signIn(t, env, 'ada@example.com', PASSWORD), 401, 'invalid_credentials');
    });

    it("answers 409 email_taken for another user's email in any letter case and changes nothing", async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com', firstName: 'Ada' });
      await createUser(t, env, { email: 'grace@example.com' });
      const before = await storedUser(t, env, user.id);
      t.clock.advance(1000);

      expectProblem(await t.server(env).patch(`/users/${user.id}`, { email: 'GRACE@example.com', firstName: 'Changed' }), 409, 'email_taken');

      expect(await storedUser(t, env, user.id)).toEqual(before);
    });

    it("lets a user take a deleted user's email or another environment's", async () => {
      const [env, other] = [await t.given.environment(), await t.given.environment()];
      const gone = await createUser(t, env, { email: 'gone@example.com' });
      await t.server(env).delete(`/users/${gone.id}`);
      await createUser(t, other, { email: 'elsewhere@example.com' });
      const user = await createUser(t, env, { email: 'ada@example.com' });

      expect((await t.server(env).patch(`/users/${user.id}`, { email: 'gone@example.com' })).statusCode).toBe(200);
      expect((await t.server(env).patch(`/users/${user.id}`, { email: 'elsewhere@example.com' })).statusCode).toBe(200);
    });

    it('changes the password to one the new password signs in with, while the old one stops working', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com', password: PASSWORD });
      const oldHash = (await storedUser(t, env, user.id)).password_hash;

      const res = await t.server(env).patch(`/users/${user.id}`, { password: NEW_PASSWORD });

      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain(NEW_PASSWORD);
      expect(res.body).not.toMatch(/argon2|password/i);
      const newHash = (await storedUser(t, env, user.id)).password_hash;
      expect(newHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      expect(newHash).not.toBe(oldHash);
      expect((await signIn(t, env, 'ada@example.com', NEW_PASSWORD)).statusCode).toBe(200);
      expectProblem(await signIn(t, env, 'ada@example.com', PASSWORD), 401, 'invalid_credentials');
    });

    it('gives a passwordless user a password to sign in with', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com' });
      expect((await t.server(env).patch(`/users/${user.id}`, { password: NEW_PASSWORD })).statusCode).toBe(200);
      expect((await signIn(t, env, 'ada@example.com', NEW_PASSWORD)).statusCode).toBe(200);
    });

    it.each([
      ['too short', 'k7#qv9z'],
      ['common', 'iloveyou1'],
      ["the user's email", 'ada.lovelace@example.com'],
      ['over 256 characters', 'k'.repeat(257)],
    ])('answers 400 weak_password for a new password that is %s, and the old password keeps working', async (_case, password) => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada.lovelace@example.com', password: PASSWORD });
      const before = await storedUser(t, env, user.id);

      expectProblem(await t.server(env).patch(`/users/${user.id}`, { password }), 400, 'weak_password');

      expect(await storedUser(t, env, user.id)).toEqual(before);
      expect((await signIn(t, env, 'ada.lovelace@example.com', PASSWORD)).statusCode).toBe(200);
    });

    it('checks a new password against the new email when both change together', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com', password: PASSWORD });
      const res = await t.server(env).patch(`/users/${user.id}`, { email: 'countess.lovelace@example.com', password: 'countess.lovelace@example.com' });
      expectProblem(res, 400, 'weak_password');
      expect((await storedUser(t, env, user.id)).email).toBe('ada@example.com');
    });

    it.each([
      ['an empty body', {}],
      ['an unknown field', { status: 'banned' }],
      ['metadata, which has its own endpoint', { publicMetadata: { a: 1 } }],
      ['a malformed email', { email: 'nope' }],
    ])('answers 400 invalid_request for %s and changes nothing', async (_case, body) => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com' });
      const before = await storedUser(t, env, user.id);
      expectProblem(await t.server(env).patch(`/users/${user.id}`, body), 400, 'invalid_request');
      expect(await storedUser(t, env, user.id)).toEqual(before);
    });

    it("answers 404 user_not_found for another environment's user and a missing id", async () => {
      const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
      const foreign = await createUser(t, theirs, { email: 'ada@example.com', firstName: 'Ada' });
      expectProblem(await t.server(mine).patch(`/users/${foreign.id}`, { firstName: 'Eve' }), 404, 'user_not_found');
      expectProblem(await t.server(mine).patch(`/users/${MISSING_ID}`, { firstName: 'Eve' }), 404, 'user_not_found');
      expect((await storedUser(t, theirs, foreign.id)).first_name).toBe('Ada');
    });

    it('changes a banned user without unbanning them', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com' });
      await t.server(env).post(`/users/${user.id}/ban`);
      expect((await t.server(env).patch(`/users/${user.id}`, { firstName: 'Ada' })).json()).toMatchObject({ firstName: 'Ada', status: 'banned' });
    });
    it('keeps the full name consistent when first and last name change at the same moment', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' });

      const results = await Promise.all([
        t.server(env).patch(`/users/${user.id}`, { firstName: 'Grace' }),
        t.server(env).patch(`/users/${user.id}`, { lastName: 'Hopper' }),
      ]);

      expect(results.map((r) => r.statusCode)).toEqual([200, 200]);
      const stored = (await t.server(env).get(`/users/${user.id}`)).json();
      expect(stored).toMatchObject({ firstName: 'Grace', lastName: 'Hopper', name: 'Grace Hopper' });
    });

    it('completes a pending client registration when the server sets the email, so the user can sign in', async () => {
      const env = await t.given.environment();
      const signedUp = await t.client(env).post('/auth/sign-up', { email: 'pending@example.com', password: PASSWORD });
      expect(signedUp.json().user.registrationState).toBe('pending_email_verification');
      t.clock.advance(1000);

      const res = await t.server(env).patch(`/users/${signedUp.json().user.id}`, { email: 'verified@example.com' });

      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ email: 'verified@example.com', registrationState: 'complete', emailVerifiedAt: t.clock.now().toISOString() });
      expect((await signIn(t, env, 'verified@example.com', PASSWORD)).statusCode).toBe(200);
    });
  });

  describe('GET /users/:userId/sessions', () => {
    it("lists the user's sessions oldest first in the Session shape, without other users' sessions", async () => {
      const env = await t.given.environment();
      const [user, other] = [await t.given.user(env), await t.given.user(env)];
      const first = await t.given.session(env, user);
      await t.given.session(env, other);
      const second = await t.given.session(env, user);

      const res = await t.server(env).get(`/users/${user.id}/sessions`);

      expect(res.statusCode).toBe(200);
      const page = res.json();
      expect(page).toMatchObject({ nextCursor: null, hasMore: false });
      expect(page.items.map((s: { id: string }) => s.id)).toEqual([first.id, second.id]);
      expect(page.items[0]).toEqual({
        id: first.id, userId: user.id, status: 'active', actor: null,
        ipAddress: expect.any(String), userAgent: expect.toBeOneOf([null, expect.any(String)]),
        createdAt: t.clock.now().toISOString(), lastActiveAt: t.clock.now().toISOString(),
        expiresAt: new Date(t.clock.now().getTime() + 2_592_000_000).toISOString(), revokedAt: null, amr: ['pwd'], activeOrganizationId: null,
      });
      expect(res.body).not.toContain(first.token);
    });

    it('pages through the sessions with limit and cursor', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await t.given.session(env, user)).id);

      const first = (await t.server(env).get(`/users/${user.id}/sessions?limit=2`)).json();
      const second = (await t.server(env).get(`/users/${user.id}/sessions?limit=2&cursor=${first.nextCursor}`)).json();
      const third = (await t.server(env).get(`/users/${user.id}/sessions?limit=2&cursor=${second.nextCursor}`)).json();

      expect([first, second, third].map((p) => p.items.map((s: { id: string }) => s.id))).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)]);
      expect([first.hasMore, second.hasMore, third.hasMore]).toEqual([true, true, false]);
      expect(third.nextCursor).toBeNull();
      expectProblem(await t.server(env).get(`/users/${user.id}/sessions?limit=0`), 400, 'invalid_request');
      expectProblem(await t.server(env).get(`/users/${user.id}/sessions?cursor=x`), 400, 'invalid_request');
    });

    it('filters by status: active, revoked and expired', async () => {
      const env = await t.given.environment({ session: { idleTimeoutSeconds: 3600, maxLifetimeSeconds: 7200 } });
      const user = await t.given.user(env);
      const expired = await t.given.session(env, user);
      t.clock.advance(3601 * 1000); // past the idle timeout of the first session
      const active = await t.given.session(env, user);
      const revoked = await t.given.session(env, user);
      expect((await t.server(env).delete(`/users/${user.id}/sessions/${revoked.id}`)).statusCode).toBe(204);

      const list = async (query: string) =>
        (await t.server(env).get(`/users/${user.id}/sessions${query}`)).json().items.map((s: { id: string; status: string }) => [s.id, s.status]);

      expect(await list('')).toEqual([[expired.id, 'expired'], [active.id, 'active'], [revoked.id, 'revoked']]);
      expect(await list('?status=active')).toEqual([[active.id, 'active']]);
      expect(await list('?status=revoked')).toEqual([[revoked.id, 'revoked']]);
      expect(await list('?status=expired')).toEqual([[expired.id, 'expired']]);
      expectProblem(await t.server(env).get(`/users/${user.id}/sessions?status=live`), 400, 'invalid_request');
    });

    it('reports a session past its absolute lifetime as expired even while it was kept active', async () => {
      const env = await t.given.environment({ session: { idleTimeoutSeconds: 3600, maxLifetimeSeconds: 7200 } });
      const user = await t.given.user(env);
      const session = await t.given.session(env, user);
      const activeAfter: boolean[] = [];
      for (let i = 0; i < 3; i++) {
        t.clock.advance(2400 * 1000); // each step is within the idle timeout, and the third reaches the 2 h lifetime
        activeAfter.push(await sessionIsActive(t, env, session));
      }
      expect(activeAfter).toEqual([true, true, false]);
      const items = (await t.server(env).get(`/users/${user.id}/sessions`)).json().items;
      expect(items.map((s: { status: string }) => s.status)).toEqual(['expired']);
    });

    it("answers 404 user_not_found for another environment's user", async () => {
      const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
      const foreign = await t.given.user(theirs);
      await t.given.session(theirs, foreign);
      expectProblem(await t.server(mine).get(`/users/${foreign.id}/sessions`), 404, 'user_not_found');
      expectProblem(await t.server(mine).get(`/users/${MISSING_ID}/sessions`), 404, 'user_not_found');
    });
  });

  describe('DELETE /users/:userId/sessions/:sessionId', () => {
    let env: TestEnv;
    let user: TestUser;
    let kept: TestSession;
    let ended: TestSession;
    beforeAll(async () => {
      env = await t.given.environment();
      user = await t.given.user(env);
      kept = await t.given.session(env, user);
      ended = await t.given.session(env, user);
    });

    it('revokes exactly that session: it is refused on the next request while the others still work', async () => {
      const res = await t.server(env).delete(`/users/${user.id}/sessions/${ended.id}`);

      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect(await sessionIsActive(t, env, ended)).toBe(false);
      expect(await sessionIsActive(t, env, kept)).toBe(true);
      const items = (await t.server(env).get(`/users/${user.id}/sessions`)).json().items;
      expect(items.map((s: { id: string; status: string; revokedAt: string | null }) => [s.id, s.status, s.revokedAt !== null]))
        .toEqual([[kept.id, 'active', false], [ended.id, 'revoked', true]]);
    });

    it('answers 204 again for a session that is already revoked, keeping the first revocation time', async () => {
      const revokedAt = (await t.db.selectFrom('sessions').select('revoked_at').where('id', '=', ended.id).executeTakeFirstOrThrow()).revoked_at;
      t.clock.advance(1000);
      expect((await t.server(env).delete(`/users/${user.id}/sessions/${ended.id}`)).statusCode).toBe(204);
      expect((await t.db.selectFrom('sessions').select('revoked_at').where('id', '=', ended.id).executeTakeFirstOrThrow()).revoked_at).toEqual(revokedAt);
    });

    it('answers 404 resource_not_found for an unknown session id', async () => {
      expectProblem(await t.server(env).delete(`/users/${user.id}/sessions/${MISSING_ID}`), 404, 'resource_not_found');
    });

    it("answers 404 for another user's session and leaves it working", async () => {
      const other = await t.given.user(env);
      const theirs = await t.given.session(env, other);
      expectProblem(await t.server(env).delete(`/users/${user.id}/sessions/${theirs.id}`), 404, 'resource_not_found');
      expect(await sessionIsActive(t, env, theirs)).toBe(true);
    });

    it("answers 404 user_not_found for another environment's user and leaves the session working", async () => {
      const mine = await t.given.environment();
      expectProblem(await t.server(mine).delete(`/users/${user.id}/sessions/${kept.id}`), 404, 'user_not_found');
      expect(await sessionIsActive(t, env, kept)).toBe(true);
    });

    it('answers 400 invalid_request for a session id that is not a uuid', async () => {
      expectProblem(await t.server(env).delete(`/users/${user.id}/sessions/abc`), 400, 'invalid_request');
    });
  });

  describe('DELETE /users/:userId/sessions', () => {
    it('revokes every session of the user at once and answers 204 again when repeated', async () => {
      const env = await t.given.environment();
      const [user, bystander] = [await t.given.user(env), await t.given.user(env)];
      const sessions = [await t.given.session(env, user), await t.given.session(env, user), await t.given.session(env, user)];
      const bystanderSession = await t.given.session(env, bystander);

      const first = await t.server(env).delete(`/users/${user.id}/sessions`);
      expect(first.statusCode).toBe(204);
      expect(first.body).toBe('');
      for (const session of sessions) expect(await sessionIsActive(t, env, session)).toBe(false);
      expect(await sessionIsActive(t, env, bystanderSession)).toBe(true);

      const again = await t.server(env).delete(`/users/${user.id}/sessions`);
      expect(again.statusCode).toBe(204);
      expect((await t.server(env).get(`/users/${user.id}/sessions?status=active`)).json().items).toEqual([]);
      expect((await t.server(env).get(`/users/${user.id}/sessions?status=revoked`)).json().items).toHaveLength(3);
    });

    it('leaves the user active, able to sign in again with a fresh session', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const old = await t.given.session(env, user);
      await t.server(env).delete(`/users/${user.id}/sessions`);
      expect((await t.server(env).get(`/users/${user.id}`)).json().status).toBe('active');
      const fresh = await t.given.session(env, user);
      expect(await sessionIsActive(t, env, fresh)).toBe(true);
      expect(await sessionIsActive(t, env, old)).toBe(false);
    });

    it('answers 204 for a user who has no sessions', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      expect((await t.server(env).delete(`/users/${user.id}/sessions`)).statusCode).toBe(204);
    });

    it("answers 404 user_not_found for another environment's user and leaves their sessions working", async () => {
      const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
      const foreign = await t.given.user(theirs);
      const session = await t.given.session(theirs, foreign);
      expectProblem(await t.server(mine).delete(`/users/${foreign.id}/sessions`), 404, 'user_not_found');
      expect(await sessionIsActive(t, theirs, session)).toBe(true);
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/platform/crypto/tokens.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { sessionIsActive, type TestUser } from '../helpers/given.js';
import { signIn } from '../helpers/flows.js';

const WRONG = 'definitely not the password';

describe('POST /_svc/auth/sign-in', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());


  async function failTimes(env: TestEnv, user: TestUser, n: number) {
    for (let i = 0; i < n; i++) {
      const res = await signIn(t, env, user.email, WRONG);
      if (res.statusCode !== 401) throw new Error(`expected 401, got ${res.statusCode} ${res.body}`);
    }
  }

  /** Everything a client can see of an error answer except the per-request instance id. */
  const answer = (res: Awaited<ReturnType<typeof signIn>>) => {
    const { instance, ...body } = res.json();
    return {
      status: res.statusCode, contentType: res.headers['content-type'], wwwAuthenticate: res.headers['www-authenticate'],
      setCookie: res.headers['set-cookie'], body, raw: res.body.replace(instance, ''),
    };
  };

  describe('success', () => {
    it('sets an HttpOnly, Secure, SameSite=Lax __session cookie on path / and answers the user and session without a token', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env, { email: 'ada@example.com', privateMetadata: { secret: 1 } });

      const res = await signIn(t, env, 'ada@example.com', user.password);

      expect(res.statusCode).toBe(200);
      const cookies = res.cookies.filter((c) => c.name === '__session');
      expect(cookies).toHaveLength(1);
      const [cookie] = cookies;
      expect(cookie.value).toMatch(/^sess_[A-Za-z0-9_-]{43,}$/);
      expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
      const raw = String(res.headers['set-cookie']);
      expect(raw).toMatch(/; HttpOnly/);
      expect(raw).toMatch(/; Secure/);
      expect(raw).toMatch(/; SameSite=Lax/);
      expect(raw).toMatch(/; Path=\//);

      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['session', 'user']);
      expect(body.user).toMatchObject({ id: user.id, email: 'ada@example.com', status: 'active', registrationState: 'complete' });
      expect(body.user).not.toHaveProperty('privateMetadata');
      expect(Object.keys(body.session).sort()).toEqual(['actor', 'amr', 'createdAt', 'enrolmentOnly', 'expiresAt', 'id', 'userId']);
      const now = t.clock.now().getTime();
      expect(body.session).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/), userId: user.id, actor: null,
        createdAt: new Date(now).toISOString(), expiresAt: new Date(now + 2_592_000_000).toISOString(), amr: ['pwd'], enrolmentOnly: false,
      });
      expect(cookie.expires?.getTime()).toBe(Math.floor((now + 2_592_000_000) / 1000) * 1000);
      expect(res.body).not.toContain(cookie.value);

      const me = await t.client(env, { cookie: cookie.value }).get('/me');
      expect(me.statusCode).toBe(200);
      expect(me.json().id).toBe(user.id);
    });

    it('returns sessionToken in the body and sets no cookie with _is_native=true', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);

      const res = await signIn(t, env, user.email, user.password, { native: true });

      expect(res.statusCode).toBe(200);
      expect(res.headers['set-cookie']).toBeUndefined();
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['session', 'sessionToken', 'user']);
      expect(body.sessionToken).toMatch(/^sess_[A-Za-z0-9_-]{43,}$/);
      const me = await t.client(env, { token: body.sessionToken }).get('/me');
      expect(me.statusCode).toBe(200);
      expect(me.json().id).toBe(user.id);
    });

    it('issues a fresh token and a new session at every sign-in, leaving the earlier ones working', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);

      const first = (await signIn(t, env, user.email, user.password, { native: true })).json();
      const second = (await signIn(t, env, user.email, user.password, { native: true })).json();
      const third = (await signIn(t, env, user.email, user.password)).cookies.find((c) => c.name === '__session')!.value;

      expect(new Set([first.sessionToken, second.sessionToken, third]).size).toBe(3);
      expect(first.session.id).not.toBe(second.session.id);
      expect((await t.client(env, { token: first.sessionToken }).get('/me')).statusCode).toBe(200);
      expect((await t.client(env, { token: second.sessionToken }).get('/me')).statusCode).toBe(200);
    });

    it('does not reuse a session cookie the client already sends (no fixation)', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const planted = 'sess_attackerChosenValue0000000000000000000000';

      const res = await t.client(env, { cookie: planted }).post('/auth/sign-in', { email: user.email, password: user.password });

      expect(res.statusCode).toBe(200);
      const issued = res.cookies.find((c) => c.name === '__session')!.value;
      expect(issued).not.toBe(planted);
      expect((await t.client(env, { cookie: planted }).get('/me')).statusCode).toBe(401);
    });

    it('accepts the email in any letter case', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env, { email: 'ada@example.com' });
      expect((await signIn(t, env, 'ADA@Example.com', user.password)).statusCode).toBe(200);
    });

    it('stores only a SHA-256 hash of the session token', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const { sessionToken, session } = (await signIn(t, env, user.email, user.password, { native: true })).json();

      const rows = await t.db.selectFrom('sessions').selectAll().where('environment_id', '=', env.id).execute();

      expect(rows).toHaveLength(1);
      const row = rows[0];
      expect(row.id).toBe(session.id);
      const stored = Buffer.from(row.token_hash);
      expect(stored).toHaveLength(32);
      expect(stored.equals(sha256(sessionToken))).toBe(true);
      expect(stored.toString('utf8')).not.toContain(sessionToken);
      expect(JSON.stringify(row)).not.toContain(sessionToken);
      expect(JSON.stringify(row)).not.toContain(sessionToken.slice(5));
    });
  });

  describe('failures and enumeration', () => {
    it('answers an unknown email exactly like a wrong password, apart from the instance id', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env, { email: 'ada@example.com' });

      const wrong = answer(await signIn(t, env, user.email, WRONG));
      const unknown = answer(await signIn(t, env, 'nobody@example.com', WRONG));

      expect(wrong.status).toBe(401);
      expect(wrong.body).toEqual({
        type: 'urn:gatehouse:problem:invalid_credentials', title: 'Unauthorized', status: 401,
        detail: 'The email or password is incorrect.', properties: { code: 'invalid_credentials' },
      });
      expect(wrong.contentType).toContain('application/problem+json');
      expect(wrong.setCookie).toBeUndefined();
      expect(unknown).toEqual(wrong);
    });

    it('answers 401 invalid_credentials for a deleted user, even with the right password', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const wrong = answer(await signIn(t, env, user.email, WRONG));
      expect((await t.server(env).delete(`/users/${user.id}`)).statusCode).toBe(204);

      const res = await signIn(t, env, user.email, user.password);

      expect(answer(res)).toEqual(wrong);
    });

    it('answers 401 invalid_credentials for a user without a password', async () => {
      const env = await t.given.environment();
      const res = await t.server(env).post('/users', { email: 'nopass@example.com' });
      expect(res.statusCode).toBe(201);
      const signInRes = await signIn(t, env, 'nopass@example.com', WRONG);
      expect(signInRes.statusCode).toBe(401);
      expect(signInRes.json().properties.code).toBe('invalid_credentials');
    });

    it("does not let one environment's user sign in on another environment's host", async () => {
      const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
      const user = await t.given.user(theirs);
      const res = await signIn(t, mine, user.email, user.password);
      expect(res.statusCode).toBe(401);
      expect(res.json().properties.code).toBe('invalid_credentials');
    });

    it('refuses an unknown body field with 400 invalid_request', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const res = await t.client(env).post('/auth/sign-in', { email: user.email, password: user.password, remember: true });
      expect(res.statusCode).toBe(400);
      expect(res.json().properties.code).toBe('invalid_request');
      expect(res.headers['set-cookie']).toBeUndefined();
    });
  });

  describe('per-account lockout', () => {
    it('refuses even the right password after 10 consecutive failures, with the wrong-password answer', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const wrong = answer(await signIn(t, env, user.email, WRONG));
      await failTimes(env, user, 9);

      const locked = await signIn(t, env, user.email, user.password);

      expect(answer(locked)).toEqual(wrong);
    });

    it('still accepts the right password after 9 consecutive failures', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      await failTimes(env, user, 9);
      expect((await signIn(t, env, user.email, user.password)).statusCode).toBe(200);
    });

    it('lets the user in again once the cool-down has passed, and not before', async () => {
      const env = await t.given.environment({ lockout: { coolDownSeconds: 300 } });
      const user = await t.given.user(env);
      await failTimes(env, user, 10);

      t.clock.advance(299_000);
      expect((await signIn(t, env, user.email, user.password)).statusCode).toBe(401);

      t.clock.advance(1_000);
      const res = await signIn(t, env, user.email, user.password);
      expect(res.statusCode).toBe(200);
      expect(res.json().user.id).toBe(user.id);
    });

    it('resets the count on success: 9 failures, a success, 9 failures, and the right password still works', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      await failTimes(env, user, 9);
      expect((await signIn(t, env, user.email, user.password)).statusCode).toBe(200);
      await failTimes(env, user, 9);
      expect((await signIn(t, env, user.email, user.password)).statusCode).toBe(200);
    });

    it('follows the environment setting lockout.maxFailedAttempts', async () => {
      const env = await t.given.environment({ lockout: { maxFailedAttempts: 3 } });
      const [a, b] = [await t.given.user(env), await t.given.user(env)];
      await failTimes(env, a, 2);
      expect((await signIn(t, env, a.email, a.password)).statusCode).toBe(200);
      await failTimes(env, b, 3);
      expect((await signIn(t, env, b.email, b.password)).statusCode).toBe(401);
    });

    it('lets a right password in after the limit is lowered below an account\'s failure count, once no attempt is in flight', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      for (let i = 0; i < 7; i++) expect((await signIn(t, env, user.email, WRONG)).statusCode).toBe(401);
      await t.admin.patch(`/environments/${env.id}`, { settings: { lockout: { maxFailedAttempts: 5 } } });

      expect((await signIn(t, env, user.email, user.password)).statusCode).toBe(401); // seven failures, limit five
      t.clock.advance(60_001);
      expect((await signIn(t, env, user.email, user.password)).statusCode).toBe(200);
    });

    it('locks only the attacked account', async () => {
      const env = await t.given.environment();
      const [victim, bystander] = [await t.given.user(env), await t.given.user(env)];
      await failTimes(env, victim, 10);
      expect((await signIn(t, env, bystander.email, bystander.password)).statusCode).toBe(200);
      expect((await signIn(t, env, victim.email, victim.password)).statusCode).toBe(401);
    });

    it('gives a concurrent burst of guesses no more tries than one-by-one guessing: a right guess after the 10th failure is refused', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);

      const burst = await Promise.all([
        ...Array.from({ length: 30 }, (_, i) => signIn(t, env, user.email, `${WRONG} ${i}`, { native: true })),
        signIn(t, env, user.email, user.password, { native: true }),
      ]);

      expect(burst.map((r) => r.statusCode)).toEqual(Array(31).fill(401));
      expect(burst.every((r) => r.json().properties.code === 'invalid_credentials')).toBe(true);
      expect((await signIn(t, env, user.email, user.password)).statusCode).toBe(401);
    });

    it('keeps existing sessions working while the account is locked', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const session = await t.given.session(env, user);
      await failTimes(env, user, 10);
      expect(await sessionIsActive(t, env, session)).toBe(true);
    });
  });

  describe('per-IP throttle', () => {
    const ipSettings = { lockout: { ipMaxFailures: 3, ipWindowSeconds: 600 } };

    it('answers 429 rate_limited with a numeric Retry-After after too many failures across accounts from one IP', async () => {
      const env = await t.given.environment(ipSettings);
      const [a, b, c] = [await t.given.user(env), await t.given.user(env), await t.given.user(env)];
      expect((await signIn(t, env, a.email, WRONG, { ip: '203.0.113.7' })).statusCode).toBe(401);
      expect((await signIn(t, env, b.email, WRONG, { ip: '203.0.113.7' })).statusCode).toBe(401);
      expect((await signIn(t, env, 'nobody@example.com', WRONG, { ip: '203.0.113.7' })).statusCode).toBe(401);

      const res = await signIn(t, env, c.email, c.password, { ip: '203.0.113.7' });

      expect(res.statusCode).toBe(429);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().properties.code).toBe('rate_limited');
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(600);
      expect(res.headers['set-cookie']).toBeUndefined();
    });

    it('evaluates only as many guesses of a concurrent burst as the IP budget allows, and refuses the rest with 429 before hashing', async () => {
      const env = await t.given.environment(ipSettings);
      const user = await t.given.user(env);

      const burst = await Promise.all(
        Array.from({ length: 10 }, (_, i) => signIn(t, env, `nobody-${i}@example.com`, WRONG, { ip: '203.0.113.7' })),
      );

      const statuses = burst.map((r) => r.statusCode);
      expect(statuses.filter((s) => s === 401)).toHaveLength(ipSettings.lockout.ipMaxFailures);
      expect(statuses.filter((s) => s === 429)).toHaveLength(10 - ipSettings.lockout.ipMaxFailures);
      const rightGuess = await signIn(t, env, user.email, user.password, { ip: '203.0.113.7' });
      expect(rightGuess.statusCode).toBe(429);
      expect(rightGuess.headers['set-cookie']).toBeUndefined();
    });

    it('does not throttle other IPs, and lifts the throttle once Retry-After has passed', async () => {
      const env = await t.given.environment(ipSettings);
      const user = await t.given.user(env);
      for (let i = 0; i < 3; i++) await signIn(t, env, `nobody-${i}@example.com`, WRONG, { ip: '203.0.113.7' });
      const throttled = await signIn(t, env, user.email, user.password, { ip: '203.0.113.7' });
      expect(throttled.statusCode).toBe(429);

      expect((await signIn(t, env, user.email, user.password, { ip: '198.51.100.9' })).statusCode).toBe(200);

      t.clock.advance(Number(throttled.headers['retry-after']) * 1000);
      expect((await signIn(t, env, user.email, user.password, { ip: '203.0.113.7' })).statusCode).toBe(200);
    });

    it('does not count successful sign-ins', async () => {
      const env = await t.given.environment(ipSettings);
      const user = await t.given.user(env);
      for (let i = 0; i < 5; i++) expect((await signIn(t, env, user.email, user.password, { ip: '203.0.113.7' })).statusCode).toBe(200);
      await signIn(t, env, 'nobody@example.com', WRONG, { ip: '203.0.113.7' });
      await signIn(t, env, 'nobody@example.com', WRONG, { ip: '203.0.113.7' });
      expect((await signIn(t, env, user.email, user.password, { ip: '203.0.113.7' })).statusCode).toBe(200);
    });
  });
});

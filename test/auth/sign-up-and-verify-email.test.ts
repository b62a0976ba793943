import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';

const CODE_LIFETIME_MS = 10 * 60_000;

/** The 6-digit code of the newest mail to this address. */
async function latestCode(t: TestApp, env: TestEnv, email: string): Promise<string> {
  const [mail] = await t.outbox(env, email);
  const code = /\b(\d{6})\b/.exec(mail.subject)?.[1];
  if (!code) throw new Error(`no code in "${mail.subject}"`);
  return code;
}

/** A 6-digit code that is certainly not the given one. */
const otherCode = (code: string, step = 1) => String((Number(code) + step) % 1_000_000).padStart(6, '0');

const CLIENT_USER_KEYS = [
  'createdAt', 'deletedAt', 'email', 'emailVerifiedAt', 'environmentId', 'firstName', 'id', 'lastName', 'locale', 'name',
  'publicMetadata', 'registrationState', 'status', 'unsafeMetadata', 'updatedAt',
].sort();

describe('client sign-up and email verification', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  async function signUpPending(env: TestEnv, email = 'ada@example.com') {
    const res = await t.client(env).post('/auth/sign-up', { email, password: PASSWORD });
    if (res.statusCode !== 201) throw new Error(`sign-up: ${res.statusCode} ${res.body}`);
    return { user: res.json().user as { id: string }, code: await latestCode(t, env, email) };
  }

  describe('POST /_svc/auth/sign-up', () => {
    it('limits sign-ups to 100 per client IP per hour in an environment, answering 429 with Retry-After', async () => {
      const env = await t.given.environment({ emailVerificationRequired: false });
      const signUp = (i: number, remoteAddress: string) =>
        t.client(env).post('/auth/sign-up?_is_native=true', { email: `burst-${i}@example.com`, password: PASSWORD }, { remoteAddress });
      for (let i = 0; i < 100; i++) expect((await signUp(i, '203.0.113.5')).statusCode).toBe(201);

      const refused = await signUp(100, '203.0.113.5');
      expect(refused.statusCode).toBe(429);
      expect(refused.json().properties.code).toBe('rate_limited');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      const stored = await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).execute();
      expect(stored).toHaveLength(100);
      expect((await signUp(101, '198.51.100.5')).statusCode).toBe(201);
    });

    it('creates a pending user in client form, mails a 6-digit code and starts no session', async () => {
      const env = await t.given.environment();

      const res = await t.client(env).post('/auth/sign-up', { email: 'Ada@Example.com', password: PASSWORD, firstName: 'Ada', lastName: 'Lovelace' });

      expect(res.statusCode).toBe(201);
      expect(res.headers['set-cookie']).toBeUndefined();
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['user', 'verification']);
      expect(body.verification).toEqual({ status: 'pending' });
      expect(Object.keys(body.user).sort()).toEqual(CLIENT_USER_KEYS);
      expect(body.user).not.toHaveProperty('privateMetadata');
      expect(body.user).toMatchObject({
        environmentId: env.id, email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', name: 'Ada Lovelace',
        status: 'active', registrationState: 'pending_email_verification', emailVerifiedAt: null, deletedAt: null,
        publicMetadata: {}, unsafeMetadata: {},
      });

      const stored = (await t.server(env).get(`/users/${body.user.id}`)).json();
      expect(stored).toMatchObject({ registrationState: 'pending_email_verification', emailVerifiedAt: null, privateMetadata: {} });

      const mails = await t.outbox(env, 'ada@example.com');
      expect(mails).toHaveLength(1);
      const code = /\b(\d{6})\b/.exec(mails[0].subject)?.[1];
      expect(code).toMatch(/^\d{6}$/);
      expect(mails[0].text).toContain(code);
    });

    it('accepts legalConsentAccepted', async () => {
      const env = await t.given.environment();
      const res = await t.client(env).post('/auth/sign-up', { email: 'ada@example.com', password: PASSWORD, legalConsentAccepted: true });
      expect(res.statusCode).toBe(201);
      expect(res.json().verification).toEqual({ status: 'pending' });
    });

    it('starts a session at once when the environment does not require email verification', async () => {
      const env = await t.given.environment({ emailVerificationRequired: false });

      const res = await t.client(env).post('/auth/sign-up', { email: 'ada@example.com', password: PASSWORD });

      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['session', 'user']);
      expect(body.user).toMatchObject({ email: 'ada@example.com', registrationState: 'complete' });
      expect(body.user).not.toHaveProperty('privateMetadata');
      expect(body.session).toMatchObject({ userId: body.user.id, actor: null });
      const cookie = res.cookies.find((c) => c.name === '__session');
      expect(cookie?.value).toMatch(/^sess_/);
      const me = await t.client(env, { cookie: cookie!.value }).get('/me');
      expect(me.statusCode).toBe(200);
      expect(me.json().id).toBe(body.user.id);
      expect(await t.outbox(env, 'ada@example.com')).toHaveLength(0);
    });

    it('returns the session token in the body with _is_native=true when no verification is required', async () => {
      const env = await t.given.environment({ emailVerificationRequired: false });
      const res = await t.client(env).post('/auth/sign-up?_is_native=true', { email: 'ada@example.com', password: PASSWORD });
      expect(res.statusCode).toBe(201);
      expect(res.headers['set-cookie']).toBeUndefined();
      const token = res.json().sessionToken;
      expect((await t.client(env, { token }).get('/me')).json().email).toBe('ada@example.com');
    });

    it('refuses a weak password with 400 weak_password and creates no user', async () => {
      const env = await t.given.environment();
      for (const password of ['short', 'password123', 'ada@example.com']) {
        const res = await t.client(env).post('/auth/sign-up', { email: 'ada@example.com', password });
        expect(res.statusCode).toBe(400);
        expect(res.headers['content-type']).toContain('application/problem+json');
        expect(res.json().properties.code).toBe('weak_password');
      }
      expect((await t.server(env).get('/users')).json().items).toEqual([]);
      expect(await t.outbox(env, 'ada@example.com')).toHaveLength(0);
    });

    it('refuses an email that already has an account with 409 email_taken, whatever its letter case', async () => {
      const env = await t.given.environment();
      await t.given.user(env, { email: 'ada@example.com' });
      const res = await t.client(env).post('/auth/sign-up', { email: 'ADA@example.com', password: PASSWORD });
      expect(res.statusCode).toBe(409);
      expect(res.json().properties.code).toBe('email_taken');
      expect(await t.outbox(env, 'ada@example.com')).toHaveLength(0);
    });

    it('lets a new account take the email of a deleted user', async () => {
      const env = await t.given.environment();
      const old = await t.given.user(env, { email: 'ada@example.com' });
      expect((await t.server(env).delete(`/users/${old.id}`)).statusCode).toBe(204);

      const res = await t.client(env).post('/auth/sign-up', { email: 'ada@example.com', password: PASSWORD });

      expect(res.statusCode).toBe(201);
      expect(res.json().user.id).not.toBe(old.id);
      const code = await latestCode(t, env, 'ada@example.com');
      const verified = await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code });
      expect(verified.statusCode).toBe(200);
      expect(verified.json().user.id).toBe(res.json().user.id);
    });

    it('refuses an unknown body field with 400 invalid_request naming it', async () => {
      const env = await t.given.environment();
      const res = await t.client(env).post('/auth/sign-up', { email: 'ada@example.com', password: PASSWORD, publicMetadata: { role: 'admin' } });
      expect(res.statusCode).toBe(400);
      expect(res.json().properties.code).toBe('invalid_request');
      expect(res.json().properties.errors).toContainEqual(expect.objectContaining({ path: '/body/publicMetadata' }));
      expect((await t.server(env).get('/users')).json().items).toEqual([]);
    });

    it('refuses a malformed email with 400 invalid_request', async () => {
      const env = await t.given.environment();
      const res = await t.client(env).post('/auth/sign-up', { email: 'not-an-email', password: PASSWORD });
      expect(res.statusCode).toBe(400);
      expect(res.json().properties.code).toBe('invalid_request');
    });
  });

  describe('POST /_svc/auth/verify-email', () => {
    it('completes registration with the mailed code and starts a cookie session', async () => {
      const env = await t.given.environment();
      const { user, code } = await signUpPending(env);

      const res = await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code });

      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['session', 'user']);
      expect(body.user).toMatchObject({ id: user.id, registrationState: 'complete' });
      expect(body.user.emailVerifiedAt).toBe(t.clock.now().toISOString());
      expect(body.user).not.toHaveProperty('privateMetadata');
      expect(body.session).toMatchObject({ userId: user.id, actor: null });
      const cookie = res.cookies.find((c) => c.name === '__session');
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });

      const stored = (await t.server(env).get(`/users/${user.id}`)).json();
      expect(stored.registrationState).toBe('complete');
      expect(stored.emailVerifiedAt).toBe(t.clock.now().toISOString());
      const me = await t.client(env, { cookie: cookie!.value }).get('/me');
      expect(me.statusCode).toBe(200);
      expect(me.json().id).toBe(user.id);
    });

    it('stores the code only as a hash bound to the user', async () => {
      const env = await t.given.environment();
      const { user, code } = await signUpPending(env);

      const rows = await t.db.selectFrom('verification_codes').selectAll().where('environment_id', '=', env.id).execute();

      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ user_id: user.id, purpose: 'verify_email', attempts: 0, used_at: null });
      expect(Buffer.from(rows[0].code_hash)).toHaveLength(32);
      expect(JSON.stringify(rows[0])).not.toContain(code);
      expect(rows[0].expires_at.getTime()).toBe(t.clock.now().getTime() + CODE_LIFETIME_MS);
    });

    it('returns the session token in the body and sets no cookie with _is_native=true', async () => {
      const env = await t.given.environment();
      const { user, code } = await signUpPending(env);

      const res = await t.client(env).post('/auth/verify-email?_is_native=true', { email: 'ada@example.com', code });

      expect(res.statusCode).toBe(200);
      expect(res.headers['set-cookie']).toBeUndefined();
      const body = res.json();
      expect(body.sessionToken).toMatch(/^sess_/);
      const me = await t.client(env, { token: body.sessionToken }).get('/me');
      expect(me.statusCode).toBe(200);
      expect(me.json().id).toBe(user.id);
    });

    it('accepts the email in any letter case', async () => {
      const env = await t.given.environment();
      const { code } = await signUpPending(env);
      const res = await t.client(env).post('/auth/verify-email', { email: 'ADA@Example.COM', code });
      expect(res.statusCode).toBe(200);
    });

    it('accepts a code only once', async () => {
      const env = await t.given.environment();
      const { code } = await signUpPending(env);
      expect((await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code })).statusCode).toBe(200);

      const again = await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code });

      expect(again.statusCode).toBe(400);
      expect(again.json().properties.code).toBe('invalid_code');
      expect(again.headers['set-cookie']).toBeUndefined();
    });

    it('refuses a wrong code with 400 invalid_code and leaves the user pending', async () => {
      const env = await t.given.environment();
      const { user, code } = await signUpPending(env);

      const res = await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code: otherCode(code) });

      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().properties.code).toBe('invalid_code');
      expect(res.headers['set-cookie']).toBeUndefined();
      expect((await t.server(env).get(`/users/${user.id}`)).json()).toMatchObject({ registrationState: 'pending_email_verification', emailVerifiedAt: null });
    });

    it('still accepts the right code after four wrong ones', async () => {
      const env = await t.given.environment();
      const { code } = await signUpPending(env);
      for (let i = 1; i <= 4; i++) {
        expect((await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code: otherCode(code, i) })).statusCode).toBe(400);
      }
      expect((await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code })).statusCode).toBe(200);
    });

    it('burns the code after five wrong ones, so the right code no longer works', async () => {
      const env = await t.given.environment();
      const { user, code } = await signUpPending(env);
      for (let i = 1; i <= 5; i++) {
        const wrong = await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code: otherCode(code, i) });
        expect(wrong.statusCode).toBe(400);
        expect(wrong.json().properties.code).toBe('invalid_code');
      }

      const res = await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code });

      expect(res.statusCode).toBe(400);
      expect(res.json().properties.code).toBe('invalid_code');
      expect((await t.server(env).get(`/users/${user.id}`)).json().registrationState).toBe('pending_email_verification');
    });

    it('accepts a code until just before 10 minutes have passed', async () => {
      const env = await t.given.environment();
      const { code } = await signUpPending(env);
      t.clock.advance(CODE_LIFETIME_MS - 1000);
      expect((await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code })).statusCode).toBe(200);
    });

    it('refuses a code once 10 minutes have passed', async () => {
      const env = await t.given.environment();
      const { code } = await signUpPending(env);
      t.clock.advance(CODE_LIFETIME_MS);

      const res = await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code });

      expect(res.statusCode).toBe(400);
      expect(res.json().properties.code).toBe('invalid_code');
    });

    it("refuses one account's code for another account", async () => {
      const env = await t.given.environment();
      const { code } = await signUpPending(env, 'ada@example.com');
      await signUpPending(env, 'bob@example.com');
      const res = await t.client(env).post('/auth/verify-email', { email: 'bob@example.com', code });
      // The two codes may coincide one time in a million; the point is that Ada's code is bound to Ada.
      if (code !== (await latestCode(t, env, 'bob@example.com'))) {
        expect(res.statusCode).toBe(400);
        expect(res.json().properties.code).toBe('invalid_code');
      }
      expect((await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code })).statusCode).toBe(200);
    });

    it('answers 400 invalid_code for an unknown email and for an already verified account', async () => {
      const env = await t.given.environment();
      const verified = await t.given.user(env, { email: 'ver@example.com' });
      for (const email of ['nobody@example.com', verified.email!]) {
        const res = await t.client(env).post('/auth/verify-email', { email, code: '123456' });
        expect(res.statusCode).toBe(400);
        expect(res.json().properties.code).toBe('invalid_code');
      }
    });

    it('refuses a code that is not 6 digits with 400 invalid_request', async () => {
      const env = await t.given.environment();
      await signUpPending(env);
      const res = await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code: '12345' });
      expect(res.statusCode).toBe(400);
      expect(res.json().properties.code).toBe('invalid_request');
    });
  });

  describe('POST /_svc/auth/verify-email/send', () => {
    const ACCEPTED = { status: 'accepted', message: 'If a pending account has this email, a new code is on its way.' };

    it('mails a new code with 202, after which only the latest code works', async () => {
      const env = await t.given.environment();
      const { code: first } = await signUpPending(env);

      const res = await t.client(env).post('/auth/verify-email/send', { email: 'ada@example.com' });

      expect(res.statusCode).toBe(202);
      expect(res.json()).toEqual(ACCEPTED);
      const mails = await t.outbox(env, 'ada@example.com');
      expect(mails).toHaveLength(2);
      const latest = await latestCode(t, env, 'ada@example.com');
      if (latest !== first) {
        const old = await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code: first });
        expect(old.statusCode).toBe(400);
        expect(old.json().properties.code).toBe('invalid_code');
      }
      expect((await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code: latest })).statusCode).toBe(200);
    });

    it('gives a fresh code a fresh 10 minutes and a fresh count of wrong tries', async () => {
      const env = await t.given.environment();
      const { code } = await signUpPending(env);
      for (let i = 1; i <= 5; i++) await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code: otherCode(code, i) });
      t.clock.advance(9 * 60_000);
      await t.client(env).post('/auth/verify-email/send', { email: 'ada@example.com' });
      t.clock.advance(9 * 60_000);

      const res = await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code: await latestCode(t, env, 'ada@example.com') });

      expect(res.statusCode).toBe(200);
    });

    it('answers an unknown email and a verified account exactly like a pending one, and mails nothing', async () => {
      const env = await t.given.environment();
      await signUpPending(env, 'pending@example.com');
      const verified = await t.given.user(env, { email: 'verified@example.com' });
      const answers = [];
      for (const email of ['pending@example.com', 'nobody@example.com', verified.email!]) {
        const res = await t.client(env).post('/auth/verify-email/send', { email });
        answers.push({ status: res.statusCode, body: res.body });
      }
      expect(answers[1]).toEqual(answers[0]);
      expect(answers[2]).toEqual(answers[0]);
      expect(answers[0].status).toBe(202);
      expect(await t.outbox(env, 'nobody@example.com')).toHaveLength(0);
      expect(await t.outbox(env, 'verified@example.com')).toHaveLength(0);
      expect(await t.outbox(env, 'pending@example.com')).toHaveLength(2);
    });

    it('limits resends to 5 per email per hour, then answers 429 rate_limited with Retry-After', async () => {
      const env = await t.given.environment();
      await signUpPending(env);
      for (let i = 0; i < 5; i++) {
        expect((await t.client(env).post('/auth/verify-email/send', { email: 'ada@example.com' })).statusCode).toBe(202);
      }

      const res = await t.client(env).post('/auth/verify-email/send', { email: 'ADA@example.com' });

      expect(res.statusCode).toBe(429);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().properties.code).toBe('rate_limited');
      const retryAfter = Number(res.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(await t.outbox(env, 'ada@example.com')).toHaveLength(6);

      const other = await t.client(env).post('/auth/verify-email/send', { email: 'someone-else@example.com' });
      expect(other.statusCode).toBe(202);

      t.clock.advance(retryAfter * 1000);
      expect((await t.client(env).post('/auth/verify-email/send', { email: 'ada@example.com' })).statusCode).toBe(202);
      expect(await t.outbox(env, 'ada@example.com')).toHaveLength(7);
    });
    it('limits resends to 30 per client IP per hour across emails', async () => {
      const env = await t.given.environment();
      const send = (email: string, ip: string) => t.client(env).post('/auth/verify-email/send', { email }, { remoteAddress: ip });
      for (let i = 0; i < 30; i++) expect((await send(`person-${i}@example.com`, '203.0.113.7')).statusCode).toBe(202);

      const res = await send('person-30@example.com', '203.0.113.7');

      expect(res.statusCode).toBe(429);
      expect(res.json().properties.code).toBe('rate_limited');
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect((await send('person-30@example.com', '198.51.100.9')).statusCode).toBe(202);
    });
  });

  describe('POST /_svc/auth/sign-in before the email is verified', () => {
    it('answers 403 email_not_verified to the right password', async () => {
      const env = await t.given.environment();
      await signUpPending(env);
      const res = await t.client(env).post('/auth/sign-in', { email: 'ada@example.com', password: PASSWORD });
      expect(res.statusCode).toBe(403);
      expect(res.json().properties.code).toBe('email_not_verified');
      expect(res.headers['set-cookie']).toBeUndefined();
    });

    it('answers 401 invalid_credentials to a wrong password', async () => {
      const env = await t.given.environment();
      await signUpPending(env);
      const res = await t.client(env).post('/auth/sign-in', { email: 'ada@example.com', password: 'not the right password' });
      expect(res.statusCode).toBe(401);
      expect(res.json().properties.code).toBe('invalid_credentials');
    });

    it('lets the user sign in once the email is verified', async () => {
      const env = await t.given.environment();
      const { code } = await signUpPending(env);
      await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code });
      const res = await t.client(env).post('/auth/sign-in', { email: 'ada@example.com', password: PASSWORD });
      expect(res.statusCode).toBe(200);
    });
  });
});

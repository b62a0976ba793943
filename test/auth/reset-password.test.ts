import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD, sessionIsActive } from '../helpers/given.js';
import { signIn } from '../helpers/flows.js';
import { expectProblem } from '../helpers/problem.js';
import { mailTime } from '../../src/platform/mail/render.js';
import { answer, CODE_LIFETIME_MS, NEW_PASSWORD, otherCode, passwordReset } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());
const { reset, requestCode, codeRow } = passwordReset(() => t);

describe('POST /_svc/auth/reset-password', () => {
  it('sets the new password: the old one no longer signs in, the new one does', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');

    const res = await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD });

    expect(res.statusCode, res.body).toBe(200);
    expectProblem(await signIn(t, env, 'ada@example.com', user.password), 401, 'invalid_credentials');
    const signedIn = await signIn(t, env, 'ada@example.com', NEW_PASSWORD);
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.json().user.id).toBe(user.id);
    expect(await codeRow(env, user.id)).toMatchObject({ used_at: t.clock.now(), attempts: 0 });
  });

  it('starts a session with an HttpOnly cookie and answers {user, session} in client form', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com', privateMetadata: { secret: 1 } });
    const code = await requestCode(env, 'ada@example.com');

    const res = await reset(env, { email: 'Ada@Example.com', code, newPassword: NEW_PASSWORD });

    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['session', 'user']);
    expect(body.user).toMatchObject({ id: user.id, email: 'ada@example.com', status: 'active', registrationState: 'complete' });
    expect(body.user).not.toHaveProperty('privateMetadata');
    const now = t.clock.now().getTime();
    expect(body.session).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7/), userId: user.id, actor: null,
      createdAt: new Date(now).toISOString(), expiresAt: new Date(now + 2_592_000_000).toISOString(), amr: ['email'], enrolmentOnly: false,
    });
    const cookie = res.cookies.find((c) => c.name === '__session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', secure: true });
    expect(cookie!.value).toMatch(/^sess_/);
    expect(res.body).not.toContain(cookie!.value);
    const me = await t.client(env, { cookie: cookie!.value }).get('/me');
    expect(me.statusCode).toBe(200);
    expect(me.json().id).toBe(user.id);
  });

  it('returns sessionToken in the body and sets no cookie with _is_native=true', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');

    const res = await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD }, { native: true });

    expect(res.statusCode).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['session', 'sessionToken', 'user']);
    expect(body.sessionToken).toMatch(/^sess_[A-Za-z0-9_-]{43,}$/);
    const me = await t.client(env, { token: body.sessionToken }).get('/me');
    expect(me.statusCode).toBe(200);
    expect(me.json().id).toBe(user.id);
  });

  it("revokes every earlier session of the user, and no one else's", async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const bystander = await t.given.user(env);
    const [first, second, theirs] = [await t.given.session(env, user), await t.given.session(env, user), await t.given.session(env, bystander)];
    const code = await requestCode(env, 'ada@example.com');

    const res = await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD }, { native: true });

    expect(res.statusCode).toBe(200);
    expect(await sessionIsActive(t, env, first)).toBe(false);
    expect(await sessionIsActive(t, env, second)).toBe(false);
    expect(await sessionIsActive(t, env, theirs)).toBe(true);
    const fresh = { id: res.json().session.id, token: res.json().sessionToken, userId: user.id };
    expect(await sessionIsActive(t, env, fresh)).toBe(true);
    const listed = (await t.server(env).get(`/users/${user.id}/sessions?status=active`)).json().items;
    expect(listed.map((s: { id: string }) => s.id)).toEqual([fresh.id]);
  });

  it('mails a "password changed" notice, and no mail ever carries a password', async () => {
    const env = await t.given.environment();
    await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');

    expect((await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD })).statusCode).toBe(200);

    const mails = await t.outbox(env, 'ada@example.com');
    expect(mails.map((m) => m.subject)).toEqual(['Your password was changed', `Your password reset code is ${code}`]);
    expect(mails[0].text).toBe(`The password of your ${env.name} account ada@example.com was changed at ${mailTime(t.clock.now(), 'en')} `
      + 'with a reset code sent to this address, and every session was signed out.\n\n'
      + `If you did not do this, ask for a new reset code at once and tell your administrator.\n\n-- \nSent by ${env.name}.`);
    expect(mails[0].html).toContain(`The password of your ${env.name} account ada@example.com was changed`);
    for (const mail of mails) {
      for (const secret of [NEW_PASSWORD, PASSWORD]) expect(JSON.stringify(mail)).not.toContain(secret);
    }
    expect(JSON.stringify(mails[0])).not.toContain(code);
  });

  it('accepts a code only once', async () => {
    const env = await t.given.environment();
    await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');
    expect((await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD })).statusCode).toBe(200);

    const again = await reset(env, { email: 'ada@example.com', code, newPassword: 'yet another passphrase' });

    expectProblem(again, 400, 'invalid_code');
    expect(again.headers['set-cookie']).toBeUndefined();
    expect((await signIn(t, env, 'ada@example.com', NEW_PASSWORD)).statusCode).toBe(200);
    expect(await t.outbox(env, 'ada@example.com')).toHaveLength(2);
  });

  it('lets exactly one of two concurrent resets with the same code succeed', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');
    const passwords = ['first racing passphrase', 'second racing passphrase'];

    const results = await Promise.all(passwords.map((newPassword) => reset(env, { email: 'ada@example.com', code, newPassword }, { native: true })));

    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400]);
    const loser = results.find((r) => r.statusCode === 400)!;
    expect(loser.json().properties.code).toBe('invalid_code');
    const winner = passwords[results.findIndex((r) => r.statusCode === 200)];
    expect((await signIn(t, env, 'ada@example.com', winner)).statusCode).toBe(200);
    expect((await signIn(t, env, 'ada@example.com', passwords.find((p) => p !== winner)!)).statusCode).toBe(401);
    const sessions = await t.db.selectFrom('sessions').select('id').where('environment_id', '=', env.id).where('user_id', '=', user.id).execute();
    expect(sessions).toHaveLength(2); // the winner's reset and the sign-in just above
    expect((await t.outbox(env, 'ada@example.com')).filter((m) => m.subject === 'Your password was changed')).toHaveLength(1);
  });

  it('accepts only the code of the latest request', async () => {
    const env = await t.given.environment();
    await t.given.user(env, { email: 'ada@example.com' });
    const first = await requestCode(env, 'ada@example.com');
    const latest = await requestCode(env, 'ada@example.com');

    if (latest !== first) {
      expectProblem(await reset(env, { email: 'ada@example.com', code: first, newPassword: NEW_PASSWORD }), 400, 'invalid_code');
    }
    expect((await reset(env, { email: 'ada@example.com', code: latest, newPassword: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it('accepts a code until just before 10 minutes have passed', async () => {
    const env = await t.given.environment();
    await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');
    t.clock.advance(CODE_LIFETIME_MS - 1000);
    expect((await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it('refuses a code once 10 minutes have passed, and the password stays as it was', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');
    t.clock.advance(CODE_LIFETIME_MS);

    expectProblem(await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD }), 400, 'invalid_code');

    expect((await signIn(t, env, 'ada@example.com', user.password)).statusCode).toBe(200);
  });

  it('still accepts the right code after four wrong ones', async () => {
    const env = await t.given.environment();
    await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');
    for (let i = 1; i <= 4; i++) {
      expectProblem(await reset(env, { email: 'ada@example.com', code: otherCode(code, i), newPassword: NEW_PASSWORD }), 400, 'invalid_code');
    }
    expect((await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it('burns the code after five wrong tries, so the right code then fails', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');
    const wrong = answer(await reset(env, { email: 'ada@example.com', code: otherCode(code), newPassword: NEW_PASSWORD }));
    for (let i = 2; i <= 5; i++) await reset(env, { email: 'ada@example.com', code: otherCode(code, i), newPassword: NEW_PASSWORD });

    const res = await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD });

    expectProblem(res, 400, 'invalid_code');
    expect(answer(res)).toEqual(wrong);
    expect(await codeRow(env, user.id)).toMatchObject({ attempts: 5, used_at: null });
    expect((await signIn(t, env, 'ada@example.com', user.password)).statusCode).toBe(200);
  });

  it('refuses a weak new password with 400 weak_password, without using up the code or counting a try', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');

    for (const newPassword of ['short', 'password123', 'ada@example.com', 'ADA@EXAMPLE.COM', 'my gatehouse password', 'x'.repeat(257)]) {
      const res = await reset(env, { email: 'ada@example.com', code, newPassword });
      expectProblem(res, 400, 'weak_password');
      expect(res.headers['set-cookie']).toBeUndefined();
    }

    expect(await codeRow(env, user.id)).toMatchObject({ attempts: 0, used_at: null });
    expect((await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it('follows the environment password policy', async () => {
    const env = await t.given.environment({ passwordPolicy: { minLength: 30, maxLength: 256 } });
    await t.given.user(env, { email: 'ada@example.com', password: 'a passphrase well over thirty characters' });
    const code = await requestCode(env, 'ada@example.com');
    const res = await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD });
    expect(expectProblem(res, 400, 'weak_password').detail).toBe('The password must be at least 30 characters.');
  });

  it('answers an unknown email like a wrong code, and a weak password with weak_password whether or not the account exists', async () => {
    const env = await t.given.environment();
    await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');

    const wrongCode = answer(await reset(env, { email: 'ada@example.com', code: otherCode(code), newPassword: NEW_PASSWORD }));
    const unknown = answer(await reset(env, { email: 'nobody@example.com', code, newPassword: NEW_PASSWORD }));
    const weakLive = answer(await reset(env, { email: 'ada@example.com', code, newPassword: 'password123' }));
    const weakUnknown = answer(await reset(env, { email: 'nobody@example.com', code, newPassword: 'password123' }));

    expect(wrongCode.status).toBe(400);
    expect(JSON.parse(wrongCode.body)).toMatchObject({ type: 'urn:gatehouse:problem:invalid_code', properties: { code: 'invalid_code' } });
    expect(unknown).toEqual(wrongCode);
    expect(weakLive.status).toBe(400);
    expect(JSON.parse(weakLive.body).properties.code).toBe('weak_password');
    expect(weakUnknown).toEqual(weakLive);
  });

  it('answers invalid_code to a user banned or deleted after the code was mailed, and changes nothing', async () => {
    const env = await t.given.environment();
    const banned = await t.given.user(env, { email: 'banned@example.com' });
    const deleted = await t.given.user(env, { email: 'deleted@example.com' });
    const codes = [await requestCode(env, 'banned@example.com'), await requestCode(env, 'deleted@example.com')];
    expect((await t.server(env).post(`/users/${banned.id}/ban`)).statusCode).toBe(200);
    expect((await t.server(env).delete(`/users/${deleted.id}`)).statusCode).toBe(204);

    expectProblem(await reset(env, { email: 'banned@example.com', code: codes[0], newPassword: NEW_PASSWORD }), 400, 'invalid_code');
    expectProblem(await reset(env, { email: 'deleted@example.com', code: codes[1], newPassword: NEW_PASSWORD }), 400, 'invalid_code');

    expect((await t.server(env).post(`/users/${banned.id}/unban`)).statusCode).toBe(200);
    expect((await signIn(t, env, 'banned@example.com', banned.password)).statusCode).toBe(200);
    expect(await t.outbox(env, 'banned@example.com')).toHaveLength(1);
  });

  it('clears a sign-in lockout: the new password works at once', async () => {
    const env = await t.given.environment({ lockout: { maxFailedAttempts: 3 } });
    const user = await t.given.user(env, { email: 'ada@example.com' });
    for (let i = 0; i < 3; i++) expectProblem(await signIn(t, env, 'ada@example.com', 'not the password'), 401, 'invalid_credentials');
    expectProblem(await signIn(t, env, 'ada@example.com', user.password), 401, 'invalid_credentials');
    const code = await requestCode(env, 'ada@example.com');

    expect((await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD })).statusCode).toBe(200);

    const row = await t.db.selectFrom('users').select(['failed_sign_ins', 'locked_until']).where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ failed_sign_ins: 0, locked_until: null });
    expect((await signIn(t, env, 'ada@example.com', NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('completes the registration of a user still pending email verification', async () => {
    const env = await t.given.environment();
    const signUp = await t.client(env).post('/auth/sign-up', { email: 'ada@example.com', password: PASSWORD });
    expect(signUp.json().user.registrationState).toBe('pending_email_verification');
    const userId = signUp.json().user.id;
    t.clock.advance(60_000);
    const code = await requestCode(env, 'ada@example.com');

    const res = await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD });

    expect(res.statusCode).toBe(200);
    const now = t.clock.now().toISOString();
    expect(res.json().user).toMatchObject({ id: userId, registrationState: 'complete', emailVerifiedAt: now });
    expect((await t.server(env).get(`/users/${userId}`)).json()).toMatchObject({ registrationState: 'complete', emailVerifiedAt: now });
    expect((await signIn(t, env, 'ada@example.com', NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('keeps the original emailVerifiedAt of a verified user', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const verifiedAt = (await t.server(env).get(`/users/${user.id}`)).json().emailVerifiedAt;
    t.clock.advance(60_000);
    const code = await requestCode(env, 'ada@example.com');
    const res = await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD });
    expect(res.json().user.emailVerifiedAt).toBe(verifiedAt);
  });

  it('lets an account created without a password set one', async () => {
    const env = await t.given.environment();
    expect((await t.server(env).post('/users', { email: 'ada@example.com' })).statusCode).toBe(201);
    const code = await requestCode(env, 'ada@example.com');
    expect((await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD })).statusCode).toBe(200);
    expect((await signIn(t, env, 'ada@example.com', NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('does not accept an email verification code as a reset code', async () => {
    const env = await t.given.environment();
    await t.client(env).post('/auth/sign-up', { email: 'ada@example.com', password: PASSWORD });
    const verification = /(\d{6})$/.exec((await t.outbox(env, 'ada@example.com'))[0].subject)![1];

    expectProblem(await reset(env, { email: 'ada@example.com', code: verification, newPassword: NEW_PASSWORD }), 400, 'invalid_code');

    expect((await t.client(env).post('/auth/verify-email', { email: 'ada@example.com', code: verification })).statusCode).toBe(200);
  });

  it('limits attempts to 100 per client IP per hour, answering 429 with Retry-After', async () => {
    const env = await t.given.environment();
    await t.given.user(env, { email: 'ada@example.com' });
    const body = { email: 'ada@example.com', code: '123456', newPassword: 'short' };
    for (let i = 0; i < 100; i++) expect((await reset(env, body, { ip: '203.0.113.7' })).statusCode).toBe(400);

    const res = await reset(env, body, { ip: '203.0.113.7' });

    expectProblem(res, 429, 'rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(3600);
    expectProblem(await reset(env, body, { ip: '198.51.100.9' }), 400, 'weak_password');
  });

  it('refuses bad bodies with 400 invalid_request and properties.errors, before any code is tried', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');
    const cases: [Record<string, unknown>, string][] = [
      [{ email: 'ada@example.com', code: '12345', newPassword: NEW_PASSWORD }, '/body/code'],
      [{ email: 'ada@example.com', code: 'abcdef', newPassword: NEW_PASSWORD }, '/body/code'],
      [{ email: 'ada@example.com', code: Number(code), newPassword: NEW_PASSWORD }, '/body/code'],
      [{ email: 'ada@example.com', code }, '/body/newPassword'],
      [{ email: 'ada@example.com', code, newPassword: '' }, '/body/newPassword'],
      [{ email: 'not-an-email', code, newPassword: NEW_PASSWORD }, '/body/email'],
      [{ email: 'ada@example.com', code, newPassword: NEW_PASSWORD, password: NEW_PASSWORD }, '/body/password'],
    ];
    for (const [body, path] of cases) {
      const problem = expectProblem(await reset(env, body), 400, 'invalid_request');
      expect(problem.properties.errors, JSON.stringify(body)).toContainEqual(expect.objectContaining({ path }));
    }
    const badQuery = await t.client(env).post('/auth/reset-password?_is_native=maybe', { email: 'ada@example.com', code, newPassword: NEW_PASSWORD });
    expect(expectProblem(badQuery, 400, 'invalid_request').properties.errors).toContainEqual(expect.objectContaining({ path: '/querystring/_is_native' }));

    expect(await codeRow(env, user.id)).toMatchObject({ attempts: 0, used_at: null });
    expect((await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD })).statusCode).toBe(200);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { signIn, signUp } from '../helpers/flows.js';
import { PASSWORD } from '../helpers/given.js';
import { expectProblem } from '../helpers/problem.js';
import { answer, NEW_PASSWORD, otherCode, passwordReset } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());
const { reset, requestCode, codeRow } = passwordReset(() => t);


/** The 6-digit code of the newest mail to this address. */
async function latestCode(env: TestEnv, email: string): Promise<string> {
  const [mail] = await t.outbox(env, email);
  return /\b(\d{6})\b/.exec(mail.subject)![1];
}

const failuresCounted = async (env: TestEnv, userId: string) =>
  (await t.db.selectFrom('rate_limit_windows').select('count')
    .where('environment_id', '=', env.id).where('bucket', '=', `code_failures:user:${userId}`).executeTakeFirst())?.count ?? 0;

/** Five wrong tries burn a code; returns after all five were refused. */
async function burnResetCode(env: TestEnv, email: string) {
  const code = await requestCode(env, email);
  for (let i = 1; i <= 5; i++) expectProblem(await reset(env, { email, code: otherCode(code, i), newPassword: NEW_PASSWORD }), 400, 'invalid_code');
}

describe('a cap on wrong code tries per account, across codes', () => {
  it('refuses even the right reset code after 10 wrong tries in a UTC day, exactly as for an unknown email, until the next day', async () => {
    t.clock.set('2026-11-23T08:00:00.000Z');
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    await burnResetCode(env, 'ada@example.com');
    await burnResetCode(env, 'ada@example.com');
    expect(await failuresCounted(env, user.id)).toBe(10);

    const code = await requestCode(env, 'ada@example.com');
    const refused = await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD });
    const unknown = await reset(env, { email: 'nobody@example.com', code, newPassword: NEW_PASSWORD });
    expect(answer(refused)).toEqual(answer(unknown));
    expectProblem(refused, 400, 'invalid_code');
    expect(await codeRow(env, user.id)).toMatchObject({ used_at: null, attempts: 0 });

    t.clock.set('2026-11-24T00:00:01.000Z');
    const nextDay = await requestCode(env, 'ada@example.com');
    expect((await reset(env, { email: 'ada@example.com', code: nextDay, newPassword: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it('counts wrong verification codes against the same budget, so the right one is refused past it', async () => {
    t.clock.set('2026-11-25T08:00:00.000Z');
    const env = await t.given.environment();
    const signedUp = await signUp(t, env, 'grace@example.com');
    expect(signedUp.statusCode).toBe(201);
    const userId = signedUp.json().user.id;
    for (let round = 0; round < 2; round++) {
      if (round > 0) expect((await t.client(env).post('/auth/verify-email/send', { email: 'grace@example.com' })).statusCode).toBe(202);
      const code = await latestCode(env, 'grace@example.com');
      for (let i = 1; i <= 5; i++) expectProblem(await t.client(env).post('/auth/verify-email', { email: 'grace@example.com', code: otherCode(code, i) }), 400, 'invalid_code');
    }
    await t.client(env).post('/auth/verify-email/send', { email: 'grace@example.com' });
    const code = await latestCode(env, 'grace@example.com');

    expectProblem(await t.client(env).post('/auth/verify-email', { email: 'grace@example.com', code }), 400, 'invalid_code');
    expect((await t.server(env).get(`/users/${userId}`)).json().registrationState).toBe('pending_email_verification');
    expect(await failuresCounted(env, userId)).toBe(10);
  });

  it('gives back the try of a right code: only wrong tries use up the budget', async () => {
    t.clock.set('2026-11-26T08:00:00.000Z');
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const code = await requestCode(env, 'ada@example.com');
    for (let i = 1; i <= 3; i++) await reset(env, { email: 'ada@example.com', code: otherCode(code, i), newPassword: NEW_PASSWORD });
    expect((await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD })).statusCode).toBe(200);
    expect(await failuresCounted(env, user.id)).toBe(3);
  });
});

describe('the enumerationProtection setting', () => {
  const CLIENT_USER_KEYS = [
    'createdAt', 'deletedAt', 'email', 'emailVerifiedAt', 'environmentId', 'firstName', 'id', 'lastName', 'locale', 'name',
    'publicMetadata', 'registrationState', 'status', 'unsafeMetadata', 'updatedAt',
  ];
  const usersWithEmail = async (env: TestEnv, email: string) =>
    (await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).where('email', '=', email).execute()).length;

  it('answers a sign-up for a taken email like a new pending one, stores nothing and mails the owner instead of a code', async () => {
    const env = await t.given.environment({ enumerationProtection: true });
    const owner = await t.given.user(env, { email: 'ada@example.com', firstName: 'Ada' });
    const fresh = await t.client(env).post('/auth/sign-up', { email: 'new@example.com', password: PASSWORD, firstName: 'Eve' });
    const taken = await t.client(env).post('/auth/sign-up', { email: 'Ada@Example.com', password: PASSWORD, firstName: 'Eve' });

    expect(taken.statusCode).toBe(201);
    expect(Object.keys(taken.json()).sort()).toEqual(Object.keys(fresh.json()).sort());
    expect(Object.keys(taken.json().user).sort()).toEqual(CLIENT_USER_KEYS.sort());
    expect(taken.json()).toMatchObject({
      verification: { status: 'pending' },
      user: { email: 'ada@example.com', firstName: 'Eve', registrationState: 'pending_email_verification', emailVerifiedAt: null, environmentId: env.id },
    });
    expect(taken.json().user.id).not.toBe(owner.id);
    expect(taken.headers['content-type']).toBe(fresh.headers['content-type']);
    expect(await usersWithEmail(env, 'ada@example.com')).toBe(1);
    const mail = await t.outbox(env, 'ada@example.com');
    expect(mail.map((m) => m.subject)).toEqual(['You already have an account']);
    expect(mail[0].text).not.toMatch(/\b\d{6}\b/);
  });

  it('answers a sign-in with the right password of a pending account like a wrong password, so it cannot tell a real sign-up from a taken email', async () => {
    const env = await t.given.environment({ enumerationProtection: true });
    await t.given.user(env, { email: 'ada@example.com' });
    expect((await signUp(t, env, 'new@example.com')).statusCode).toBe(201);
    expect((await signUp(t, env, 'ada@example.com')).statusCode).toBe(201);

    const pending = await signIn(t, env, 'new@example.com', PASSWORD);
    const taken = await signIn(t, env, 'ada@example.com', 'the password the prober chose');
    expectProblem(pending, 401, 'invalid_credentials');
    expect(answer(pending)).toEqual(answer(taken));
  });

  it('mails the owner at most 5 notices an hour, answering every further sign-up the same', async () => {
    t.clock.set('2026-11-27T08:00:00.000Z');
    const env = await t.given.environment({ enumerationProtection: true });
    await t.given.user(env, { email: 'ada@example.com' });
    for (let i = 0; i < 7; i++) expect((await signUp(t, env, 'ada@example.com')).statusCode).toBe(201);
    expect(await t.outbox(env, 'ada@example.com')).toHaveLength(5);
    t.clock.set('2026-11-27T09:00:00.000Z');
    expect((await signUp(t, env, 'ada@example.com')).statusCode).toBe(201);
    expect(await t.outbox(env, 'ada@example.com')).toHaveLength(6);
  });

  it('still refuses a weak password first, whether or not the email is taken', async () => {
    const env = await t.given.environment({ enumerationProtection: true });
    await t.given.user(env, { email: 'ada@example.com' });
    expectProblem(await t.client(env).post('/auth/sign-up', { email: 'ada@example.com', password: 'password' }), 400, 'weak_password');
    expect(await t.outbox(env, 'ada@example.com')).toEqual([]);
  });

  it('answers 409 email_taken when it is off (the default), and when sign-up starts a session at once', async () => {
    const off = await t.given.environment();
    await t.given.user(off, { email: 'ada@example.com' });
    expectProblem(await signUp(t, off, 'ada@example.com'), 409, 'email_taken');

    const noVerification = await t.given.environment({ enumerationProtection: true, emailVerificationRequired: false });
    await t.given.user(noVerification, { email: 'ada@example.com' });
    expectProblem(await signUp(t, noVerification, 'ada@example.com'), 409, 'email_taken');
  });
});

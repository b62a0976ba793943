import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { passwordReset } from '../auth/support.js';
import { challengeOf, codeAt, eventsOf, expectProblem, signIn, STEP_MS, userWithTotp, verify } from './support.js';

describe('the second step of a sign-in: POST /_svc/auth/mfa/verify', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());
  const { requestCode, reset } = passwordReset(() => t);

  it('answers a right password with a challenge and no session, then starts a session for the code: amr pwd, otp, mfa, recent', async () => {
    const env = await t.given.environment();
    const { user, secret } = await userWithTotp(t, env);

    const first = await t.client(env).post('/auth/sign-in', { email: user.email, password: PASSWORD });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ mfaRequired: true, challengeToken: expect.any(String), factors: ['totp', 'backup_code'] });
    expect(first.headers['set-cookie']).toBeUndefined();

    const res = await t.client(env).post('/auth/mfa/verify', { challengeToken: first.json().challengeToken, code: codeAt(t, secret) });

    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().session).toMatchObject({ userId: user.id, amr: ['pwd', 'otp', 'mfa'], enrolmentOnly: false });
    expect(res.cookies.find((c) => c.name === '__session')?.value).toMatch(/^sess_/);
    const stored = await t.db.selectFrom('sessions').select('authenticated_at').where('environment_id', '=', env.id).where('id', '=', res.json().session.id).executeTakeFirstOrThrow();
    expect(stored.authenticated_at).toEqual(t.clock.now());
    const signedIn = (await eventsOf(t, env, 'user.signed_in')).at(-1)!;
    expect(signedIn.metadata).toEqual({ method: 'password', secondFactor: 'totp' });
  });

  it('accepts a TOTP code once per step (no replay), and one step of clock skew either way but not two', async () => {
    const env = await t.given.environment();
    const { user, secret } = await userWithTotp(t, env);
    const code = codeAt(t, secret);
    expect((await verify(t, env, await challengeOf(t, env, user), code)).statusCode).toBe(200);
    expectProblem(await verify(t, env, await challengeOf(t, env, user), code), 400, 'invalid_code');

    t.clock.advance(STEP_MS);
    expect((await verify(t, env, await challengeOf(t, env, user), codeAt(t, secret, -1))).statusCode).toBe(400); // that step was used above
    t.clock.advance(STEP_MS);
    expect((await verify(t, env, await challengeOf(t, env, user), codeAt(t, secret, 1))).statusCode).toBe(200);
    t.clock.advance(3 * STEP_MS);
    expectProblem(await verify(t, env, await challengeOf(t, env, user), codeAt(t, secret, -2)), 400, 'invalid_code');
    expectProblem(await verify(t, env, await challengeOf(t, env, user), codeAt(t, secret, 2)), 400, 'invalid_code');
  });

  it('takes each backup code once, in any case and without the dash', async () => {
    const env = await t.given.environment();
    const { user, backupCodes } = await userWithTotp(t, env);
    const res = await verify(t, env, await challengeOf(t, env, user), backupCodes[3].toUpperCase().replace('-', ' '));
    expect(res.statusCode, res.body).toBe(200);
    expect((await eventsOf(t, env, 'user.signed_in')).at(-1)!.metadata).toEqual({ method: 'password', secondFactor: 'backup_code' });
    expectProblem(await verify(t, env, await challengeOf(t, env, user), backupCodes[3]), 400, 'invalid_code');
    expect((await t.client(env, { token: res.json().sessionToken }).get('/me/mfa')).json().backupCodesRemaining).toBe(9);
  });

  it("counts wrong codes against the account's lockout: the one that fills it locks the account, and then even the right code and password fail", async () => {
    const env = await t.given.environment({ lockout: { maxFailedAttempts: 4, coolDownSeconds: 600 } });
    const { user, secret } = await userWithTotp(t, env);
    const challenge = await challengeOf(t, env, user); // the right password's attempt stays reserved: 1
    for (let i = 0; i < 3; i++) expectProblem(await verify(t, env, challenge, codeAt(t, secret, 10)), 400, 'invalid_code');

    expectProblem(await verify(t, env, challenge, codeAt(t, secret)), 400, 'invalid_code');
    expectProblem(await signIn(t, env, user), 401, 'invalid_credentials');
    const [failed] = (await eventsOf(t, env, 'user.sign_in_failed')).slice(-1);
    expect(failed.metadata).toEqual({ reason: 'invalid_second_factor', locked: true });

    t.clock.advance(600_000);
    expect((await verify(t, env, await challengeOf(t, env, user), codeAt(t, secret))).statusCode).toBe(200);
    const [row] = await t.db.selectFrom('users').select(['failed_sign_ins', 'locked_until']).where('environment_id', '=', env.id).where('id', '=', user.id).execute();
    expect(row).toEqual({ failed_sign_ins: 0, locked_until: null });
  });

  it('spends a challenge after 5 wrong codes, after 5 minutes, and once used (400 invalid_challenge)', async () => {
    const env = await t.given.environment({ lockout: { maxFailedAttempts: 100, coolDownSeconds: 600 } });
    const { user, secret } = await userWithTotp(t, env);
    const wrong = codeAt(t, secret, 10);
    const worn = await challengeOf(t, env, user);
    for (let i = 0; i < 5; i++) expectProblem(await verify(t, env, worn, wrong), 400, 'invalid_code');
    expectProblem(await verify(t, env, worn, codeAt(t, secret)), 400, 'invalid_challenge');

    const late = await challengeOf(t, env, user);
    t.clock.advance(5 * 60_000);
    expectProblem(await verify(t, env, late, codeAt(t, secret)), 400, 'invalid_challenge');

    const used = await challengeOf(t, env, user);
    expect((await verify(t, env, used, codeAt(t, secret))).statusCode).toBe(200);
    t.clock.advance(STEP_MS);
    expectProblem(await verify(t, env, used, codeAt(t, secret)), 400, 'invalid_challenge');
  });

  it('starts one session for a challenge answered twice at once with two right codes', async () => {
    const env = await t.given.environment();
    const { user, secret, backupCodes } = await userWithTotp(t, env);
    const challenge = await challengeOf(t, env, user);
    const answers = await Promise.all([verify(t, env, challenge, codeAt(t, secret)), verify(t, env, challenge, backupCodes[0])]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 400]);
    expectProblem(answers.find((a) => a.statusCode === 400)!, 400, 'invalid_challenge');
    const sessions = await t.db.selectFrom('sessions').select('id').where('environment_id', '=', env.id).where('user_id', '=', user.id).execute();
    expect(sessions).toHaveLength(2); // the enrolling session and the one the challenge started
  });

  it("refuses a challenge in another environment, as an unknown one", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const { user, secret } = await userWithTotp(t, theirs);
    const challenge = await challengeOf(t, theirs, user);
    expectProblem(await verify(t, mine, challenge, codeAt(t, secret)), 400, 'invalid_challenge');
    expect((await verify(t, theirs, challenge, codeAt(t, secret))).statusCode).toBe(200);
  });

  it('answers a wrong password the same whether or not the account has a second factor', async () => {
    const env = await t.given.environment();
    const { user: withFactor } = await userWithTotp(t, env);
    const without = await t.given.user(env);
    const [a, b] = [await signIn(t, env, withFactor, 'not the password'), await signIn(t, env, without, 'not the password')];
    expect([a.statusCode, b.statusCode]).toEqual([401, 401]);
    expect({ ...a.json(), instance: '' }).toEqual({ ...b.json(), instance: '' });
  });

  it('stops a password reset at the challenge for a user with a factor: the new password is set, the session waits for the code', async () => {
    const env = await t.given.environment();
    const { user, secret } = await userWithTotp(t, env);
    const res = await reset(env, { email: user.email, code: await requestCode(env, user.email!), newPassword: 'a brand new passphrase' }, { native: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ mfaRequired: true });
    const done = await verify(t, env, res.json().challengeToken, codeAt(t, secret));
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().session.amr).toEqual(['email', 'otp', 'mfa']);
    expectProblem(await signIn(t, env, user), 401, 'invalid_credentials');
  });

  it('skips the second step where mfa.policy is off, though the user has a factor', async () => {
    const env = await t.given.environment();
    const { user } = await userWithTotp(t, env);
    await t.admin.patch(`/environments/${env.id}`, { settings: { mfa: { policy: 'off' } } });
    const res = await signIn(t, env, user);
    expect(res.statusCode).toBe(200);
    expect(res.json().session.amr).toEqual(['pwd']);
  });
});

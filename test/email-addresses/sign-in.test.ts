import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { expectProblem } from '../helpers/problem.js';
import { NEW_PASSWORD, passwordReset } from '../auth/support.js';
import { added, signedInUser, storedUser, verifiedAddress } from './support.js';

describe('signing in with a secondary address', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());
  const { forgot, reset, requestCode } = passwordReset(() => t);
  const signIn = (env: Parameters<TestApp['client']>[0], email: string, password = PASSWORD) =>
    t.client(env).post('/auth/sign-in?_is_native=true', { email, password });

  it("signs in with a verified secondary address and its user's password; the user's email stays the primary", async () => {
    const env = await t.given.environment();
    const { user, session } = await signedInUser(t, env, { email: 'ada@example.com' });
    await verifiedAddress(t, env, session, 'ada@work.example.com');
    const res = await signIn(env, 'ADA@work.example.com');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().user).toMatchObject({ id: user.id, email: 'ada@example.com' });
    expect((await signIn(env, 'ada@example.com')).statusCode).toBe(200);
  });

  it('refuses an unverified, a removed and a deleted user\'s address with 401 invalid_credentials', async () => {
    const env = await t.given.environment();
    const { user, session, me } = await signedInUser(t, env, { email: 'ada@example.com' });
    await added(t, env, session, 'unproven@example.com');
    expectProblem(await signIn(env, 'unproven@example.com'), 401, 'invalid_credentials');
    const work = await verifiedAddress(t, env, session, 'ada@work.example.com');
    expect((await me.delete(`/me/email-addresses/${work.id}`)).statusCode).toBe(204);
    expectProblem(await signIn(env, 'ada@work.example.com'), 401, 'invalid_credentials');
    await verifiedAddress(t, env, session, 'again@example.com');
    expect((await t.server(env).delete(`/users/${user.id}`)).statusCode).toBe(204);
    expectProblem(await signIn(env, 'again@example.com'), 401, 'invalid_credentials');
  });

  it('counts wrong passwords by a secondary address against the same account', async () => {
    const env = await t.given.environment({ lockout: { maxFailedAttempts: 2, coolDownSeconds: 60 } });
    const { user, session } = await signedInUser(t, env, { email: 'ada@example.com' });
    await verifiedAddress(t, env, session, 'ada@work.example.com');
    expectProblem(await signIn(env, 'ada@work.example.com', 'wrong one'), 401, 'invalid_credentials');
    expectProblem(await signIn(env, 'ada@example.com', 'wrong two'), 401, 'invalid_credentials');
    expect((await storedUser(t, env, user)).locked_until).not.toBeNull();
    expectProblem(await signIn(env, 'ada@work.example.com'), 401, 'invalid_credentials');
  });

  it('mails a reset code to the verified secondary address asked for, and resets the password with it', async () => {
    const env = await t.given.environment();
    const { user, session } = await signedInUser(t, env, { email: 'ada@example.com' });
    await verifiedAddress(t, env, session, 'ada@work.example.com');
    const code = await requestCode(env, 'ada@work.example.com');
    expect((await t.outbox(env, 'ada@example.com')).filter((m) => m.subject.includes('reset'))).toEqual([]);
    const res = await reset(env, { email: 'ada@work.example.com', code, newPassword: NEW_PASSWORD }, { native: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().user).toMatchObject({ id: user.id, email: 'ada@example.com' });
    expect((await signIn(env, 'ada@example.com', NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('binds a code mailed to a secondary address to it: the same code naming the primary is 400 invalid_code', async () => {
    const env = await t.given.environment();
    const { session } = await signedInUser(t, env, { email: 'ada@example.com' });
    await verifiedAddress(t, env, session, 'ada@work.example.com');
    const code = await requestCode(env, 'ada@work.example.com');
    expectProblem(await reset(env, { email: 'ada@example.com', code, newPassword: NEW_PASSWORD }), 400, 'invalid_code');
  });

  it('leaves an unverified primary unverified when the reset code went to a secondary address', async () => {
    const env = await t.given.environment({ emailVerificationRequired: false });
    const signUp = await t.client(env).post('/auth/sign-up?_is_native=true', { email: 'ada@example.com', password: PASSWORD });
    expect(signUp.statusCode, signUp.body).toBe(201);
    const token = signUp.json().sessionToken;
    const user = { id: signUp.json().user.id, email: 'ada@example.com', password: PASSWORD };
    expect((await storedUser(t, env, user)).email_verified_at).toBeNull();
    await verifiedAddress(t, env, { id: '', userId: user.id, token }, 'ada@work.example.com');
    const code = await requestCode(env, 'ada@work.example.com');
    expect((await reset(env, { email: 'ada@work.example.com', code, newPassword: NEW_PASSWORD })).statusCode).toBe(200);
    expect((await storedUser(t, env, user)).email_verified_at).toBeNull();
    const listed = (await t.server(env).get(`/users/${user.id}/email-addresses`)).json().items;
    expect(listed.map((a: { email: string; verified: boolean }) => [a.email, a.verified])).toEqual([['ada@example.com', false], ['ada@work.example.com', true]]);
  });

  it('answers forgot-password for an unverified secondary address as for any email, and mails nothing', async () => {
    const env = await t.given.environment();
    const { session } = await signedInUser(t, env);
    await added(t, env, session, 'unproven@example.com');
    expect((await forgot(env, 'unproven@example.com')).statusCode).toBe(202);
    expect((await t.outbox(env, 'unproven@example.com')).filter((m) => m.subject.includes('reset'))).toEqual([]);
  });

  it('signs in by the old primary after the primary moved (it stays a verified address)', async () => {
    const env = await t.given.environment();
    const { user, session, me } = await signedInUser(t, env, { email: 'ada@example.com' });
    const work = await verifiedAddress(t, env, session, 'ada@work.example.com');
    expect((await me.post(`/me/email-addresses/${work.id}/make-primary`)).statusCode).toBe(200);
    const res = await signIn(env, 'ada@example.com');
    expect(res.statusCode).toBe(200);
    expect(res.json().user).toMatchObject({ id: user.id, email: 'ada@work.example.com' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { sessionIsActive } from '../helpers/given.js';
import { challengeOf, enrolTotp, eventsOf, expectProblem, signIn, userWithTotp } from './support.js';

describe('mfa.policy "required": a session that may only enrol', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('holds a user without a factor to enrolment (403 mfa_enrolment_required, no JWT), and frees every session once a factor is confirmed', async () => {
    const env = await t.given.environment({ mfa: { policy: 'required' } });
    const user = await t.given.user(env);
    const res = await signIn(t, env, user);
    expect(res.json().session).toMatchObject({ amr: ['pwd'], enrolmentOnly: true });
    const other = await t.given.session(env, user);
    const me = t.client(env, { token: res.json().sessionToken });

    expect((await me.get('/me')).statusCode).toBe(200);
    expect((await me.get('/me/mfa')).statusCode).toBe(200);
    expectProblem(await me.patch('/me', { firstName: 'Ada' }), 403, 'mfa_enrolment_required');
    expectProblem(await me.post('/sessions/current/token'), 403, 'mfa_enrolment_required');
    expectProblem(await me.get('/organizations'), 403, 'mfa_enrolment_required');

    await enrolTotp(t, env, res.json().sessionToken);

    expect((await me.patch('/me', { firstName: 'Ada' })).statusCode).toBe(200);
    expect((await me.post('/sessions/current/token')).statusCode).toBe(200);
    expect((await t.client(env, { token: other.token }).patch('/me', { lastName: 'Lovelace' })).statusCode).toBe(200);
    expect((await me.post('/auth/sign-out')).statusCode).toBe(204);
  });

  it('keeps the last factor under the required policy (409 mfa_required_by_policy)', async () => {
    const env = await t.given.environment({ mfa: { policy: 'required' } });
    const token = (await signIn(t, env, await t.given.user(env))).json().sessionToken;
    const { factorId } = await enrolTotp(t, env, token); // the confirming code is a recent authentication

    expectProblem(await t.client(env, { token }).delete(`/me/mfa/${factorId}`), 409, 'mfa_required_by_policy');
    expect((await t.client(env, { token }).get('/me/mfa')).json().factors).toEqual([expect.objectContaining({ id: factorId })]);
  });

  it('lets the public configuration tell a sign-in UI the policy and the factors it offers', async () => {
    const required = await t.given.environment({ mfa: { policy: 'required' } });
    expect((await t.client(required).get('/environment')).json().mfa).toEqual({ policy: 'required', factors: ['totp', 'backup_code'] });
    const off = await t.given.environment({ mfa: { policy: 'off' } });
    expect((await t.client(off).get('/environment')).json().mfa).toEqual({ policy: 'off', factors: [] });
  });
});

describe('the Server API: a user\'s factors, and the support reset', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('lists the factors without secrets, and resets them all: factors and codes gone, every session revoked, the password alone signs in', async () => {
    const env = await t.given.environment();
    const { user, session, factorId, secret } = await userWithTotp(t, env);
    const listed = await t.server(env).get(`/users/${user.id}/mfa`);
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({ factors: [expect.objectContaining({ id: factorId, type: 'totp' })], backupCodesRemaining: 10 });
    expect(listed.body).not.toContain(secret);

    expect((await t.server(env).delete(`/users/${user.id}/mfa`)).statusCode).toBe(204);

    expect((await t.server(env).get(`/users/${user.id}/mfa`)).json()).toEqual({ factors: [], backupCodesRemaining: 0 });
    expect(await sessionIsActive(t, env, session)).toBe(false);
    expect((await signIn(t, env, user)).json().session.amr).toEqual(['pwd']);
    expect((await eventsOf(t, env, 'user.mfa_reset'))[0]).toMatchObject({ actor_type: 'api_key', metadata: { removedFactors: 1, revokedSessions: 1 } });
  });

  it("answers another environment's user exactly like a missing one", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const { user } = await userWithTotp(t, theirs);
    for (const res of [await t.server(mine).get(`/users/${user.id}/mfa`), await t.server(mine).delete(`/users/${user.id}/mfa`)]) {
      expectProblem(res, 404, 'user_not_found');
    }
    expect((await challengeOf(t, theirs, user)).length).toBeGreaterThan(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { impersonatedSession } from '../account/support.js';
import { challengeOf, codeAt, enrolTotp, eventsOf, expectProblem, STEP_MS, userWithTotp, verify } from './support.js';

const PAST_RECENT_MS = 10 * 60_000 + 1000;

describe('enrolling an authenticator app (TOTP) and backup codes', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('answers a secret, an otpauth URI and a QR code, and keeps the factor pending and unlisted until a first code confirms it', async () => {
    const env = await t.given.environment({}, 'Acme');
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const me = t.client(env, { token: (await t.given.session(env, user)).token });

    const res = await me.post('/me/mfa/totp');

    expect(res.statusCode, res.body).toBe(201);
    const { factorId, secret, otpauthUri, qrCodeSvg } = res.json();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauthUri).toBe(`otpauth://totp/Acme:ada%40example.com?issuer=Acme&secret=${secret}&algorithm=SHA1&digits=6&period=30`);
    expect(qrCodeSvg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"[\s\S]*<\/svg>\n?$/);
    expect((await me.get('/me/mfa')).json()).toEqual({ factors: [], backupCodesRemaining: 0 });
    const [stored] = await t.db.selectFrom('mfa_factors').selectAll().where('environment_id', '=', env.id).execute();
    expect(stored).toMatchObject({ id: factorId, user_id: user.id, type: 'totp', confirmed_at: null });
    expect(stored.secret_sealed.toString('latin1')).not.toContain(secret);

    expectProblem(await me.post(`/me/mfa/totp/${factorId}/confirm`, { code: codeAt(t, secret, 3) }), 400, 'invalid_code');
    const confirmed = await me.post(`/me/mfa/totp/${factorId}/confirm`, { code: codeAt(t, secret) });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    const { backupCodes } = confirmed.json();
    expect(backupCodes).toHaveLength(10);
    expect(new Set(backupCodes).size).toBe(10);
    for (const code of backupCodes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    expect((await me.get('/me/mfa')).json()).toEqual({
      factors: [{ id: factorId, type: 'totp', name: 'Authenticator app', createdAt: t.clock.now().toISOString(), lastUsedAt: t.clock.now().toISOString() }],
      backupCodesRemaining: 10,
    });
    const hashes = await t.db.selectFrom('mfa_backup_codes').select('code_hash').where('environment_id', '=', env.id).execute();
    expect(hashes).toHaveLength(10);
    for (const { code_hash } of hashes) expect(backupCodes.map((c: string) => Buffer.from(c).toString('hex'))).not.toContain(code_hash.toString('hex'));
    const [event] = await eventsOf(t, env, 'user.mfa_factor_added');
    expect(event).toMatchObject({ actor_type: 'user', actor_id: user.id, metadata: { type: 'totp', factorId } });
    expect(JSON.stringify(event)).not.toContain(secret);
  });

  it('replaces a pending enrolment with a new one, and refuses a second authenticator app with 409 totp_already_enrolled', async () => {
    const env = await t.given.environment();
    const me = t.client(env, { token: (await t.given.session(env, await t.given.user(env))).token });
    const first = (await me.post('/me/mfa/totp')).json();
    const second = (await me.post('/me/mfa/totp')).json();
    expectProblem(await me.post(`/me/mfa/totp/${first.factorId}/confirm`, { code: codeAt(t, first.secret) }), 404, 'resource_not_found');
    expect((await me.post(`/me/mfa/totp/${second.factorId}/confirm`, { code: codeAt(t, second.secret) })).statusCode).toBe(200);
    expectProblem(await me.post('/me/mfa/totp'), 409, 'totp_already_enrolled');
  });

  it('counts the confirming session as a second-factor check: recent, with otp and mfa in its amr', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    t.clock.advance(PAST_RECENT_MS);
    await enrolTotp(t, env, session.token);
    const [stored] = await t.db.selectFrom('sessions').select(['amr', 'authenticated_at']).where('environment_id', '=', env.id).where('id', '=', session.id).execute();
    expect(stored.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(stored.authenticated_at).toEqual(new Date(t.clock.now().getTime() - STEP_MS));
  });

  it('regenerates backup codes after a recent authentication only, and the old ones stop working', async () => {
    const env = await t.given.environment();
    const { user, session, backupCodes } = await userWithTotp(t, env);
    const me = t.client(env, { token: session.token });
    t.clock.advance(PAST_RECENT_MS);
    expectProblem(await me.post('/me/mfa/backup-codes'), 403, 'reauthentication_required');
    expect((await me.post('/me/reauthenticate', { password: PASSWORD })).statusCode).toBe(204);

    const res = await me.post('/me/mfa/backup-codes');

    expect(res.statusCode, res.body).toBe(200);
    const fresh = res.json().backupCodes;
    expect(fresh).toHaveLength(10);
    expectProblem(await verify(t, env, await challengeOf(t, env, user), backupCodes[0]), 400, 'invalid_code');
    expect((await verify(t, env, await challengeOf(t, env, user), fresh[0])).statusCode).toBe(200);
    expect((await eventsOf(t, env, 'user.backup_codes_regenerated'))).toHaveLength(1);
  });

  it('removes the factor after a recent authentication (here by a code); its backup codes go with it and the password alone signs in again', async () => {
    const env = await t.given.environment();
    const { user, session, factorId, secret } = await userWithTotp(t, env);
    const me = t.client(env, { token: session.token });
    t.clock.advance(PAST_RECENT_MS);
    expectProblem(await me.delete(`/me/mfa/${factorId}`), 403, 'reauthentication_required');
    expectProblem(await me.post('/me/reauthenticate', { code: codeAt(t, secret, 5) }), 400, 'invalid_code');
    expect((await me.post('/me/reauthenticate', { code: codeAt(t, secret) })).statusCode).toBe(204);
    expectProblem(await me.post('/me/reauthenticate', { code: codeAt(t, secret) }), 400, 'invalid_code'); // once per step

    expect((await me.delete(`/me/mfa/${factorId}`)).statusCode).toBe(204);

    expect((await me.get('/me/mfa')).json()).toEqual({ factors: [], backupCodesRemaining: 0 });
    expect(await t.db.selectFrom('mfa_backup_codes').selectAll().where('environment_id', '=', env.id).execute()).toEqual([]);
    const plain = await t.client(env).post('/auth/sign-in?_is_native=true', { email: user.email, password: PASSWORD });
    expect(plain.json().session.amr).toEqual(['pwd']);
    expect((await eventsOf(t, env, 'user.mfa_factor_removed'))[0].metadata).toEqual({ type: 'totp', factorId });
    expectProblem(await me.delete(`/me/mfa/${factorId}`), 404, 'resource_not_found');
  });

  it('refuses enrolment where mfa.policy is off (403 mfa_disabled), and every change to an impersonated session', async () => {
    const off = await t.given.environment({ mfa: { policy: 'off' } });
    expectProblem(await t.client(off, { token: (await t.given.session(off, await t.given.user(off))).token }).post('/me/mfa/totp'), 403, 'mfa_disabled');

    const { env, impersonated } = await impersonatedSession(t);
    const as = t.client(env, { token: impersonated.token });
    expectProblem(await as.post('/me/mfa/totp'), 403, 'impersonation_restricted');
    expectProblem(await as.post('/me/mfa/backup-codes'), 403, 'impersonation_restricted');
    expect((await as.get('/me/mfa')).statusCode).toBe(200);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { codeAt, STEP_MS } from '../factors/support.js';
import { asDashboard, expectProblem, givenOperator, OPERATOR_COOKIE, operatorEmail, randomIp, sessionCookieOf, signedInOperator, signIn } from './support.js';

describe('operator sign-in: POST /api/admin/v1/operator-sessions and the admin API by the session cookie', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('sets an HttpOnly, Secure, SameSite=Strict cookie on the API paths only, expiring with the session, and no token in the body', async () => {
    const operator = await givenOperator(t);
    const res = await signIn(t, operator.email, operator.password);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      operator: { id: operator.id, email: operator.email, status: 'active', createdAt: expect.any(String) },
      session: { id: expect.any(String), createdAt: expect.any(String), expiresAt: expect.any(String) },
    });
    const cookie = sessionCookieOf(res)!;
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/api' });
    // Cookie dates have whole seconds.
    expect(cookie.expires!.getTime()).toBe(Math.floor(Date.parse(body.session.expiresAt) / 1000) * 1000);
    expect(res.body).not.toContain(cookie.value);
  });

  it('lets the cookie call the admin API; without it, or with a revoked one, 401 unauthenticated', async () => {
    const operator = await signedInOperator(t);
    const env = await t.given.environment();
    const listed = await asDashboard(t, 'GET', '/api/admin/v1/environments', { cookie: operator.cookie });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().items.map((e: { id: string }) => e.id)).toContain(env.id);
    expectProblem(await asDashboard(t, 'GET', '/api/admin/v1/environments'), 401, 'unauthenticated');
    expectProblem(await asDashboard(t, 'GET', '/api/admin/v1/environments', { cookie: 'sess_not-a-session' }), 401, 'unauthenticated');

    const me = await asDashboard(t, 'GET', '/api/admin/v1/operator-sessions/current', { cookie: operator.cookie });
    expect(me.json()).toMatchObject({ operator: { id: operator.id, email: operator.email }, secondFactorEnrolled: false });
    const out = await asDashboard(t, 'DELETE', '/api/admin/v1/operator-sessions/current', { cookie: operator.cookie });
    expect(out.statusCode).toBe(204);
    expect(sessionCookieOf(out)).toMatchObject({ value: '', path: '/api' });
    expectProblem(await asDashboard(t, 'GET', '/api/admin/v1/environments', { cookie: operator.cookie }), 401, 'unauthenticated');
  });

  it('refuses a change made with the cookie without an Origin, or from another origin (403 forbidden), and does nothing', async () => {
    const operator = await signedInOperator(t);
    const name = `csrf-${operator.id}`;
    const cookie = `${OPERATOR_COOKIE}=${operator.cookie}`;
    const bare = await t.app.inject({ method: 'POST', url: '/api/admin/v1/environments', headers: { host: 'gatehouse.test', cookie }, payload: { name } });
    expectProblem(bare, 403, 'forbidden');
    const foreign = await t.app.inject({ method: 'POST', url: '/api/admin/v1/environments', headers: { host: 'gatehouse.test', cookie, origin: 'https://evil.example' }, payload: { name } });
    expectProblem(foreign, 403, 'forbidden');
    expect(await t.db.selectFrom('environments').select('id').where('name', '=', name).execute()).toEqual([]);
    const own = await asDashboard(t, 'POST', '/api/admin/v1/environments', { cookie: operator.cookie, body: { name } });
    expect(own.statusCode, own.body).toBe(201);
  });

  it('records an operator\'s admin action in the trail with the operator\'s id (the admin token\'s as the system)', async () => {
    const operator = await signedInOperator(t);
    const created = await asDashboard(t, 'POST', '/api/admin/v1/environments', { cookie: operator.cookie, body: { name: 'Operated' } });
    const env = created.json();
    const key = await asDashboard(t, 'POST', `/api/admin/v1/environments/${env.id}/secret-keys`, { cookie: operator.cookie });
    const byToken = await t.admin.post(`/environments/${env.id}/secret-keys`);
    const events = (await t.server(env).get('/audit-events?action=secret_key.created&limit=100')).json().items;
    const actorOf = (keyId: string) => events.find((e: { targets: { id: string }[] }) => e.targets[0]!.id === keyId);
    expect(actorOf(key.json().id)).toMatchObject({
      actor: { type: 'operator', id: operator.id, impersonatorId: null }, producer: { type: 'gatehouse', via: 'admin_api' },
      context: { ipAddress: '127.0.0.1' },
    });
    expect(actorOf(env.secretKeyId).actor).toEqual({ type: 'operator', id: operator.id, impersonatorId: null });
    expect(actorOf(byToken.json().id).actor).toEqual({ type: 'system', id: null, impersonatorId: null });
  });

  it('keeps a client network out of an operator\'s account after 5 wrong passwords (429 with Retry-After, even for the right one) while the right password signs in from another network', async () => {
    const operator = await givenOperator(t);
    const [attacker, owner] = [randomIp(), randomIp()];
    for (let i = 0; i < 5; i++) expectProblem(await signIn(t, operator.email, 'not the password at all', attacker), 401, 'invalid_credentials');
    const refused = await signIn(t, operator.email, operator.password, attacker);
    expectProblem(refused, 429, 'rate_limited');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(await t.db.selectFrom('users').select(['failed_sign_ins', 'locked_until']).where('id', '=', operator.id).executeTakeFirstOrThrow())
      .toEqual({ failed_sign_ins: 0, locked_until: null });

    const fromOwner = await signIn(t, operator.email, operator.password, owner);
    expect(fromOwner.statusCode, fromOwner.body).toBe(200);
    expect(sessionCookieOf(fromOwner)).toBeDefined();
    expectProblem(await signIn(t, operator.email, 'not the password at all', attacker), 429, 'rate_limited');
    expectProblem(await signIn(t, operator.email, operator.password, attacker), 429, 'rate_limited');
    t.clock.advance(retryAfter * 1000);
    expect((await signIn(t, operator.email, operator.password, attacker)).statusCode).toBe(200);
  });

  it('answers an unknown email as an operator\'s: 401 for 5 wrong passwords, then 429 from that network', async () => {
    const [ip, email] = [randomIp(), operatorEmail()];
    for (let i = 0; i < 5; i++) expectProblem(await signIn(t, email, 'not the password at all', ip), 401, 'invalid_credentials');
    expectProblem(await signIn(t, email, 'not the password at all', ip), 429, 'rate_limited');
  });

  it('throttles one client network across operators: its 100 failures in 15 minutes answer 429 rate_limited, even for the right password', async () => {
    const ip = randomIp();
    const operator = await givenOperator(t);
    for (let i = 0; i < 100; i++) expectProblem(await signIn(t, operatorEmail(), 'not the password at all', ip), 401, 'invalid_credentials');
    const refused = await signIn(t, operator.email, operator.password, ip);
    expectProblem(refused, 429, 'rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(900);
    expect((await signIn(t, operator.email, operator.password, randomIp())).statusCode).toBe(200);
  });

  it('four wrong passwords do not lock: the fifth try with the right one signs in', async () => {
    const operator = await givenOperator(t);
    for (let i = 0; i < 4; i++) expectProblem(await signIn(t, operator.email, 'not the password at all'), 401, 'invalid_credentials');
    expect((await signIn(t, operator.email, operator.password)).statusCode).toBe(200);
  });

  it('asks an operator with an authenticator app for a code after the password, and the code sets the cookie', async () => {
    const operator = await signedInOperator(t);
    const enrol = await asDashboard(t, 'POST', '/api/admin/v1/operators/me/mfa/totp', { cookie: operator.cookie });
    expect(enrol.statusCode, enrol.body).toBe(201);
    const { factorId, secret } = enrol.json();
    const confirmed = await asDashboard(t, 'POST', `/api/admin/v1/operators/me/mfa/totp/${factorId}/confirm`, { cookie: operator.cookie, body: { code: codeAt(t, secret) } });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    t.clock.advance(STEP_MS);

    const first = await signIn(t, operator.email, operator.password);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ mfaRequired: true, challengeToken: expect.stringMatching(/^mfa_/), factors: ['totp', 'backup_code'] });
    expect(sessionCookieOf(first)).toBeUndefined();
    const wrong = await asDashboard(t, 'POST', '/api/admin/v1/operator-sessions/mfa', { body: { challengeToken: first.json().challengeToken, code: '000000' } });
    expectProblem(wrong, 400, 'invalid_code');
    const second = await asDashboard(t, 'POST', '/api/admin/v1/operator-sessions/mfa', { body: { challengeToken: first.json().challengeToken, code: codeAt(t, secret) } });
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json().operator.id).toBe(operator.id);
    const cookie = sessionCookieOf(second)!;
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/api' });
    const me = await asDashboard(t, 'GET', '/api/admin/v1/operator-sessions/current', { cookie: cookie.value });
    expect(me.json()).toMatchObject({ operator: { id: operator.id }, secondFactorEnrolled: true });
  });

  it('answers "who am I" only for an operator: 403 operator_session_required with the admin token', async () => {
    expectProblem(await t.admin.get('/operator-sessions/current'), 403, 'operator_session_required');
  });
});

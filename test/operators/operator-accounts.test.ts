import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { asDashboard, BASE_ORIGIN, expectProblem, givenOperator, operatorEmail, signedInOperator, signIn } from './support.js';

describe('operators: POST /api/admin/v1/operators, GET /api/admin/v1/operators, the set-password link', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('creates an operator with a password who can sign in at once, and lists them', async () => {
    const email = operatorEmail();
    const res = await t.admin.post('/operators', { email, password: 'a long operator passphrase' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({
      operator: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), email, status: 'active', createdAt: expect.any(String) }, setPasswordUrl: null,
    });
    expect((await signIn(t, email, 'a long operator passphrase')).statusCode).toBe(200);
    const listed = await t.admin.get('/operators?limit=100');
    expect(listed.statusCode).toBe(200);
    expect(listed.json().items).toContainEqual(res.json().operator);
    expect(JSON.stringify(listed.json())).not.toContain('password');
  });

  it('refuses an email that is already an operator\'s with 409 email_taken, in any case', async () => {
    const email = operatorEmail();
    await givenOperator(t, email);
    expectProblem(await t.admin.post('/operators', { email: email.toUpperCase(), password: 'another long passphrase' }), 409, 'email_taken');
  });

  it('refuses a weak password with the end-users\' policy problem (400 weak_password) and creates nothing', async () => {
    const email = operatorEmail();
    const tooShort = await t.admin.post('/operators', { email, password: 'short' });
    expectProblem(tooShort, 400, 'weak_password');
    expect(tooShort.json().detail).toBe('The password must be at least 8 characters.');
    const common = await t.admin.post('/operators', { email, password: 'password123' });
    expectProblem(common, 400, 'weak_password');
    expect(common.json().detail).toBe('This password is too common; choose another.');
    expect((await t.admin.get('/operators?limit=100')).json().items.map((o: { email: string }) => o.email)).not.toContain(email);
  });

  it('without a password answers a one-time link to the dashboard; its token sets the password once, a weak one leaving it working', async () => {
    const email = operatorEmail();
    const res = await asDashboard(t, 'POST', '/api/admin/v1/operators', { body: { email }, headers: { authorization: 'Bearer test-admin-token-0123456789abcdef' } });
    expect(res.statusCode, res.body).toBe(201);
    const url = new URL(res.json().setPasswordUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${BASE_ORIGIN}/dashboard/set-password`);
    const token = url.searchParams.get('token')!;
    expectProblem(await signIn(t, email, 'the password they will set'), 401, 'invalid_credentials');

    expectProblem(await asDashboard(t, 'POST', '/api/admin/v1/operators/set-password', { body: { token, password: 'short' } }), 400, 'weak_password');
    const set = await asDashboard(t, 'POST', '/api/admin/v1/operators/set-password', { body: { token, password: 'the password they will set' } });
    expect(set.statusCode, set.body).toBe(204);
    expect((await signIn(t, email, 'the password they will set')).statusCode).toBe(200);
    expectProblem(await asDashboard(t, 'POST', '/api/admin/v1/operators/set-password', { body: { token, password: 'someone else\'s password' } }), 400, 'invalid_token');
    expectProblem(await asDashboard(t, 'POST', '/api/admin/v1/operators/set-password', { body: { token: 'opw_unknown', password: 'whatever long enough' } }), 400, 'invalid_token');
  });

  it('an operator\'s session can create another operator, and list them', async () => {
    const operator = await signedInOperator(t);
    const email = operatorEmail();
    const res = await asDashboard(t, 'POST', '/api/admin/v1/operators', { cookie: operator.cookie, body: { email, password: 'a long operator passphrase' } });
    expect(res.statusCode, res.body).toBe(201);
    const listed = await asDashboard(t, 'GET', '/api/admin/v1/operators?limit=100', { cookie: operator.cookie });
    expect(listed.json().items.map((o: { email: string }) => o.email)).toEqual(expect.arrayContaining([operator.email, email]));
  });
});

describe('the operators\' reserved environment', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const reservedEnvironment = async () => {
    await givenOperator(t);
    return t.db.selectFrom('environments').select(['id', 'frontend_host']).where('reserved', '=', 'operators').executeTakeFirstOrThrow();
  };

  it('is not listed, read, changed, given keys or read for mail on the admin API: 404 as a missing one', async () => {
    const reserved = await reservedEnvironment();
    expect((await t.admin.get('/environments')).json().items.map((e: { id: string }) => e.id)).not.toContain(reserved.id);
    expectProblem(await t.admin.get(`/environments/${reserved.id}`), 404, 'resource_not_found');
    expectProblem(await t.admin.patch(`/environments/${reserved.id}`, { settings: { lockout: { maxFailedAttempts: 1000 } } }), 404, 'resource_not_found');
    expectProblem(await t.admin.post(`/environments/${reserved.id}/secret-keys`), 404, 'resource_not_found');
    expectProblem(await t.admin.get(`/environments/${reserved.id}/outbox`), 404, 'resource_not_found');
    expectProblem(await t.admin.get(`/environments/${reserved.id}/signing-keys`), 404, 'resource_not_found');
    expect(await t.db.selectFrom('secret_keys').select('id').where('environment_id', '=', reserved.id).execute()).toEqual([]);
  });

  it('serves no frontend host: its host is 404 on the client plane, so end-user sign-up cannot make an operator', async () => {
    const reserved = await reservedEnvironment();
    expect(reserved.frontend_host).toBe('operators.gatehouse.invalid');
    const res = await t.app.inject({ method: 'POST', url: '/_svc/auth/sign-up', headers: { host: reserved.frontend_host }, payload: { email: operatorEmail(), password: 'a long enough password' } });
    expectProblem(res, 404, 'resource_not_found');
  });
});

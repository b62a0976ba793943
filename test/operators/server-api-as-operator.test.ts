import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { asDashboard, expectProblem, OPERATOR_COOKIE, signedInOperator } from './support.js';

describe('the Server API with an operator session and the Gatehouse-Environment header', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const asOperator = (cookie: string, environmentId: string | undefined, method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) =>
    asDashboard(t, method, `/api/server/v1${path}`, { cookie, body, headers: environmentId === undefined ? {} : { 'gatehouse-environment': environmentId } });

  it('acts in whichever environment the header names, and only there', async () => {
    const operator = await signedInOperator(t);
    const [a, b] = [await t.given.environment(), await t.given.environment()];
    const inA = await t.given.user(a, { email: 'only-in-a@example.com' });
    const inB = await t.given.user(b, { email: 'only-in-b@example.com' });
    const listA = await asOperator(operator.cookie, a.id, 'GET', '/users');
    expect(listA.statusCode, listA.body).toBe(200);
    expect(listA.json().items.map((u: { id: string }) => u.id)).toEqual([inA.id]);
    expect((await asOperator(operator.cookie, b.id, 'GET', '/users')).json().items.map((u: { id: string }) => u.id)).toEqual([inB.id]);
    expectProblem(await asOperator(operator.cookie, a.id, 'GET', `/users/${inB.id}`), 404, 'user_not_found');
  });

  it('answers 400 environment_required without the header, and 404 for an unknown, malformed or reserved environment', async () => {
    const operator = await signedInOperator(t);
    expectProblem(await asOperator(operator.cookie, undefined, 'GET', '/users'), 400, 'environment_required');
    expectProblem(await asOperator(operator.cookie, '0190f0f0-0000-7000-8000-000000000000', 'GET', '/users'), 404, 'resource_not_found');
    expectProblem(await asOperator(operator.cookie, 'env_nope', 'GET', '/users'), 404, 'resource_not_found');
    const reserved = await t.db.selectFrom('environments').select('id').where('reserved', '=', 'operators').executeTakeFirstOrThrow();
    expectProblem(await asOperator(operator.cookie, reserved.id, 'GET', '/users'), 404, 'resource_not_found');
  });

  it('refuses a revoked session (401) and a cookie change without the service\'s own Origin (403)', async () => {
    const operator = await signedInOperator(t);
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const crossSite = await t.app.inject({
      method: 'POST', url: `/api/server/v1/users/${user.id}/ban`,
      headers: { host: 'gatehouse.test', origin: 'https://evil.example', cookie: `${OPERATOR_COOKIE}=${operator.cookie}`, 'gatehouse-environment': env.id },
    });
    expectProblem(crossSite, 403, 'forbidden');
    expect((await t.server(env).get(`/users/${user.id}`)).json().status).toBe('active');
    await asDashboard(t, 'DELETE', '/api/admin/v1/operator-sessions/current', { cookie: operator.cookie });
    expectProblem(await asOperator(operator.cookie, env.id, 'GET', '/users'), 401, 'unauthenticated');
  });

  it('records the operator as the actor of what they change', async () => {
    const operator = await signedInOperator(t);
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const banned = await asOperator(operator.cookie, env.id, 'POST', `/users/${user.id}/ban`);
    expect(banned.statusCode, banned.body).toBe(200);
    const [event] = (await t.server(env).get(`/audit-events?action=user.banned&targetId=${user.id}`)).json().items;
    expect(event).toMatchObject({
      actor: { type: 'operator', id: operator.id, impersonatorId: null }, producer: { type: 'gatehouse', via: 'server_api' },
      targets: [{ type: 'user', id: user.id }],
    });
    const byActor = (await t.server(env).get(`/audit-events?actorId=${operator.id}`)).json().items;
    expect(byActor.map((e: { id: string }) => e.id)).toEqual([event.id]);
  });

  it('mints an impersonation link against the environment\'s shared quota, the mint naming the operator', async () => {
    const operator = await signedInOperator(t);
    const env = await t.given.environment();
    await t.server(env).put('/allowed-origins', { origins: ['https://app.example.com'] });
    const patched = await t.admin.patch(`/environments/${env.id}`, { settings: { impersonationLandingUrl: 'https://app.example.com/', plan: { impersonationQuotaPerMonth: 1 } } });
    expect(patched.statusCode, patched.body).toBe(200);
    const [support, target, other] = [await t.given.user(env), await t.given.user(env), await t.given.user(env)];
    const minted = await asOperator(operator.cookie, env.id, 'POST', `/users/${target.id}/impersonation-token`, { actorUserId: support.id, reason: 'ticket 42' });
    expect(minted.statusCode, minted.body).toBe(201);
    expect(minted.json().url).toMatch(new RegExp(`^http://${env.frontendHost}/_svc/auth/session/impersonate\\?token=imp_`));
    const usage = await asOperator(operator.cookie, env.id, 'GET', '/impersonations/usage');
    expect(usage.json()).toMatchObject({ used: 1, quota: 1, remaining: 0 });
    expectProblem(await t.server(env).post(`/users/${other.id}/impersonation-token`, { actorUserId: support.id, reason: 'ticket 43' }), 429, 'impersonation_quota_exhausted');
    const [event] = (await t.server(env).get('/audit-events?action=impersonation.created')).json().items;
    expect(event.metadata).toMatchObject({ reason: 'ticket 42', mintedBy: { type: 'operator', id: operator.id } });
  });

  it('does not append the customer\'s audit events: that takes the secret key (403)', async () => {
    const operator = await signedInOperator(t);
    const env = await t.given.environment();
    const res = await asDashboard(t, 'POST', '/api/server/v1/audit-events', {
      cookie: operator.cookie, headers: { 'gatehouse-environment': env.id, 'idempotency-key': 'k1' },
      body: { action: 'document.shared', result: 'success', schemaVersion: 1, occurredAt: t.clock.now().toISOString(), actor: { type: 'system' }, targets: [], metadata: {} },
    });
    expectProblem(res, 403, 'forbidden');
  });
});

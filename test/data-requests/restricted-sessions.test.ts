import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { givenCast, minted, redeem } from '../impersonation/support.js';
import { expectProblem, requested } from './support.js';

describe('data requests under impersonation', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({ jobsInBackground: false }, { ownDatabase: true }); });
  afterAll(() => t.close());

  it('answers 403 impersonation_restricted to an impersonated session requesting or cancelling, and lets it list', async () => {
    const cast = await givenCast(t);
    const own = await requested(t, cast.env, await t.given.session(cast.env, cast.target), 'erasure');
    const redeemed = await redeem(t, cast.env, (await minted(t, cast)).token);
    expect(redeemed.statusCode, redeemed.body).toBe(200);
    const support = t.client(cast.env, { token: redeemed.json().sessionToken });

    expectProblem(await support.post('/me/data-requests', { type: 'export' }), 403, 'impersonation_restricted');
    expectProblem(await support.post('/me/data-requests', { type: 'erasure' }), 403, 'impersonation_restricted');
    expectProblem(await support.post(`/me/data-requests/${own.id}/cancel`), 403, 'impersonation_restricted');
    const listed = await support.get('/me/data-requests');
    expect(listed.statusCode).toBe(200);
    expect(listed.json().items.map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([[own.id, 'scheduled']]);
  });
});

describe('data requests need recent authentication', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({ jobsInBackground: false }, { ownDatabase: true }); });
  afterAll(() => t.close());

  it('answers 403 reauthentication_required more than 10 minutes after the password sign-in, and accepts again after reauthenticate', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    t.clock.advance(10 * 60_000 + 1);
    const caller = t.client(env, { token: session.token });

    expectProblem(await caller.post('/me/data-requests', { type: 'erasure' }), 403, 'reauthentication_required');
    expectProblem(await caller.post('/me/data-requests', { type: 'export' }), 403, 'reauthentication_required');
    expect((await caller.get('/me/data-requests')).json().items).toEqual([]);
    const again = await caller.post('/me/reauthenticate', { password: user.password });
    expect(again.statusCode, again.body).toBe(204);
    expect((await caller.post('/me/data-requests', { type: 'export' })).statusCode).toBe(202);
  });
});

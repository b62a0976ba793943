import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { givenCast, minted, redeem } from '../impersonation/support.js';
import { expectProblem, requested } from './support.js';

describe('data requests under impersonation', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({ jobsInBackground: false }); });
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

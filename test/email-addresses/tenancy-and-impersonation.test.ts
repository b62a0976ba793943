import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { givenCast, minted, redeem } from '../impersonation/support.js';
import { added, expectProblem, latestCode, signedInUser, storedAddresses, verifiedAddress } from './support.js';

describe('email addresses across environments and under impersonation', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it("answers another environment's address exactly like a missing one (404 email_address_not_found) and changes nothing", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const other = await signedInUser(t, theirs, { email: 'other@example.com' });
    const foreign = await added(t, theirs, other.session, 'foreign@example.com');
    const [foreignPrimary] = (await other.me.get('/me/email-addresses')).json().items;
    const { me } = await signedInUser(t, mine);
    const code = await latestCode(t, theirs, 'foreign@example.com');
    const verify = expectProblem(await me.post(`/me/email-addresses/${foreign.id}/verify`, { code }), 404, 'email_address_not_found');
    const missing = expectProblem(await me.post('/me/email-addresses/01900000-0000-7000-8000-000000000000/verify', { code }), 404, 'email_address_not_found');
    expect(verify.detail).toBe(missing.detail);
    expectProblem(await me.post(`/me/email-addresses/${foreign.id}/make-primary`), 404, 'email_address_not_found');
    expectProblem(await me.delete(`/me/email-addresses/${foreign.id}`), 404, 'email_address_not_found');
    expectProblem(await me.delete(`/me/email-addresses/${foreignPrimary.id}`), 404, 'email_address_not_found');
    expect((await storedAddresses(t, theirs, other.user)).map((a) => [a.email, a.verified_at])).toEqual([['other@example.com', expect.any(Date)], ['foreign@example.com', null]]);
  });

  it("lists only the environment's own rows, and the Server API answers another environment's user as missing (404 user_not_found)", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const other = await signedInUser(t, theirs, { email: 'same@example.com' });
    await verifiedAddress(t, theirs, other.session, 'same-work@example.com');
    const own = await signedInUser(t, mine, { email: 'same@example.com' });
    await verifiedAddress(t, mine, own.session, 'same-work@example.com');
    const items = (await own.me.get('/me/email-addresses')).json().items;
    expect(items.map((a: { email: string }) => a.email)).toEqual(['same@example.com', 'same-work@example.com']);
    expect((await t.server(mine).get(`/users/${own.user.id}/email-addresses`)).json().items).toEqual(items);
    const foreign = expectProblem(await t.server(mine).get(`/users/${other.user.id}/email-addresses`), 404, 'user_not_found');
    const missing = expectProblem(await t.server(mine).get('/users/01900000-0000-7000-8000-000000000000/email-addresses'), 404, 'user_not_found');
    expect(foreign.detail).toBe(missing.detail);
  });

  it('refuses an impersonated session every change with 403 impersonation_restricted; it still reads the list', async () => {
    const cast = await givenCast(t);
    const own = await t.given.session(cast.env, cast.target);
    const pending = await added(t, cast.env, own, 'pending@example.com');
    const proven = await verifiedAddress(t, cast.env, own, 'proven@example.com');
    const { token } = await minted(t, cast);
    const redeemed = await redeem(t, cast.env, token);
    expect(redeemed.statusCode, redeemed.body).toBe(200);
    const as = t.client(cast.env, { token: redeemed.json().sessionToken });
    const before = await storedAddresses(t, cast.env, cast.target);

    expectProblem(await as.post('/me/email-addresses', { email: 'operator@example.com' }), 403, 'impersonation_restricted');
    expectProblem(await as.post(`/me/email-addresses/${pending.id}/verify`, { code: '123456' }), 403, 'impersonation_restricted');
    expectProblem(await as.post(`/me/email-addresses/${proven.id}/make-primary`), 403, 'impersonation_restricted');
    expectProblem(await as.delete(`/me/email-addresses/${proven.id}`), 403, 'impersonation_restricted');

    expect(await storedAddresses(t, cast.env, cast.target)).toEqual(before);
    expect(await t.outbox(cast.env, 'operator@example.com')).toEqual([]);
    const listed = await as.get('/me/email-addresses');
    expect(listed.statusCode).toBe(200);
    expect(listed.json().items).toHaveLength(3);
  });

  it('answers 401 unauthenticated without a session', async () => {
    const env = await t.given.environment();
    expectProblem(await t.client(env).get('/me/email-addresses'), 401, 'unauthenticated');
    expectProblem(await t.client(env).post('/me/email-addresses', { email: 'x@example.com' }), 401, 'unauthenticated');
  });
});

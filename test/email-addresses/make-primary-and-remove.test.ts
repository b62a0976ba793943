import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { added, eventsOf, expectProblem, MISSING_ID, signedInUser, storedAddresses, storedUser, verifiedAddress } from './support.js';

describe('POST /_svc/me/email-addresses/{id}/make-primary and DELETE /_svc/me/email-addresses/{id}', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it("makes a verified address primary: the user's email and its verified time follow in the same change, in the trail", async () => {
    const env = await t.given.environment();
    const { user, session, me } = await signedInUser(t, env, { email: 'ada@example.com' });
    const old = (await me.get('/me/email-addresses')).json().items[0];
    const work = await verifiedAddress(t, env, session, 'ada@work.example.com');
    const verifiedAt = (await storedAddresses(t, env, user))[1]!.verified_at!;
    t.clock.advance(60_000);

    const res = await me.post(`/me/email-addresses/${work.id}/make-primary`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ...work, primary: true });
    const row = await storedUser(t, env, user);
    expect(row).toMatchObject({ email: 'ada@work.example.com', email_verified_at: verifiedAt, updated_at: t.clock.now() });
    expect((await t.server(env).get(`/users/${user.id}`)).json()).toMatchObject({ email: 'ada@work.example.com', emailVerifiedAt: verifiedAt.toISOString() });
    expect((await me.get('/me')).json().email).toBe('ada@work.example.com');
    expect((await me.get('/me/email-addresses')).json().items).toEqual([{ ...work, primary: true }, { ...old, primary: false }]);
    expect(await eventsOf(t, env, 'user.primary_email_changed')).toMatchObject([{
      actor_id: user.id, targets: [{ type: 'user', id: user.id }, { type: 'email_address', id: work.id }], metadata: { previousAddressId: old.id },
    }]);
  });

  it('answers 409 email_not_verified for an unverified address and changes nothing', async () => {
    const env = await t.given.environment();
    const { user, session, me } = await signedInUser(t, env, { email: 'ada@example.com' });
    const address = await added(t, env, session, 'unproven@example.com');
    expectProblem(await me.post(`/me/email-addresses/${address.id}/make-primary`), 409, 'email_not_verified');
    expect((await storedUser(t, env, user)).email).toBe('ada@example.com');
    expect((await storedAddresses(t, env, user)).map((a) => [a.email, a.is_primary])).toEqual([['ada@example.com', true], ['unproven@example.com', false]]);
  });

  it('answers the primary unchanged when it is made primary again, and records nothing', async () => {
    const env = await t.given.environment();
    const { me } = await signedInUser(t, env, { email: 'ada@example.com' });
    const [primary] = (await me.get('/me/email-addresses')).json().items;
    const res = await me.post(`/me/email-addresses/${primary.id}/make-primary`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(primary);
    expect(await eventsOf(t, env, 'user.primary_email_changed')).toEqual([]);
  });

  it('needs a recent sign-in: 403 reauthentication_required past 10 minutes, then works after reauthenticating', async () => {
    const env = await t.given.environment();
    const { user, session, me } = await signedInUser(t, env, { email: 'ada@example.com' });
    const work = await verifiedAddress(t, env, session, 'ada@work.example.com');
    t.clock.advance(11 * 60_000);
    expectProblem(await me.post(`/me/email-addresses/${work.id}/make-primary`), 403, 'reauthentication_required');
    expect((await storedUser(t, env, user)).email).toBe('ada@example.com');
    expect((await me.post('/me/reauthenticate', { password: PASSWORD })).statusCode).toBe(204);
    expect((await me.post(`/me/email-addresses/${work.id}/make-primary`)).statusCode).toBe(200);
    expect((await storedUser(t, env, user)).email).toBe('ada@work.example.com');
  });

  it('removes a secondary address, in the trail; its email is free for another user', async () => {
    const env = await t.given.environment();
    const { user, session, me } = await signedInUser(t, env);
    const extra = await verifiedAddress(t, env, session, 'extra@example.com');
    const res = await me.delete(`/me/email-addresses/${extra.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(await storedAddresses(t, env, user)).toHaveLength(1);
    expect(await eventsOf(t, env, 'user.email_address_removed')).toMatchObject([{
      actor_id: user.id, targets: [{ type: 'user', id: user.id }, { type: 'email_address', id: extra.id }], metadata: { wasVerified: true },
    }]);
    const other = await signedInUser(t, env);
    await verifiedAddress(t, env, other.session, 'extra@example.com');
    expectProblem(await me.delete(`/me/email-addresses/${extra.id}`), 404, 'email_address_not_found');
  });

  it('never removes the primary: 409 primary_email, also after the primary moved', async () => {
    const env = await t.given.environment();
    const { user, session, me } = await signedInUser(t, env, { email: 'ada@example.com' });
    const [first] = (await me.get('/me/email-addresses')).json().items;
    expectProblem(await me.delete(`/me/email-addresses/${first.id}`), 409, 'primary_email');
    const work = await verifiedAddress(t, env, session, 'ada@work.example.com');
    expect((await me.post(`/me/email-addresses/${work.id}/make-primary`)).statusCode).toBe(200);
    expectProblem(await me.delete(`/me/email-addresses/${work.id}`), 409, 'primary_email');
    expect((await me.delete(`/me/email-addresses/${first.id}`)).statusCode).toBe(204);
    expect((await storedAddresses(t, env, user)).map((a) => [a.email, a.is_primary])).toEqual([['ada@work.example.com', true]]);
  });

  it('answers 404 email_address_not_found for a missing address on every route', async () => {
    const env = await t.given.environment();
    const { me } = await signedInUser(t, env);
    expectProblem(await me.post(`/me/email-addresses/${MISSING_ID}/verify`, { code: '123456' }), 404, 'email_address_not_found');
    expectProblem(await me.post(`/me/email-addresses/${MISSING_ID}/make-primary`), 404, 'email_address_not_found');
    expectProblem(await me.delete(`/me/email-addresses/${MISSING_ID}`), 404, 'email_address_not_found');
  });
});

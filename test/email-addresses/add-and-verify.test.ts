import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { added, CODE_SUBJECT, eventsOf, expectProblem, latestCode, otherCode, signedInUser, storedAddresses, verifiedAddress } from './support.js';

describe('POST /_svc/me/email-addresses and /{id}/verify', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it("lists a new user's email as its one address, primary and verified as the user's email is", async () => {
    const env = await t.given.environment();
    const { user, me } = await signedInUser(t, env, { email: 'ada@example.com' });
    const res = await me.get('/me/email-addresses');
    expect(res.statusCode).toBe(200);
    const [primary] = (await storedAddresses(t, env, user));
    expect(res.json()).toEqual({ items: [{ id: primary!.id, email: 'ada@example.com', verified: true, primary: true, createdAt: expect.any(String) }] });
    expect(primary).toMatchObject({ user_id: user.id, email: 'ada@example.com', is_primary: true, released_at: null, code_hash: null });
  });

  it('adds an unverified address, lower-cased, and mails it a 6-digit code stored only as a hash, in the trail', async () => {
    const env = await t.given.environment();
    const { user, me } = await signedInUser(t, env, { email: 'ada@example.com' });
    const res = await me.post('/me/email-addresses', { email: 'Ada@Work.Example.com' });
    expect(res.statusCode, res.body).toBe(201);
    const address = res.json();
    expect(address).toEqual({ id: expect.any(String), email: 'ada@work.example.com', verified: false, primary: false, createdAt: t.clock.now().toISOString() });

    const code = await latestCode(t, env, 'ada@work.example.com');
    expect(code).toMatch(/^\d{6}$/);
    const [mail] = await t.outbox(env, 'ada@work.example.com');
    expect(mail!.text).toContain(code);
    const stored = (await storedAddresses(t, env, user))[1]!;
    expect(stored).toMatchObject({ id: address.id, email: 'ada@work.example.com', is_primary: false, verified_at: null, code_attempts: 0 });
    expect(stored.code_hash!.toString('hex')).not.toContain(code);
    expect(stored.code_hash!.length).toBe(32);
    expect(stored.code_expires_at!.getTime() - t.clock.now().getTime()).toBe(10 * 60_000);
    const [event] = await eventsOf(t, env, 'user.email_address_added');
    expect(event).toMatchObject({ actor_type: 'user', actor_id: user.id, targets: [{ type: 'user', id: user.id }, { type: 'email_address', id: address.id }] });
    expect(JSON.stringify(event)).not.toContain(code);
    const listed = (await me.get('/me/email-addresses')).json().items;
    expect(listed.map((a: { email: string; primary: boolean; verified: boolean }) => [a.email, a.primary, a.verified]))
      .toEqual([['ada@example.com', true, true], ['ada@work.example.com', false, false]]);
  });

  it('verifies the address with the mailed code, once, in the trail; the user keeps its primary email', async () => {
    const env = await t.given.environment();
    const { user, me } = await signedInUser(t, env, { email: 'ada@example.com' });
    const address = (await me.post('/me/email-addresses', { email: 'ada@work.example.com' })).json();
    const code = await latestCode(t, env, 'ada@work.example.com');
    t.clock.advance(60_000);

    const res = await me.post(`/me/email-addresses/${address.id}/verify`, { code });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ...address, verified: true });
    const stored = (await storedAddresses(t, env, user))[1]!;
    expect(stored).toMatchObject({ verified_at: t.clock.now(), code_hash: null, code_attempts: 0 });
    expect(await eventsOf(t, env, 'user.email_address_verified')).toMatchObject([{ actor_id: user.id, targets: [{ type: 'user', id: user.id }, { type: 'email_address', id: address.id }] }]);
    expect((await t.server(env).get(`/users/${user.id}`)).json().email).toBe('ada@example.com');

    const again = await me.post(`/me/email-addresses/${address.id}/verify`, { code: otherCode(code) });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ...address, verified: true });
    expect(await eventsOf(t, env, 'user.email_address_verified')).toHaveLength(1);
  });

  it('answers 400 invalid_code for a wrong code and counts it; the fifth wrong try burns the code', async () => {
    const env = await t.given.environment();
    const { user, session, me } = await signedInUser(t, env);
    const address = await added(t, env, session, 'second@example.com');
    const code = await latestCode(t, env, 'second@example.com');
    expectProblem(await me.post(`/me/email-addresses/${address.id}/verify`, { code: otherCode(code) }), 400, 'invalid_code');
    expect((await storedAddresses(t, env, user))[1]!.code_attempts).toBe(1);
    for (let i = 2; i <= 5; i++) expectProblem(await me.post(`/me/email-addresses/${address.id}/verify`, { code: otherCode(code, i) }), 400, 'invalid_code');
    expectProblem(await me.post(`/me/email-addresses/${address.id}/verify`, { code }), 400, 'invalid_code');
    expect((await storedAddresses(t, env, user))[1]).toMatchObject({ verified_at: null, code_attempts: 5 });
    expect(await eventsOf(t, env, 'user.email_address_verified')).toHaveLength(0);
  });

  it('refuses even the right code after 10 wrong tries by the user in a UTC day, across addresses', async () => {
    // Early in a UTC day, so the day's window cannot end during the test.
    t.clock.set(new Date(Math.ceil(t.clock.now().getTime() / 86_400_000) * 86_400_000 + 60_000));
    const env = await t.given.environment();
    const { session, me } = await signedInUser(t, env);
    for (const email of ['one@example.com', 'two@example.com']) {
      const address = await added(t, env, session, email);
      const code = await latestCode(t, env, email);
      for (let i = 1; i <= 5; i++) expectProblem(await me.post(`/me/email-addresses/${address.id}/verify`, { code: otherCode(code, i) }), 400, 'invalid_code');
    }
    const third = await added(t, env, session, 'three@example.com');
    const code = await latestCode(t, env, 'three@example.com');
    expectProblem(await me.post(`/me/email-addresses/${third.id}/verify`, { code }), 400, 'invalid_code');
    expect((await me.get('/me/email-addresses')).json().items.every((a: { primary: boolean; verified: boolean }) => a.primary || !a.verified)).toBe(true);
  });

  it('answers 400 invalid_code once the code is 10 minutes old', async () => {
    const env = await t.given.environment();
    const { session, me } = await signedInUser(t, env);
    const address = await added(t, env, session, 'late@example.com');
    const code = await latestCode(t, env, 'late@example.com');
    t.clock.advance(10 * 60_000);
    expectProblem(await me.post(`/me/email-addresses/${address.id}/verify`, { code }), 400, 'invalid_code');
  });

  it('refuses a malformed code with 400 invalid_request before looking at the address', async () => {
    const env = await t.given.environment();
    const { session, me } = await signedInUser(t, env);
    const address = await added(t, env, session, 'shape@example.com');
    expectProblem(await me.post(`/me/email-addresses/${address.id}/verify`, { code: '12345' }), 400, 'invalid_request');
    expectProblem(await me.post('/me/email-addresses', { email: 'not an email' }), 400, 'invalid_request');
  });

  it('answers 409 email_taken for an address the user already has, verified or not, in any case', async () => {
    const env = await t.given.environment();
    const { session, me } = await signedInUser(t, env, { email: 'ada@example.com' });
    expectProblem(await me.post('/me/email-addresses', { email: 'ADA@example.com' }), 409, 'email_taken');
    await added(t, env, session, 'second@example.com');
    expectProblem(await me.post('/me/email-addresses', { email: 'second@example.com' }), 409, 'email_taken');
    expect((await me.get('/me/email-addresses')).json().items).toHaveLength(2);
  });

  it("answers 409 email_taken for another user's verified address, and for another user's email", async () => {
    const env = await t.given.environment();
    const other = await signedInUser(t, env, { email: 'owner@example.com' });
    await verifiedAddress(t, env, other.session, 'owner-work@example.com');
    const { me } = await signedInUser(t, env);
    expectProblem(await me.post('/me/email-addresses', { email: 'owner-work@example.com' }), 409, 'email_taken');
    expectProblem(await me.post('/me/email-addresses', { email: 'owner@example.com' }), 409, 'email_taken');
    expect(await t.outbox(env, 'owner-work@example.com')).toHaveLength(1);
  });

  it('lets two users add the same unverified address; the first to verify it keeps it and the other gets 409 email_taken', async () => {
    const env = await t.given.environment();
    const [a, b] = [await signedInUser(t, env), await signedInUser(t, env)];
    const first = await added(t, env, a.session, 'shared@example.com');
    const codeA = await latestCode(t, env, 'shared@example.com');
    const second = await added(t, env, b.session, 'shared@example.com');
    const codeB = await latestCode(t, env, 'shared@example.com');
    expect((await b.me.post(`/me/email-addresses/${second.id}/verify`, { code: codeB })).statusCode).toBe(200);
    expectProblem(await a.me.post(`/me/email-addresses/${first.id}/verify`, { code: codeA }), 409, 'email_taken');
    expect((await storedAddresses(t, env, a.user))[1]).toMatchObject({ verified_at: null });
    expect((await a.me.get('/me/email-addresses')).json().items[1]).toMatchObject({ email: 'shared@example.com', verified: false });
  });

  it('lets exactly one of two users verifying the same address at once keep it; the other gets 409 email_taken', async () => {
    const env = await t.given.environment();
    const [a, b] = [await signedInUser(t, env), await signedInUser(t, env)];
    const first = await added(t, env, a.session, 'race@example.com');
    const codeA = await latestCode(t, env, 'race@example.com');
    const second = await added(t, env, b.session, 'race@example.com');
    const codeB = await latestCode(t, env, 'race@example.com');
    const answers = await Promise.all([
      a.me.post(`/me/email-addresses/${first.id}/verify`, { code: codeA }),
      b.me.post(`/me/email-addresses/${second.id}/verify`, { code: codeB }),
    ]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expectProblem(answers.find((r) => r.statusCode === 409)!, 409, 'email_taken');
    const verified = await t.db.selectFrom('email_addresses').select('user_id').where('environment_id', '=', env.id)
      .where('email', '=', 'race@example.com').where('verified_at', 'is not', null).execute();
    expect(verified).toHaveLength(1);
  });

  it("lets a user add an address that is another user's unverified sign-up email, but not verify it (409 email_taken)", async () => {
    const env = await t.given.environment({ emailVerificationRequired: true, enumerationProtection: false });
    const signUp = await t.client(env).post('/auth/sign-up', { email: 'pending@example.com', password: 'correct horse battery staple' });
    expect(signUp.statusCode, signUp.body).toBe(201);
    const { session, me } = await signedInUser(t, env);
    const address = await added(t, env, session, 'pending@example.com');
    const code = await latestCode(t, env, 'pending@example.com');
    expectProblem(await me.post(`/me/email-addresses/${address.id}/verify`, { code }), 409, 'email_taken');
  });

  it('caps a user at 10 addresses with 409 email_address_limit, the primary included', async () => {
    const env = await t.given.environment();
    const { user, session, me } = await signedInUser(t, env);
    for (let i = 1; i <= 9; i++) await added(t, env, session, `extra-${i}@example.com`);
    const res = expectProblem(await me.post('/me/email-addresses', { email: 'eleventh@example.com' }), 409, 'email_address_limit');
    expect(res.properties.max).toBe(10);
    expect(await storedAddresses(t, env, user)).toHaveLength(10);
    expect(await t.outbox(env, 'eleventh@example.com')).toEqual([]);
  });

  it('answers 429 rate_limited past 10 codes an hour for one user, with Retry-After', async () => {
    const env = await t.given.environment();
    const { session, me } = await signedInUser(t, env);
    for (let i = 1; i <= 10; i++) {
      const address = await added(t, env, session, `churn-${i}@example.com`);
      expect((await me.delete(`/me/email-addresses/${address.id}`)).statusCode).toBe(204);
    }
    const refused = await me.post('/me/email-addresses', { email: 'one-more@example.com' });
    expectProblem(refused, 429, 'rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await t.outbox(env, 'one-more@example.com')).toEqual([]);
    t.clock.advance(3600_000);
    expect((await me.post('/me/email-addresses', { email: 'one-more@example.com' })).statusCode).toBe(201);
  });

  it('answers 404 email_address_not_found for an address that is not the user\'s', async () => {
    const env = await t.given.environment();
    const other = await signedInUser(t, env);
    const theirs = await added(t, env, other.session, 'theirs@example.com');
    const { me } = await signedInUser(t, env);
    expectProblem(await me.post(`/me/email-addresses/${theirs.id}/verify`, { code: await latestCode(t, env, 'theirs@example.com') }), 404, 'email_address_not_found');
    expect((await storedAddresses(t, env, other.user))[1]).toMatchObject({ verified_at: null, code_attempts: 0 });
  });

  it('mails the code with the subject a client can rely on', async () => {
    const env = await t.given.environment();
    const { session } = await signedInUser(t, env);
    await added(t, env, session, 'subject@example.com');
    const [mail] = await t.outbox(env, 'subject@example.com');
    expect(mail!.subject).toMatch(CODE_SUBJECT);
  });
});

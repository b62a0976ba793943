import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { invite, invitingEnvironment } from '../invitations/support.js';
import { added, expectProblem, signedInUser, storedAddresses, storedUser, verifiedAddress } from './support.js';

describe("a user's primary address follows users.email", () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('gives a user created without an email no address, and one once the Server API sets an email', async () => {
    const env = await t.given.environment({ requiredFields: [] });
    const user = await t.given.user(env, { email: undefined });
    expect((await t.server(env).get(`/users/${user.id}/email-addresses`)).json()).toEqual({ items: [] });
    expect((await t.server(env).patch(`/users/${user.id}`, { email: 'Late@Example.com' })).statusCode).toBe(200);
    const [primary] = await storedAddresses(t, env, user);
    expect(primary).toMatchObject({ email: 'late@example.com', is_primary: true, verified_at: (await storedUser(t, env, user)).email_verified_at });
  });

  it('changes the primary address in place when the Server API changes the email; the old email is no longer an address', async () => {
    const env = await t.given.environment();
    const { user, me } = await signedInUser(t, env, { email: 'ada@example.com' });
    const [before] = (await me.get('/me/email-addresses')).json().items;
    t.clock.advance(1000);
    expect((await t.server(env).patch(`/users/${user.id}`, { email: 'ada@new.example.com' })).statusCode).toBe(200);
    expect((await me.get('/me/email-addresses')).json().items).toEqual([{ ...before, email: 'ada@new.example.com', verified: true }]);
    expect((await storedAddresses(t, env, user))[0]!.verified_at).toEqual(t.clock.now());
  });

  it("absorbs the user's own secondary address when the Server API makes it the email", async () => {
    const env = await t.given.environment();
    const { user, session } = await signedInUser(t, env, { email: 'ada@example.com' });
    await added(t, env, session, 'ada@work.example.com');
    expect((await t.server(env).patch(`/users/${user.id}`, { email: 'ada@work.example.com' })).statusCode).toBe(200);
    expect((await storedAddresses(t, env, user)).map((a) => [a.email, a.is_primary, a.verified_at !== null])).toEqual([['ada@work.example.com', true, true]]);
  });

  it("answers 409 email_taken when the Server API creates or changes a user to another user's verified address, and stores nothing", async () => {
    const env = await t.given.environment();
    const owner = await signedInUser(t, env, { email: 'owner@example.com' });
    await verifiedAddress(t, env, owner.session, 'owner-work@example.com');
    expectProblem(await t.server(env).post('/users', { email: 'owner-work@example.com' }), 409, 'email_taken');
    const other = await t.given.user(env, { email: 'other@example.com' });
    expectProblem(await t.server(env).patch(`/users/${other.id}`, { email: 'OWNER-WORK@example.com' }), 409, 'email_taken');
    expect((await storedUser(t, env, other)).email).toBe('other@example.com');
    expect((await storedAddresses(t, env, other)).map((a) => a.email)).toEqual(['other@example.com']);
    const users = await t.db.selectFrom('users').select('email').where('environment_id', '=', env.id).execute();
    expect(users.map((u) => u.email).sort()).toEqual(['other@example.com', 'owner@example.com']);
  });

  it("answers 409 email_taken to a sign-up with another user's verified address (without enumeration protection)", async () => {
    const env = await t.given.environment({ enumerationProtection: false, emailVerificationRequired: false });
    const owner = await signedInUser(t, env, { email: 'owner@example.com' });
    await verifiedAddress(t, env, owner.session, 'owner-work@example.com');
    expectProblem(await t.client(env).post('/auth/sign-up', { email: 'owner-work@example.com', password: PASSWORD }), 409, 'email_taken');
  });

  it("answers a sign-up with another user's verified address as a new pending one under enumeration protection, and tells the address", async () => {
    const env = await t.given.environment({ enumerationProtection: true, emailVerificationRequired: true });
    const owner = await signedInUser(t, env, { email: 'owner@example.com' });
    await verifiedAddress(t, env, owner.session, 'owner-work@example.com');
    const res = await t.client(env).post('/auth/sign-up', { email: 'owner-work@example.com', password: PASSWORD });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().user.registrationState).toBe('pending_email_verification');
    expect((await t.outbox(env, 'owner-work@example.com'))[0]!.subject).toBe('You already have an account');
    expect(await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).execute()).toHaveLength(1);
  });

  it('verifies the primary address when a sign-up is confirmed with its code', async () => {
    const env = await t.given.environment({ emailVerificationRequired: true });
    const signUp = await t.client(env).post('/auth/sign-up', { email: 'new@example.com', password: PASSWORD });
    const user = { id: signUp.json().user.id, email: 'new@example.com', password: PASSWORD };
    expect((await storedAddresses(t, env, user))[0]).toMatchObject({ email: 'new@example.com', is_primary: true, verified_at: null });
    const code = /(\d{6})/.exec((await t.outbox(env, 'new@example.com'))[0]!.subject)![1];
    expect((await t.client(env).post('/auth/verify-email', { email: 'new@example.com', code })).statusCode).toBe(200);
    expect((await storedAddresses(t, env, user))[0]!.verified_at).toEqual((await storedUser(t, env, user)).email_verified_at);
    expect((await storedAddresses(t, env, user))[0]!.verified_at).not.toBeNull();
  });

  it('gives an invited user its invitation email as a verified primary', async () => {
    const env = await invitingEnvironment(t);
    const { invitation, token } = await invite(t, env);
    const res = await t.client(env).post('/auth/invitation/password-signup?_is_native=true', { token, password: PASSWORD, legalConsentAccepted: true });
    expect(res.statusCode, res.body).toBe(201);
    const items = (await t.server(env).get(`/users/${res.json().user.id}/email-addresses`)).json().items;
    expect(items).toEqual([{ id: expect.any(String), email: invitation.email, verified: true, primary: true, createdAt: expect.any(String) }]);
  });

  it("frees a deleted user's verified addresses for a new user, and keeps listing them for the Server API", async () => {
    const env = await t.given.environment();
    const gone = await signedInUser(t, env, { email: 'gone@example.com' });
    await verifiedAddress(t, env, gone.session, 'gone-work@example.com');
    expect((await t.server(env).delete(`/users/${gone.user.id}`)).statusCode).toBe(204);
    expect((await storedAddresses(t, env, gone.user)).every((a) => a.released_at !== null)).toBe(true);
    expect((await t.server(env).get(`/users/${gone.user.id}/email-addresses`)).json().items).toHaveLength(2);
    const next = await signedInUser(t, env, { email: 'gone@example.com' });
    await verifiedAddress(t, env, next.session, 'gone-work@example.com');
    expect((await t.server(env).post('/users', { email: 'gone-work@example.com' })).statusCode).toBe(409);
  });
});

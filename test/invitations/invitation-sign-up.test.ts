import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { DAY_MS, expectProblem, invite, invitingEnvironment, PASSWORD, storedInvitation } from './support.js';

describe('POST /_svc/auth/invitation/password-signup', () => {
  let t: TestApp;
  let env: TestEnv;
  beforeAll(async () => {
    t = await startTestApp();
    env = await invitingEnvironment(t);
  });
  afterAll(() => t.close());

  const signUp = (body: Record<string, unknown>, query = '?_is_native=true', target = env) =>
    t.client(target).post(`/auth/invitation/password-signup${query}`, { password: PASSWORD, legalConsentAccepted: true, ...body });
  const usersWithEmail = (email: string) =>
    t.db.selectFrom('users').selectAll().where('environment_id', '=', env.id).where('email', '=', email).execute();

  it('creates a verified user carrying the public metadata, accepts the invitation and answers 201 with a session', async () => {
    const { invitation, token } = await invite(t, env, { publicMetadata: { plan: 'pro', seats: [1, 2] }, privateMetadata: { crm: 'secret' } });
    const res = await signUp({ token, name: 'Ada Lovelace' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['session', 'sessionToken', 'user']);
    expect(body.user).toMatchObject({
      email: invitation.email, name: 'Ada Lovelace', status: 'active', registrationState: 'complete',
      emailVerifiedAt: t.clock.now().toISOString(), publicMetadata: { plan: 'pro', seats: [1, 2] }, unsafeMetadata: {},
    });
    expect(body.user).not.toHaveProperty('privateMetadata');
    expect(body.session).toMatchObject({ userId: body.user.id, actor: null });
    const [stored] = await usersWithEmail(invitation.email);
    expect(stored.private_metadata).toEqual({});
    expect(await storedInvitation(t, env, invitation.id)).toMatchObject({ status: 'ACCEPTED', accepted_at: t.clock.now(), accepted_user_id: body.user.id });
    expect((await t.server(env).get(`/invitations/${invitation.id}`)).json()).toMatchObject({ status: 'ACCEPTED', acceptedAt: t.clock.now().toISOString() });
    const me = await t.client(env, { token: body.sessionToken }).get('/me');
    expect(me.statusCode).toBe(200);
    expect(me.json().id).toBe(body.user.id);
  });

  it('sets an HttpOnly session cookie for browsers instead of returning the token', async () => {
    const { token } = await invite(t, env);
    const res = await signUp({ token }, '');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).not.toHaveProperty('sessionToken');
    const cookie = res.cookies.find((c) => c.name === '__session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect((await t.client(env, { cookie: cookie.value }).get('/me')).statusCode).toBe(200);
  });

  it('lets the new user sign in with the chosen password', async () => {
    const { invitation, token } = await invite(t, env);
    await signUp({ token });
    const res = await t.client(env).post('/auth/sign-in?_is_native=true', { email: invitation.email, password: PASSWORD });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('answers 409 invitation_already_accepted on a second use of the token', async () => {
    const { token } = await invite(t, env);
    expect((await signUp({ token })).statusCode).toBe(201);
    expectProblem(await signUp({ token }), 409, 'invitation_already_accepted');
  });

  it('lets a token work exactly once under 20 concurrent attempts', async () => {
    const { invitation, token } = await invite(t, env);
    const results = await Promise.all(Array.from({ length: 20 }, () => signUp({ token })));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, ...Array(19).fill(409)]);
    for (const res of results.filter((r) => r.statusCode === 409)) expectProblem(res, 409, 'invitation_already_accepted');
    expect(await usersWithEmail(invitation.email)).toHaveLength(1);
    const sessions = await t.db.selectFrom('sessions').select('id').where('environment_id', '=', env.id)
      .where('user_id', '=', (await usersWithEmail(invitation.email))[0].id).execute();
    expect(sessions).toHaveLength(1);
  });

  it('answers 410 invitation_revoked for a revoked invitation', async () => {
    const { invitation, token } = await invite(t, env);
    await t.server(env).post(`/invitations/${invitation.id}/revoke`);
    expectProblem(await signUp({ token }), 410, 'invitation_revoked');
    expect(await usersWithEmail(invitation.email)).toEqual([]);
  });

  it('answers 410 invitation_expired once expiresAt has passed, and not a moment before', async () => {
    const { invitation, token } = await invite(t, env, { expiresInDays: 1 });
    t.clock.advance(DAY_MS);
    expectProblem(await signUp({ token }), 410, 'invitation_expired');
    expect(await usersWithEmail(invitation.email)).toEqual([]);
    const other = await invite(t, env, { expiresInDays: 1 });
    t.clock.advance(DAY_MS - 1);
    expect((await signUp({ token: other.token })).statusCode).toBe(201);
  });

  it('answers 404 invitation_not_found for an unknown token, and for a token of another environment', async () => {
    expectProblem(await signUp({ token: 'inv_unknown' }), 404, 'invitation_not_found');
    const { token } = await invite(t, env);
    const other = await invitingEnvironment(t);
    expectProblem(await signUp({ token }, '?_is_native=true', other), 404, 'invitation_not_found');
  });

  it('refuses legalConsentAccepted false with 400 legal_consent_required and leaves the invitation pending', async () => {
    const { invitation, token } = await invite(t, env);
    expectProblem(await signUp({ token, legalConsentAccepted: false }), 400, 'legal_consent_required');
    expect((await storedInvitation(t, env, invitation.id)).status).toBe('PENDING');
  });

  it.each([
    ['missing legalConsentAccepted', { legalConsentAccepted: undefined }, '/body/legalConsentAccepted'],
    ['a string for legalConsentAccepted', { legalConsentAccepted: 'true' }, '/body/legalConsentAccepted'],
    ['a missing token', { token: undefined }, '/body/token'],
    ['a missing password', { password: undefined }, '/body/password'],
    ['an unknown field', { email: 'x@example.com' }, '/body/email'],
  ])('refuses %s with 400 naming the field', async (_case, override, path) => {
    const body = expectProblem(await signUp({ token: 'inv_x', ...override }), 400, 'invalid_request');
    expect(body.properties.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it.each([['too short', 'short'], ['common', 'password123'], ['the email itself', null]])(
    'refuses a %s password with 400 weak_password and leaves the invitation pending', async (_case, password) => {
      const { invitation, token } = await invite(t, env);
      expectProblem(await signUp({ token, password: password ?? invitation.email }), 400, 'weak_password');
      expect((await storedInvitation(t, env, invitation.id)).status).toBe('PENDING');
      expect((await signUp({ token })).statusCode).toBe(201);
    });

  it('answers 409 email_taken when the email got an account meanwhile, and leaves the invitation pending', async () => {
    const { invitation, token } = await invite(t, env);
    await t.given.user(env, { email: invitation.email });
    expectProblem(await signUp({ token }), 409, 'email_taken');
    expect((await storedInvitation(t, env, invitation.id)).status).toBe('PENDING');
  });

  it('requires a name when the environment requires one', async () => {
    const strict = await invitingEnvironment(t, { requiredFields: ['email', 'name'] });
    const { token } = await invite(t, strict);
    expectProblem(await signUp({ token }, '?_is_native=true', strict), 400, 'name_required');
    expect((await signUp({ token, name: 'Grace Hopper' }, '?_is_native=true', strict)).statusCode).toBe(201);
  });

  it('answers 404 for a Host that is no environment', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/_svc/auth/invitation/password-signup', headers: { host: 'nowhere.localhost:3000' }, payload: { token: 'x', password: PASSWORD, legalConsentAccepted: true } });
    expect(res.statusCode).toBe(404);
  });
});

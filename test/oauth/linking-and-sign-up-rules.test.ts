import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { startScriptableProvider, type ScriptableProvider } from '../helpers/scriptable-provider.js';
import { callbackError, givenScriptedEnvironment, scriptedSignIn, sessionCookieOf, storedUsers } from './support.js';

let t: TestApp;
let fake: ScriptableProvider;
beforeAll(async () => { [t, fake] = await Promise.all([startTestApp(), startScriptableProvider()]); });
afterAll(async () => { await t?.close(); await fake?.close(); });
beforeEach(() => fake.reset());

const EMAIL = 'person@example.com';
const asProvider = (claims: Record<string, unknown>) => { fake.script.claims = { ...fake.script.claims, ...claims }; };
const meOf = async (env: Parameters<TestApp['client']>[0], res: Awaited<ReturnType<typeof scriptedSignIn>>) =>
  (await t.client(env, { cookie: sessionCookieOf(res) }).get('/me')).json();
const identitiesOf = (envId: string) => t.db.selectFrom('user_identities').selectAll().where('environment_id', '=', envId).execute();
const actions = async (envId: string) =>
  (await t.db.selectFrom('audit_events').select('action').where('environment_id', '=', envId).orderBy('sequence').execute()).map((e) => e.action);

describe('linking by verified email', () => {
  it('links the identity to the live user with the provider-verified email, keeping their password', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    const user = await t.given.user(env, { email: EMAIL });
    expect((await meOf(env, await scriptedSignIn(t, env))).id).toBe(user.id);
    expect(await identitiesOf(env.id)).toMatchObject([{ user_id: user.id, provider_id: 'acme', subject: 'subject-1', email_verified: true }]);
    expect((await t.given.session(env, user)).userId).toBe(user.id);
    expect(await actions(env.id)).toEqual(expect.arrayContaining(['user.identity_linked', 'user.signed_in']));
  });

  it('does not link when the environment turns linking off: the email is taken', async () => {
    const env = await givenScriptedEnvironment(t, fake, { settings: { oauthLinkVerifiedEmails: false } });
    await t.given.user(env, { email: EMAIL });
    expect(callbackError(await scriptedSignIn(t, env))).toBe('email_taken');
    expect(await identitiesOf(env.id)).toEqual([]);
    expect(await storedUsers(t, env)).toHaveLength(1);
  });

  it('does not link on an email the provider has not verified', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    await t.given.user(env, { email: EMAIL });
    asProvider({ email_verified: false });
    expect(callbackError(await scriptedSignIn(t, env))).toBe('email_taken');
    expect(await identitiesOf(env.id)).toEqual([]);
  });

  it('takes over a pending sign-up of the email only after removing its unproven password (pre-registration hijack)', async () => {
    const env = await givenScriptedEnvironment(t, fake, { settings: { emailVerificationRequired: true } });
    const signUp = await t.client(env).post('/auth/sign-up', { email: EMAIL, password: PASSWORD });
    expect(signUp.statusCode).toBe(201);
    const me = await meOf(env, await scriptedSignIn(t, env));
    expect(me).toMatchObject({ id: signUp.json().user.id, registrationState: 'complete' });
    expect(me.emailVerifiedAt).not.toBeNull();
    const [stored] = await storedUsers(t, env);
    expect(stored.password_hash).toBeNull();
    const attempt = await t.client(env).post('/auth/sign-in?_is_native=true', { email: EMAIL, password: PASSWORD });
    expect(attempt.statusCode).toBe(401);
    const proven = await t.db.selectFrom('audit_events').select('metadata').where('environment_id', '=', env.id).where('action', '=', 'user.email_verified').executeTakeFirstOrThrow();
    expect(proven.metadata).toEqual({ via: 'oauth', passwordRemoved: true, revokedSessions: 0 });
  });

  it('signs out every session of an account whose email was unproven when the provider proves it', async () => {
    const env = await givenScriptedEnvironment(t, fake, { settings: { emailVerificationRequired: false } });
    const signUp = await t.client(env).post('/auth/sign-up?_is_native=true', { email: EMAIL, password: PASSWORD });
    const squatter = signUp.json().sessionToken as string;
    expect((await t.client(env, { token: squatter }).get('/me')).statusCode).toBe(200);
    await meOf(env, await scriptedSignIn(t, env));
    expect((await t.client(env, { token: squatter }).get('/me')).statusCode).toBe(401);
  });
});

describe('new users', () => {
  it('creates a user whose email stays unverified when the provider does not vouch for it', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    asProvider({ email: 'Unverified@Example.com', email_verified: false });
    const me = await meOf(env, await scriptedSignIn(t, env));
    expect(me).toMatchObject({ email: 'unverified@example.com', emailVerifiedAt: null, registrationState: 'complete' });
  });

  it('refuses with email_required when the provider gives no email and the environment requires one', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    asProvider({ email: undefined, email_verified: undefined });
    fake.script.userInfo = { sub: 'subject-1' };
    expect(callbackError(await scriptedSignIn(t, env))).toBe('email_required');
    expect(await storedUsers(t, env)).toEqual([]);
  });

  it('refuses with email_invalid an email the API would refuse, whether or not the environment requires one, creating nobody', async () => {
    const required = await givenScriptedEnvironment(t, fake);
    const optional = await givenScriptedEnvironment(t, fake, { settings: { requiredFields: [] } });
    asProvider({ email: '"grace hopper"@example.com', email_verified: true });
    expect(callbackError(await scriptedSignIn(t, required))).toBe('email_invalid');
    expect(callbackError(await scriptedSignIn(t, optional))).toBe('email_invalid');
    expect([...await storedUsers(t, required), ...await storedUsers(t, optional)]).toEqual([]);
  });

  it('creates a user without an email when the environment does not require one', async () => {
    const env = await givenScriptedEnvironment(t, fake, { settings: { requiredFields: [] } });
    asProvider({ email: undefined, email_verified: undefined });
    fake.script.userInfo = { sub: 'subject-1' };
    expect(await meOf(env, await scriptedSignIn(t, env))).toMatchObject({ email: null, name: 'Grace Hopper' });
  });

  it('refuses with name_required when the environment requires a name and the provider gives none', async () => {
    const env = await givenScriptedEnvironment(t, fake, { settings: { requiredFields: ['email', 'name'] } });
    asProvider({ name: undefined, given_name: undefined, family_name: undefined });
    expect(callbackError(await scriptedSignIn(t, env))).toBe('name_required');
    expect(await storedUsers(t, env)).toEqual([]);
  });

  it('makes one user for ten concurrent callbacks of the same new subject, each with its own session', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    const results = await Promise.all(Array.from({ length: 10 }, () => scriptedSignIn(t, env)));
    const ids = await Promise.all(results.map(async (res) => (await meOf(env, res)).id));
    expect(new Set(ids).size).toBe(1);
    expect(await storedUsers(t, env)).toHaveLength(1);
    expect(await identitiesOf(env.id)).toHaveLength(1);
    const sessions = await t.db.selectFrom('sessions').select('id').where('environment_id', '=', env.id).execute();
    expect(sessions).toHaveLength(10);
  });
});

describe('users who may not sign in', () => {
  it('gives a banned user no session, whether found by identity or by email', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    const userId = (await meOf(env, await scriptedSignIn(t, env))).id;
    expect((await t.server(env).post(`/users/${userId}/ban`)).statusCode).toBe(200);
    const res = await scriptedSignIn(t, env);
    expect(callbackError(res)).toBe('user_banned');
    expect(res.cookies.find((c) => c.name === '__session')).toBeUndefined();

    const other = await givenScriptedEnvironment(t, fake);
    const banned = await t.given.user(other, { email: EMAIL });
    await t.server(other).post(`/users/${banned.id}/ban`);
    expect(callbackError(await scriptedSignIn(t, other))).toBe('user_banned');
    expect(await identitiesOf(other.id)).toEqual([]);
  });

  it('never signs in as a deleted user: the identity starts over with a new user', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    const first = (await meOf(env, await scriptedSignIn(t, env))).id;
    expect((await t.server(env).delete(`/users/${first}`)).statusCode).toBe(204);
    const second = (await meOf(env, await scriptedSignIn(t, env))).id;
    expect(second).not.toBe(first);
    expect(await identitiesOf(env.id)).toMatchObject([{ user_id: second }]);
  });
});

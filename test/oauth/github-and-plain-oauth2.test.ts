import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startScriptableProvider, type ScriptableProvider } from '../helpers/scriptable-provider.js';
import { callbackError, givenScriptedEnvironment, scriptedSignIn, sessionCookieOf, storedUsers } from './support.js';

let t: TestApp;
let fake: ScriptableProvider;
beforeAll(async () => { [t, fake] = await Promise.all([startTestApp(), startScriptableProvider()]); });
afterAll(async () => { await t?.close(); await fake?.close(); });
beforeEach(() => fake.reset());

/** The GitHub preset pointed at the GitHub-shaped server. */
const github = () => ({
  type: 'github', name: 'GitHub', authorizationUrl: `${fake.issuer}/login/oauth/authorize`,
  tokenUrl: `${fake.issuer}/login/oauth/access_token`, userInfoUrl: `${fake.issuer}/user`, issuer: undefined,
});

describe('GitHub (OAuth2 without an ID token)', () => {
  it('signs in with the profile and the primary verified email from the API, the numeric id as subject', async () => {
    const env = await givenScriptedEnvironment(t, fake, { providerId: 'github', provider: github() });
    fake.script.issParameter = false;
    const res = await scriptedSignIn(t, env, 'github');
    const me = (await t.client(env, { cookie: sessionCookieOf(res) }).get('/me')).json();
    expect(me).toMatchObject({ email: 'octo@example.com', name: 'Octo Cat', firstName: 'Octo', lastName: 'Cat' });
    expect(me.emailVerifiedAt).not.toBeNull();
    const identities = (await t.server(env).get(`/users/${me.id}/identities`)).json().items;
    expect(identities).toMatchObject([{ provider: 'github', subject: '4242', email: 'octo@example.com', emailVerified: true }]);
    // GitHub's scopes, PKCE, and no OpenID nonce.
    const sent = fake.authorizations[0];
    expect(sent.get('scope')).toBe('read:user user:email');
    expect(sent.get('code_challenge_method')).toBe('S256');
    expect(sent.get('nonce')).toBeNull();
    expect(fake.tokenRequests[0].get('client_secret')).toBe(fake.clientSecret);
  });

  it('counts no unverified address: without a verified one the environment\'s email requirement refuses', async () => {
    const env = await givenScriptedEnvironment(t, fake, { providerId: 'github', provider: github() });
    fake.script.issParameter = false;
    fake.script.github.emails = [{ email: 'octo@example.com', primary: true, verified: false }];
    expect(callbackError(await scriptedSignIn(t, env, 'github'))).toBe('email_required');
    expect(await storedUsers(t, env)).toEqual([]);
  });

  it('uses the login as the name when the profile has none', async () => {
    const env = await givenScriptedEnvironment(t, fake, { providerId: 'github', provider: github() });
    fake.script.issParameter = false;
    fake.script.github.user = { id: 7, login: 'octo', name: null, email: null };
    const me = (await t.client(env, { cookie: sessionCookieOf(await scriptedSignIn(t, env, 'github')) }).get('/me')).json();
    expect(me).toMatchObject({ name: 'octo', firstName: null, lastName: null });
  });
});

describe('a plain OAuth2 provider with explicit endpoints', () => {
  it('reads the user from the userinfo endpoint, `id` as the subject when there is no `sub`', async () => {
    const env = await givenScriptedEnvironment(t, fake, {
      providerId: 'corp',
      provider: { type: 'oauth2', name: 'Corp', authorizationUrl: `${fake.issuer}/authorize`, tokenUrl: `${fake.issuer}/login/oauth/access_token`, userInfoUrl: `${fake.issuer}/userinfo`, issuer: undefined, scopes: ['profile'] },
    });
    fake.script.issParameter = false;
    fake.script.userInfo = { id: 77, email: 'corp@example.com', email_verified: true, given_name: 'Corp', family_name: 'User' };
    const me = (await t.client(env, { cookie: sessionCookieOf(await scriptedSignIn(t, env, 'corp')) }).get('/me')).json();
    expect(me).toMatchObject({ email: 'corp@example.com', firstName: 'Corp', lastName: 'User', name: 'Corp User' });
    expect((await t.server(env).get(`/users/${me.id}/identities`)).json().items).toMatchObject([{ provider: 'corp', subject: '77' }]);
    expect(fake.authorizations[0].get('scope')).toBe('profile');
  });

  it('refuses a userinfo answer without a subject', async () => {
    const env = await givenScriptedEnvironment(t, fake, {
      providerId: 'corp',
      provider: { type: 'oauth2', name: 'Corp', authorizationUrl: `${fake.issuer}/authorize`, tokenUrl: `${fake.issuer}/login/oauth/access_token`, userInfoUrl: `${fake.issuer}/userinfo`, issuer: undefined },
    });
    fake.script.issParameter = false;
    fake.script.userInfo = { email: 'corp@example.com' };
    expect(callbackError(await scriptedSignIn(t, env, 'corp'))).toBe('invalid_response');
  });
});

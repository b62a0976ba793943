import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { freePort } from '../helpers/processes.js';
import { authorizeAt, startScriptableProvider, type ScriptableProvider } from '../helpers/scriptable-provider.js';
import {
  APP_ORIGIN, callback, callbackError, expectProblem, givenScriptedEnvironment, LANDING, scriptedSignIn, sessionCookieOf, startSignIn, storedUsers,
} from './support.js';

let t: TestApp;
let fake: ScriptableProvider;
beforeAll(async () => { [t, fake] = await Promise.all([startTestApp({ oauthTimeoutSeconds: 1 }), startScriptableProvider()]); });
afterAll(async () => { await t?.close(); await fake?.close(); });
beforeEach(() => fake.reset());

/** Signs in with the provider scripted as given and expects the browser back with the error, no user and no session. */
async function expectRefused(script: Partial<ScriptableProvider['script']>, code: string) {
  const env = await givenScriptedEnvironment(t, fake);
  Object.assign(fake.script, script);
  const res = await scriptedSignIn(t, env);
  expect(callbackError(res)).toBe(code);
  expect(res.cookies.find((c) => c.name === '__session')).toBeUndefined();
  expect(await storedUsers(t, env)).toEqual([]);
}

describe('the ID token is validated', () => {
  it('signs in when every check passes (the control for the refusals below)', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    sessionCookieOf(await scriptedSignIn(t, env));
    expect(await storedUsers(t, env)).toHaveLength(1);
  });
  it('refuses a token whose nonce is not the one sent', () => expectRefused({ tamper: (c) => ({ ...c, nonce: 'another-nonce' }) }, 'invalid_response'));
  it('refuses a token without a nonce', () => expectRefused({ tamper: ({ nonce: _nonce, ...c }) => c }, 'invalid_response'));
  it('refuses a token for another audience', () => expectRefused({ tamper: (c) => ({ ...c, aud: 'someone-else' }) }, 'invalid_response'));
  it('refuses a token from another issuer', () => expectRefused({ tamper: (c) => ({ ...c, iss: 'https://evil.example.net' }) }, 'invalid_response'));
  it('refuses an expired token', () => expectRefused({ tamper: (c) => ({ ...c, iat: 1_000, exp: 2_000 }) }, 'invalid_response'));
  it('refuses an unsigned token (alg none)', () => expectRefused({ signing: 'none' }, 'invalid_response'));
  it('refuses a token signed by a key the provider does not publish', () => expectRefused({ signing: 'foreign_key' }, 'invalid_response'));
});

describe('client authentication at the token endpoint', () => {
  it('sends the secret with client_secret_basic, the OpenID default, when the provider supports it', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    sessionCookieOf(await scriptedSignIn(t, env));
    expect(fake.tokenRequests[0].get('client_secret')).toBeNull();
  });

  it('sends it in the form to a provider that lists only client_secret_post', async () => {
    fake.script.tokenAuthMethods = ['client_secret_post'];
    const env = await givenScriptedEnvironment(t, fake);
    sessionCookieOf(await scriptedSignIn(t, env));
    expect(fake.tokenRequests[0].get('client_secret')).toBe(fake.clientSecret);
  });
});

describe('mix-up (RFC 9207)', () => {
  it('refuses an authorization response whose iss names another issuer', () => expectRefused({ issOverride: 'https://other-idp.example.net' }, 'invalid_response'));

  it('refuses a response without iss from a provider that announces it', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    const started = await startSignIn(t, env, { providerId: 'acme' });
    const back = await authorizeAt(started.authorizationUrl);
    back.searchParams.delete('iss');
    expect(callbackError(await callback(t, env, back, started.browserCookie))).toBe('invalid_response');
    expect(fake.tokenRequests).toHaveLength(0);
  });
});

describe('PKCE', () => {
  it('sends the verifier of the S256 challenge with the code exchange', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    sessionCookieOf(await scriptedSignIn(t, env));
    const challenge = fake.authorizations[0].get('code_challenge');
    const verifier = fake.tokenRequests[0].get('code_verifier')!;
    const { createHash } = await import('node:crypto');
    expect(createHash('sha256').update(verifier).digest('base64url')).toBe(challenge);
  });

  it('refuses a code injected from another authorization: the verifier does not match its challenge', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    const victim = await startSignIn(t, env, { providerId: 'acme' });
    const attacker = await startSignIn(t, env, { providerId: 'acme' });
    const victimBack = await authorizeAt(victim.authorizationUrl);
    const attackerBack = await authorizeAt(attacker.authorizationUrl);
    victimBack.searchParams.set('code', attackerBack.searchParams.get('code')!);
    expect(callbackError(await callback(t, env, victimBack, victim.browserCookie))).toBe('provider_error');
    expect(await storedUsers(t, env)).toEqual([]);
  });
});

describe('state', () => {
  it('works once: a replayed callback is refused and its code never reaches the provider again', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    const started = await startSignIn(t, env, { providerId: 'acme' });
    const back = await authorizeAt(started.authorizationUrl);
    sessionCookieOf(await callback(t, env, back, started.browserCookie));
    expectProblem(await callback(t, env, back, started.browserCookie), 400, 'invalid_state');
    expect(fake.tokenRequests).toHaveLength(1);
  });

  it('is bound to the browser that started it: without its cookie, or with another browser\'s, the browser goes back with state_mismatch', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    const other = await startSignIn(t, env, { providerId: 'acme' });
    for (const cookie of [undefined, other.browserCookie]) {
      const started = await startSignIn(t, env, { providerId: 'acme' });
      const back = await authorizeAt(started.authorizationUrl);
      expect(callbackError(await callback(t, env, back, cookie))).toBe('state_mismatch');
      // Used up by the failed try: the right browser cannot finish it afterwards either.
      expectProblem(await callback(t, env, back, started.browserCookie), 400, 'invalid_state');
    }
    expect(fake.tokenRequests).toHaveLength(0);
    expect(await storedUsers(t, env)).toEqual([]);
  });

  it('belongs to the provider it was started for', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    const put = await t.admin.put(`/environments/${env.id}/oauth-providers/other`, { type: 'oidc', name: 'Other', clientId: fake.clientId, clientSecret: fake.clientSecret, issuer: fake.issuer });
    expect(put.statusCode).toBe(201);
    const started = await startSignIn(t, env, { providerId: 'acme' });
    const back = await authorizeAt(started.authorizationUrl);
    back.pathname = back.pathname.replace('/acme/', '/other/');
    expect(callbackError(await callback(t, env, back, started.browserCookie))).toBe('state_mismatch');
  });

  it('answers 400 invalid_state, with no redirect, for a missing, unknown, expired or other environment\'s state', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    const otherEnv = await givenScriptedEnvironment(t, fake);
    expectProblem(await t.client(env).get('/auth/oauth2/acme/callback?code=x'), 400, 'invalid_state');
    expectProblem(await t.client(env).get('/auth/oauth2/acme/callback?code=x&state=made-up'), 400, 'invalid_state');
    const foreign = await startSignIn(t, otherEnv, { providerId: 'acme' });
    const foreignBack = await authorizeAt(foreign.authorizationUrl);
    expectProblem(await callback(t, env, foreignBack, foreign.browserCookie), 400, 'invalid_state');
    const started = await startSignIn(t, env, { providerId: 'acme' });
    const back = await authorizeAt(started.authorizationUrl);
    t.clock.advance(601_000);
    expectProblem(await callback(t, env, back, started.browserCookie), 400, 'invalid_state');
  });
});

describe('open redirects', () => {
  const refused = [
    'https://evil.example.net/after', '//evil.example.net/after', 'javascript:alert(1)', `${APP_ORIGIN}.evil.net/after`,
    `https://app.example.com@evil.example.net/`, 'http://app.example.com/after', '/relative/path', 'data:text/html,hi',
    // Allowed once parsed, but not as written: the Location header back from the provider could not carry them.
    `${APP_ORIGIN}/after\r\nSet-Cookie: x=1`, `${APP_ORIGIN.replace('app', 'ａｐｐ')}/after`,
  ];
  it.each(refused)('refuses %s at authorize, before anything is stored', async (redirectUrl) => {
    const env = await givenScriptedEnvironment(t, fake);
    expectProblem(await t.client(env).get(`/auth/oauth2/acme/authorize?redirect_url=${encodeURIComponent(redirectUrl)}`), 400, 'redirect_url_not_allowed');
    expect(await t.db.selectFrom('oauth_states').select('provider_id').where('environment_id', '=', env.id).execute()).toEqual([]);
  });

  it('answers 400 invalid_request without a redirect_url', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    expectProblem(await t.client(env).get('/auth/oauth2/acme/authorize'), 400, 'invalid_request');
  });
});

describe('the provider fails', () => {
  it('a 5xx from the token endpoint sends the browser back with provider_unavailable and makes no user', () =>
    expectRefused({ tokenFailure: 503 }, 'provider_unavailable'));

  it('a token endpoint that never answers times out into provider_unavailable and makes no user', () =>
    expectRefused({ tokenFailure: 'hang' }, 'provider_unavailable'));

  it('a provider that is down at authorize sends the browser straight back with provider_unavailable', async () => {
    const port = await freePort();
    const env = await givenScriptedEnvironment(t, fake, { provider: { issuer: `http://127.0.0.1:${port}` } });
    const res = await t.client(env).get(`/auth/oauth2/acme/authorize?redirect_url=${encodeURIComponent(LANDING)}`);
    expect(callbackError(res)).toBe('provider_unavailable');
    expect(await t.db.selectFrom('oauth_states').select('provider_id').where('environment_id', '=', env.id).execute()).toEqual([]);
  });

  it('an unknown or disabled provider sends the browser back with provider_not_found', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    expect(callbackError(await t.client(env).get(`/auth/oauth2/nobody/authorize?redirect_url=${encodeURIComponent(LANDING)}`))).toBe('provider_not_found');
    const started = await startSignIn(t, env, { providerId: 'acme' });
    const back = await authorizeAt(started.authorizationUrl);
    const disable = await t.admin.put(`/environments/${env.id}/oauth-providers/acme`, { type: 'oidc', name: 'Acme', clientId: fake.clientId, issuer: fake.issuer, enabled: false });
    expect(disable.statusCode).toBe(200);
    expect(callbackError(await t.client(env).get(`/auth/oauth2/acme/authorize?redirect_url=${encodeURIComponent(LANDING)}`))).toBe('provider_not_found');
    expect(callbackError(await callback(t, env, back, started.browserCookie))).toBe('provider_not_found');
    expect(fake.tokenRequests).toHaveLength(0);
  });
});

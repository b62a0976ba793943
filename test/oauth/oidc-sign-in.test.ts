import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startOpenIdProvider, type OpenIdProvider } from '../helpers/openid-provider.js';
import { callbackError, callbackUri, givenOidcEnvironment, LANDING, sessionCookieOf, signInWithProvider, startSignIn } from './support.js';

let t: TestApp;
let op: OpenIdProvider;
beforeAll(async () => { [t, op] = await Promise.all([startTestApp(), startOpenIdProvider()]); });
afterAll(async () => { await t?.close(); await op?.stop(); });

const account = (overrides: Record<string, unknown> = {}) => {
  const sub = `sub-${randomUUID()}`;
  return { sub, email: `${sub}@example.com`, email_verified: true, given_name: 'Ada', family_name: 'Lovelace', name: 'Ada Lovelace', ...overrides };
};

describe('GET /_svc/auth/oauth2/{provider}/authorize', () => {
  it('redirects to the provider with a state, PKCE S256, a nonce, the registered callback and the OpenID scopes', async () => {
    const env = await givenOidcEnvironment(t, op);
    const { authorizationUrl, browserCookie } = await startSignIn(t, env);
    const params = authorizationUrl.searchParams;
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${op.issuer}/auth`);
    expect(params.get('response_type')).toBe('code');
    expect(params.get('redirect_uri')).toBe(callbackUri(env));
    expect(params.get('scope')).toBe('openid email profile');
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(params.get('state')).toMatch(/^[\w-]{43}$/);
    expect(params.get('nonce')).toMatch(/^[\w-]{43}$/);
    expect(browserCookie).toMatch(/^[\w-]{43}$/);
    const [row] = await t.db.selectFrom('oauth_states').selectAll().where('environment_id', '=', env.id).execute();
    expect(row).toMatchObject({ provider_id: 'idp', redirect_url: LANDING, used_at: null });
    // Only hashes and sealed values are stored: neither the state, the browser token, the verifier nor the nonce in clear.
    expect(row.state_hash).not.toEqual(Buffer.from(params.get('state')!));
    expect(row.secrets_sealed.toString('latin1')).not.toContain(params.get('nonce')!);
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(600_000);
  });

  it('sets the browser-binding cookie HttpOnly, SameSite=Lax, for the OAuth routes only, for ten minutes', async () => {
    const env = await givenOidcEnvironment(t, op);
    const res = await t.client(env).get(`/auth/oauth2/idp/authorize?redirect_url=${encodeURIComponent(LANDING)}`);
    const cookie = res.cookies.find((c) => c.name === '__oauth_browser')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: true, path: '/_svc/auth/oauth2/', maxAge: 600 });
  });
});

describe('GET /_svc/auth/oauth2/{provider}/callback', () => {
  it('creates a verified user for a new subject, links the identity, sets the session cookie and lands on the redirect URL', async () => {
    const env = await givenOidcEnvironment(t, op);
    const who = account();
    const res = await signInWithProvider(t, env, op, who);
    const cookie = sessionCookieOf(res);
    expect(res.headers.location).toBe(LANDING);
    const me = await t.client(env, { cookie }).get('/me');
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ email: who.email, firstName: 'Ada', lastName: 'Lovelace', name: 'Ada Lovelace', registrationState: 'complete', status: 'active' });
    expect(me.json().emailVerifiedAt).not.toBeNull();
    const identities = await t.server(env).get(`/users/${me.json().id}/identities`);
    expect(identities.statusCode).toBe(200);
    expect(identities.json().items).toEqual([{
      id: expect.any(String), provider: 'idp', subject: who.sub, email: who.email, emailVerified: true,
      createdAt: expect.any(String), lastSignInAt: expect.any(String),
    }]);
    const stored = await t.db.selectFrom('users').select(['password_hash']).where('environment_id', '=', env.id).where('id', '=', me.json().id).executeTakeFirstOrThrow();
    expect(stored.password_hash).toBeNull();
  });

  it('signs the same subject in again as the same user, without a second user or identity', async () => {
    const env = await givenOidcEnvironment(t, op);
    const who = account();
    const first = await t.client(env, { cookie: sessionCookieOf(await signInWithProvider(t, env, op, who)) }).get('/me');
    const second = await t.client(env, { cookie: sessionCookieOf(await signInWithProvider(t, env, op, who)) }).get('/me');
    expect(second.json().id).toBe(first.json().id);
    const users = await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).execute();
    expect(users).toHaveLength(1);
    const identities = await t.db.selectFrom('user_identities').selectAll().where('environment_id', '=', env.id).execute();
    expect(identities).toHaveLength(1);
  });

  it('reads the email from userinfo when the ID token carries only the subject', async () => {
    // oidc-provider puts scope claims in the ID token only when no access token is issued; here one is, so the email comes from userinfo.
    const env = await givenOidcEnvironment(t, op);
    const who = account();
    const me = await t.client(env, { cookie: sessionCookieOf(await signInWithProvider(t, env, op, who)) }).get('/me');
    expect(me.json().email).toBe(who.email);
  });

  it('records sign-up, identity link and sign-in in the trail, with the provider', async () => {
    const env = await givenOidcEnvironment(t, op);
    const cookie = sessionCookieOf(await signInWithProvider(t, env, op, account()));
    const userId = (await t.client(env, { cookie }).get('/me')).json().id;
    const events = await t.db.selectFrom('audit_events').select(['action', 'metadata', 'actor_id']).where('environment_id', '=', env.id)
      .where('action', 'in', ['user.signed_up', 'user.identity_linked', 'user.signed_in']).orderBy('sequence').execute();
    expect(events.map((e) => [e.action, e.metadata])).toEqual([
      ['user.signed_up', { method: 'oauth', provider: 'idp' }],
      ['user.identity_linked', { provider: 'idp' }],
      ['user.signed_in', { method: 'oauth', provider: 'idp' }],
    ]);
    expect(events.map((e) => e.actor_id)).toEqual([userId, userId, userId]);
  });

  it('starts a recently authenticated session, so a sensitive change needs no password (the account may have none)', async () => {
    const env = await givenOidcEnvironment(t, op);
    const cookie = sessionCookieOf(await signInWithProvider(t, env, op, account()));
    const [session] = await t.db.selectFrom('sessions').select('authenticated_at').where('environment_id', '=', env.id).execute();
    expect(session.authenticated_at).toEqual(t.clock.now());
    const deleted = await t.client(env, { cookie, origin: `http://${env.frontendHost}` }).delete('/me');
    expect(deleted.statusCode, deleted.body).toBe(204);
  });

  it('sends a provider refusal (access_denied) back to the redirect URL with the error, and uses the state up', async () => {
    const env = await givenOidcEnvironment(t, op);
    const started = await startSignIn(t, env);
    const state = started.authorizationUrl.searchParams.get('state')!;
    const res = await t.client(env).get(`/auth/oauth2/idp/callback?error=access_denied&state=${state}`, { headers: { cookie: `__oauth_browser=${started.browserCookie}` } });
    expect(callbackError(res)).toBe('access_denied');
    expect(new URL(res.headers.location as string).hash).toBe('#welcome');
    expect(res.cookies.find((c) => c.name === '__session')).toBeUndefined();
    expect(await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
  });

});

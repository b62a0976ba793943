import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import { loginAtProvider, type OpenIdProvider, type ProviderAccount } from '../helpers/openid-provider.js';
import { authorizeAt, type ScriptableProvider } from '../helpers/scriptable-provider.js';

export { expectProblem } from '../helpers/problem.js';

export const APP_ORIGIN = 'https://app.example.com';
export const LANDING = `${APP_ORIGIN}/after-sign-in#welcome`;
export const PROVIDER_ID = 'idp';

export const callbackUri = (env: TestEnv, providerId = PROVIDER_ID) => `http://${env.frontendHost}/_svc/auth/oauth2/${providerId}/callback`;

/** An environment whose app origin is allowed, with the OpenID provider configured as `idp` (registered there for this environment). */
export async function givenOidcEnvironment(t: TestApp, op: OpenIdProvider, settings: Record<string, unknown> = {}): Promise<TestEnv> {
  const env = await t.given.environment(settings);
  const origins = await t.server(env).put('/allowed-origins', { origins: [APP_ORIGIN] });
  expect(origins.statusCode, origins.body).toBe(200);
  const { clientId, clientSecret } = await op.register([callbackUri(env)]);
  const res = await t.admin.put(`/environments/${env.id}/oauth-providers/${PROVIDER_ID}`, { type: 'oidc', name: 'Test IdP', clientId, clientSecret, issuer: op.issuer });
  expect(res.statusCode, res.body).toBe(201);
  return env;
}

export interface StartedSignIn { authorizationUrl: URL; browserCookie: string }

/** GET authorize as a browser would: the provider's URL and the browser-binding cookie. */
export async function startSignIn(t: TestApp, env: TestEnv, { providerId = PROVIDER_ID, redirectUrl = LANDING } = {}): Promise<StartedSignIn> {
  const res = await t.client(env).get(`/auth/oauth2/${providerId}/authorize?redirect_url=${encodeURIComponent(redirectUrl)}`);
  expect(res.statusCode, res.body).toBe(302);
  const cookie = res.cookies.find((c) => c.name === '__oauth_browser');
  expect(cookie).toBeDefined();
  return { authorizationUrl: new URL(res.headers.location as string), browserCookie: cookie!.value };
}

/** The callback request the provider's redirect makes the browser send (with its binding cookie unless told otherwise). */
export const callback = (t: TestApp, env: TestEnv, url: URL, browserCookie: string | undefined) =>
  t.client(env).get(`${url.pathname.replace(/^\/_svc/, '')}${url.search}`, browserCookie === undefined ? {} : { headers: { cookie: `__oauth_browser=${browserCookie}` } });

/** The whole dance for the account at the provider; answers the callback's response. */
export async function signInWithProvider(t: TestApp, env: TestEnv, op: OpenIdProvider, account: ProviderAccount): Promise<LightMyRequestResponse> {
  await op.nextAccount(account);
  const started = await startSignIn(t, env);
  const back = await loginAtProvider(started.authorizationUrl.href);
  return callback(t, env, back, started.browserCookie);
}

/** The session cookie a successful callback set; fails the test otherwise. */
export function sessionCookieOf(res: LightMyRequestResponse): string {
  expect(res.statusCode, res.body).toBe(303);
  const cookie = res.cookies.find((c) => c.name === '__session');
  expect(cookie, `no session cookie; location ${String(res.headers.location)}`).toBeDefined();
  return cookie!.value;
}

/** The `error` code a failed callback sent the browser back with (and that it went to the landing URL). */
export function callbackError(res: LightMyRequestResponse): string | null {
  expect(res.statusCode, res.body).toBe(303);
  const location = new URL(res.headers.location as string);
  expect(location.origin + location.pathname).toBe(`${APP_ORIGIN}/after-sign-in`);
  return location.searchParams.get('error');
}

/** An environment with the scriptable provider configured as `providerId` (OpenID Connect unless told otherwise). */
export async function givenScriptedEnvironment(t: TestApp, fake: ScriptableProvider, { settings = {}, providerId = 'acme', provider = {} as Record<string, unknown> } = {}): Promise<TestEnv> {
  const env = await t.given.environment(settings);
  const origins = await t.server(env).put('/allowed-origins', { origins: [APP_ORIGIN] });
  expect(origins.statusCode, origins.body).toBe(200);
  const res = await t.admin.put(`/environments/${env.id}/oauth-providers/${providerId}`, {
    type: 'oidc', name: 'Acme', clientId: fake.clientId, clientSecret: fake.clientSecret, issuer: fake.issuer, ...provider,
  });
  expect(res.statusCode, res.body).toBe(201);
  return env;
}

/** The dance against the scriptable provider: authorize, the provider's redirect, the callback (with this browser's cookie). */
export async function scriptedSignIn(t: TestApp, env: TestEnv, providerId = 'acme') {
  const started = await startSignIn(t, env, { providerId });
  const back = await authorizeAt(started.authorizationUrl);
  return callback(t, env, back, started.browserCookie);
}

/** The environment's users as stored. */
export const storedUsers = (t: TestApp, env: TestEnv) =>
  t.db.selectFrom('users').selectAll().where('environment_id', '=', env.id).orderBy('id').execute();

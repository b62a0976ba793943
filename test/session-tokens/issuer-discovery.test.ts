import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { postEnvironmentOnOwnHost } from '../helpers/own-frontend-host.js';

describe('discovery and the JWKS at the issuer (the frontend URL)', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  /** An environment whose frontend host is the listening app, so its issuer URL is fetchable. */
  async function listeningEnvironment(settings: Record<string, unknown> = {}): Promise<TestEnv & { issuer: string }> {
    const created = (await postEnvironmentOnOwnHost(t, { name: `issuer-${Math.random().toString(36).slice(2, 8)}`, frontendHost: `localhost:${port}`, settings })).json();
    return { ...created, issuer: `http://localhost:${port}` };
  }
  const mintFor = async (env: TestEnv) => {
    const session = await t.given.session(env, await t.given.user(env));
    return (await t.client(env, { token: session.token }).post('/sessions/current/token')).json().token as string;
  };
  const root = (env: TestEnv, path: string) => t.app.inject({ method: 'GET', url: path, headers: { host: env.frontendHost } });

  it('lets openid-client discover the environment from its frontend URL, and jose verify a session JWT on the discovered jwks_uri', async () => {
    const env = await listeningEnvironment();
    const config = await oidc.discovery(new URL(env.issuer), 'my-backend', undefined, undefined, { execute: [oidc.allowInsecureRequests] });
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(env.issuer);
    const { payload } = await jwtVerify(await mintFor(env), createRemoteJWKSet(new URL(metadata.jwks_uri!)), { issuer: metadata.issuer, algorithms: ['ES256'] });
    expect(payload.iss).toBe(env.issuer);
  });

  it('serves the same bodies and caching headers at /.well-known/ as at /_svc/.well-known/', async () => {
    const env = await t.given.environment();
    for (const doc of ['jwks.json', 'openid-configuration']) {
      const [atRoot, underSvc] = [await root(env, `/.well-known/${doc}`), await root(env, `/_svc/.well-known/${doc}`)];
      expect(atRoot.statusCode, atRoot.body).toBe(200);
      expect(atRoot.json()).toEqual(underSvc.json());
      expect(atRoot.headers['cache-control']).toBe(doc === 'jwks.json' ? 'public, max-age=60' : 'public, max-age=300');
      expect(atRoot.headers['cache-control']).toBe(underSvc.headers['cache-control']);
    }
    expect((await root(env, '/.well-known/openid-configuration')).json().claims_supported).toEqual(expect.arrayContaining(['aud', 'org_id', 'org_role', 'org_slug']));
  });

  it('answers 404 resource_not_found at /.well-known/ on a host no environment serves', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json', headers: { host: 'nobody.localhost:3000' } });
    expectProblem(res, 404, 'resource_not_found');
  });
});

describe('the session.jwtAudience setting', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());
  const mint = async (env: TestEnv) => {
    const session = await t.given.session(env, await t.given.user(env));
    return decodeJwt((await t.client(env, { token: session.token }).post('/sessions/current/token')).json().token);
  };

  it('puts aud in the session JWTs when set, and leaves it out by default', async () => {
    expect(await mint(await t.given.environment({ session: { jwtAudience: 'https://api.example.com' } }))).toMatchObject({ aud: 'https://api.example.com' });
    expect(await mint(await t.given.environment())).not.toHaveProperty('aud');
  });

  it('is a non-empty string of at most 256 characters, or null (400 otherwise, nothing stored)', async () => {
    const env = await t.given.environment();
    for (const bad of ['', 'a'.repeat(257), 42, ['api']]) {
      const res = await t.admin.patch(`/environments/${env.id}`, { settings: { session: { jwtAudience: bad } } });
      const body = expectProblem(res, 400, 'invalid_request');
      expect(body.properties.errors).toEqual([expect.objectContaining({ path: '/body/settings/session/jwtAudience' })]);
    }
    expect((await t.admin.get(`/environments/${env.id}`)).json().settings.session.jwtAudience).toBeNull();
    const set = await t.admin.patch(`/environments/${env.id}`, { settings: { session: { jwtAudience: 'a'.repeat(256) } } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().settings.session.jwtAudience).toBe('a'.repeat(256));
    expect((await t.admin.patch(`/environments/${env.id}`, { settings: { session: { jwtAudience: null } } })).json().settings.session.jwtAudience).toBeNull();
  });
});

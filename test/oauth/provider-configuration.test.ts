import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { expectProblem } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(async () => { await t?.close(); });

const SECRET = 'very-secret-client-secret-value';
const path = (env: TestEnv, id = 'corp') => `/environments/${env.id}/oauth-providers/${id}`;
const oidc = { type: 'oidc', name: 'Corp SSO', clientId: 'client-1', clientSecret: SECRET, issuer: 'https://sso.example.com' };
const sealedSecret = (env: TestEnv, id = 'corp') =>
  t.db.selectFrom('oauth_providers').select('client_secret_sealed').where('environment_id', '=', env.id).where('id', '=', id).executeTakeFirstOrThrow()
    .then((r) => r.client_secret_sealed);

describe('PUT /api/admin/v1/environments/{id}/oauth-providers/{providerId}', () => {
  it('creates the provider (201) and answers it without its secret, with the callback URL to register', async () => {
    const env = await t.given.environment();
    const res = await t.admin.put(path(env), oidc);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: 'corp', type: 'oidc', name: 'Corp SSO', clientId: 'client-1', issuer: 'https://sso.example.com', authorizationUrl: null, tokenUrl: null,
      userInfoUrl: null, scopes: ['openid', 'email', 'profile'], enabled: true, callbackUrl: `http://${env.frontendHost}/_svc/auth/oauth2/corp/callback`,
      createdAt: expect.any(String), updatedAt: expect.any(String),
    });
    expect(res.body).not.toContain(SECRET);
    expect((await t.admin.get(path(env))).json()).toEqual(res.json());
    expect((await t.admin.get(`/environments/${env.id}/oauth-providers`)).json()).toEqual({ items: [res.json()] });
  });

  it('keeps the client secret sealed at rest', async () => {
    const env = await t.given.environment();
    await t.admin.put(path(env), oidc);
    const sealed = await sealedSecret(env);
    expect(sealed.toString('latin1')).not.toContain(SECRET);
    expect(sealed.length).toBeGreaterThan(SECRET.length);
  });

  it('replaces the provider (200), keeping the stored secret when none is sent and the first creation time', async () => {
    const env = await t.given.environment();
    const created = (await t.admin.put(path(env), oidc)).json();
    const before = await sealedSecret(env);
    t.clock.advance(1000);
    const { clientSecret: _secret, ...withoutSecret } = oidc;
    const res = await t.admin.put(path(env), { ...withoutSecret, name: 'Renamed', enabled: false, scopes: ['email'] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Renamed', enabled: false, scopes: ['openid', 'email'], createdAt: created.createdAt });
    expect(res.json().updatedAt).not.toBe(created.updatedAt);
    expect(await sealedSecret(env)).toEqual(before);
  });

  it('fills in the presets: Google and Microsoft issuers, GitHub endpoints and scopes', async () => {
    const env = await t.given.environment();
    const base = { name: 'x', clientId: 'c', clientSecret: 's' };
    expect((await t.admin.put(path(env, 'google'), { ...base, type: 'google' })).json()).toMatchObject({ issuer: null, scopes: ['openid', 'email', 'profile'] });
    expect((await t.admin.put(path(env, 'github'), { ...base, type: 'github' })).json()).toMatchObject({ scopes: ['read:user', 'user:email'] });
    const tenant = 'https://login.microsoftonline.com/1b2c3d4e-0000-0000-0000-000000000000/v2.0';
    expect((await t.admin.put(path(env, 'microsoft'), { ...base, type: 'microsoft', issuer: tenant })).json()).toMatchObject({ issuer: tenant });
  });

  it.each([
    [{ ...oidc, issuer: undefined }, '/body/issuer', 'is required for a provider of type oidc'],
    [{ ...oidc, type: 'oauth2', issuer: undefined, authorizationUrl: 'https://a.example.com/auth' }, '/body/tokenUrl', 'is required for a provider of type oauth2'],
    [{ ...oidc, issuer: 'http://sso.example.com' }, '/body/issuer', 'must use https (http only on a loopback host)'],
    [{ ...oidc, issuer: 'https://user:pw@sso.example.com' }, '/body/issuer', 'must not carry credentials or a fragment'],
    [{ ...oidc, issuer: 'not a url' }, '/body/issuer', 'must be an absolute URL'],
    [{ ...oidc, clientSecret: undefined }, '/body/clientSecret', 'is required when the provider is created'],
  ])('refuses an incomplete or unsafe configuration (%#) with 400 invalid_request naming the field, storing nothing', async (body, errorPath, message) => {
    const env = await t.given.environment();
    const problem = expectProblem(await t.admin.put(path(env), body), 400, 'invalid_request');
    expect(problem.properties.errors).toContainEqual({ path: errorPath, message });
    expect(await t.db.selectFrom('oauth_providers').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
  });

  it('refuses a provider id outside [a-z0-9_-], an unknown type and an unknown field', async () => {
    const env = await t.given.environment();
    expectProblem(await t.admin.put(path(env, 'Bad%20Id'), oidc), 400, 'invalid_request');
    expectProblem(await t.admin.put(path(env), { ...oidc, type: 'facebook' }), 400, 'invalid_request');
    expectProblem(await t.admin.put(path(env), { ...oidc, clientSecrett: 'x' }), 400, 'invalid_request');
  });

  it('answers 404 for an unknown environment, and needs the admin token', async () => {
    expectProblem(await t.admin.put(`/environments/${randomUUID()}/oauth-providers/corp`, oidc), 404, 'resource_not_found');
    const env = await t.given.environment();
    expectProblem(await t.app.inject({ method: 'PUT', url: `/api/admin/v1${path(env)}`, payload: oidc }), 401, 'unauthenticated');
  });

  it('records each change in the environment trail, never the secret', async () => {
    const env = await t.given.environment();
    await t.admin.put(path(env), oidc);
    await t.admin.delete(path(env));
    const events = await t.db.selectFrom('audit_events').select(['action', 'metadata', 'actor_type']).where('environment_id', '=', env.id)
      .where('action', 'like', 'oauth_provider.%').orderBy('sequence').execute();
    expect(events).toEqual([
      { action: 'oauth_provider.saved', actor_type: 'system', metadata: { type: 'oidc', enabled: true, created: true, secretChanged: true } },
      { action: 'oauth_provider.deleted', actor_type: 'system', metadata: {} },
    ]);
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });
});

describe('GET and DELETE /api/admin/v1/environments/{id}/oauth-providers/{providerId}', () => {
  it('deletes (204), then answers 404 on GET and on a second DELETE', async () => {
    const env = await t.given.environment();
    await t.admin.put(path(env), oidc);
    expect((await t.admin.delete(path(env))).statusCode).toBe(204);
    expectProblem(await t.admin.get(path(env)), 404, 'resource_not_found');
    expectProblem(await t.admin.delete(path(env)), 404, 'resource_not_found');
  });

  it("never shows another environment's provider", async () => {
    const [a, b] = [await t.given.environment(), await t.given.environment()];
    await t.admin.put(path(a), oidc);
    expectProblem(await t.admin.get(path(b)), 404, 'resource_not_found');
    expect((await t.admin.get(`/environments/${b.id}/oauth-providers`)).json()).toEqual({ items: [] });
  });
});

describe('GET /_svc/auth/oauth2/providers', () => {
  it("lists the host's enabled providers as {id, name, type} only, never secrets or client ids", async () => {
    const [env, other] = [await t.given.environment(), await t.given.environment()];
    await t.admin.put(path(env, 'corp'), oidc);
    await t.admin.put(path(env, 'github'), { type: 'github', name: 'GitHub', clientId: 'gh-client', clientSecret: SECRET });
    await t.admin.put(path(env, 'off'), { ...oidc, name: 'Disabled', enabled: false });
    await t.admin.put(path(other, 'elsewhere'), oidc);
    const res = await t.client(env).get('/auth/oauth2/providers');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ items: [{ id: 'corp', name: 'Corp SSO', type: 'oidc' }, { id: 'github', name: 'GitHub', type: 'github' }] });
    expect(res.body).not.toContain('client-1');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';

describe('GET /_svc/environment: the public configuration', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('answers what a sign-in UI draws itself from, cacheable for a minute, with no secret and no allowed origin', async () => {
    const env = await t.given.environment({ requiredFields: ['email', 'name'], passwordPolicy: { minLength: 12 }, selfDeletionEnabled: false }, 'public-config');
    await t.server(env).put('/allowed-origins', { origins: ['https://app.example.com'] });
    const put = await t.admin.put(`/environments/${env.id}/oauth-providers/acme`, {
      type: 'oidc', name: 'Acme SSO', clientId: 'client', clientSecret: 'a-secret-not-to-leak', issuer: 'https://sso.example.com',
    });
    expect(put.statusCode, put.body).toBe(201);
    await t.admin.put(`/environments/${env.id}/oauth-providers/off`, {
      type: 'github', name: 'GitHub', clientId: 'gh', clientSecret: 'another-secret', enabled: false,
    });

    const res = await t.client(env).get('/environment');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.json()).toEqual({
      name: 'public-config',
      signUp: { enabled: true, requiredFields: ['email', 'name'], emailVerificationRequired: true },
      passwordPolicy: { minLength: 12, maxLength: 256 },
      oauthProviders: [{ id: 'acme', name: 'Acme SSO', type: 'oidc' }],
      mfa: { policy: 'optional', factors: ['totp', 'backup_code'] },
      passkeys: { enabled: true },
      organizations: { selfServiceEnabled: true },
      selfDeletionEnabled: false,
      locales: ['en', 'da'],
    });
    for (const leak of ['a-secret-not-to-leak', 'app.example.com', 'client', env.id]) expect(res.body).not.toContain(leak);
  });

  it('follows a settings change at once, and answers 404 on a host no environment serves', async () => {
    const env = await t.given.environment();
    expect((await t.client(env).get('/environment')).json()).toMatchObject({ signUp: { emailVerificationRequired: true }, selfDeletionEnabled: true });
    await t.admin.patch(`/environments/${env.id}`, { settings: { emailVerificationRequired: false, selfDeletionEnabled: false } });
    expect((await t.client(env).get('/environment')).json()).toMatchObject({ signUp: { emailVerificationRequired: false }, selfDeletionEnabled: false });
    expectProblem(await t.app.inject({ method: 'GET', url: '/_svc/environment', headers: { host: 'nobody.example.com' } }), 404, 'resource_not_found');
  });
});

describe('GET /api/server/v1/allowed-origins/escape-hatch', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it("lists the frontend host's own origins, which a cookie-authenticated change may come from though the list is empty", async () => {
    const env = await t.given.environment();
    const res = await t.server(env).get('/allowed-origins/escape-hatch');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ origins: [`http://${env.frontendHost}`, `https://${env.frontendHost}`] });
    expect((await t.server(env).get('/allowed-origins')).json()).toEqual({ origins: [] });

    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    for (const origin of res.json().origins) {
      const change = await t.client(env, { cookie: session.token, origin }).patch('/me', { firstName: 'Same host' });
      expect(change.statusCode, origin).toBe(200);
    }
    expect((await t.client(env, { cookie: session.token, origin: 'https://elsewhere.example.com' }).patch('/me', { firstName: 'No' })).statusCode).toBe(403);
  });

  it("answers another environment's key with that environment's own origins only", async () => {
    const [a, b] = [await t.given.environment(), await t.given.environment()];
    expect((await t.server(b).get('/allowed-origins/escape-hatch')).json().origins.join()).not.toContain(a.frontendHost);
  });
});

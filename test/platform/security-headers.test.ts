import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_CSP, DOCS_CSP } from '../../src/platform/http/security-headers.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';

describe('security headers', () => {
  let t: TestApp;
  let env: TestEnv;
  beforeAll(async () => {
    t = await startTestApp();
    env = await t.given.environment({ emailVerificationRequired: false });
  });
  afterAll(() => t.close());

  /** The three headers every answer must carry, whatever produced it. */
  const secured = (res: LightMyRequestResponse) => ({
    nosniff: res.headers['x-content-type-options'], cacheControl: res.headers['cache-control'], csp: res.headers['content-security-policy'],
  });
  const API = { nosniff: 'nosniff', cacheControl: 'no-store', csp: API_CSP };

  it('marks the native sign-in answer, which carries the session token, no-store and nosniff', async () => {
    const user = await t.given.user(env);
    const res = await t.client(env).post('/auth/sign-in?_is_native=true', { email: user.email, password: user.password });
    expect(res.statusCode).toBe(200);
    expect(res.json().sessionToken).toMatch(/^sess_/);
    expect(secured(res)).toEqual(API);
  });

  it('marks the cookie sign-in answer, whose Set-Cookie carries the session token, no-store', async () => {
    const user = await t.given.user(env);
    const res = await t.client(env).post('/auth/sign-in', { email: user.email, password: user.password });
    expect(res.statusCode).toBe(200);
    expect(res.headers['set-cookie']).toMatch(/^__session=sess_/);
    expect(secured(res)).toEqual(API);
  });

  it('marks the admin answers that carry a secret key or mailed codes no-store', async () => {
    const created = await t.admin.post('/environments', { name: 'headers-admin' });
    expect(created.statusCode).toBe(201);
    expect(created.json().secretKey).toMatch(/^sk_/);
    expect(secured(created)).toEqual(API);

    const key = await t.admin.post(`/environments/${created.json().id}/secret-keys`);
    expect(key.statusCode).toBe(201);
    expect(secured(key)).toEqual(API);

    const verifying = await t.given.environment();
    expect((await t.client(verifying).post('/auth/sign-up', { email: 'mailed@example.com', password: PASSWORD })).statusCode).toBe(201);
    const outbox = await t.admin.get(`/environments/${verifying.id}/outbox?to=mailed%40example.com`);
    expect(outbox.statusCode).toBe(200);
    expect(outbox.json().items).toHaveLength(1);
    expect(secured(outbox)).toEqual(API);
  });

  it('marks Server API answers no-store, successes and problems alike', async () => {
    const user = await t.given.user(env);
    const found = await t.server(env).get(`/users/${user.id}`);
    expect(found.statusCode).toBe(200);
    expect(secured(found)).toEqual(API);

    const unauthenticated = await t.server(env, 'sk_wrong').get(`/users/${user.id}`);
    expect(unauthenticated.statusCode).toBe(401);
    expect(secured(unauthenticated)).toEqual(API);

    const invalid = await t.server(env).post('/users', { email: 'not an email', password: PASSWORD });
    expect(invalid.statusCode).toBe(400);
    expect(secured(invalid)).toEqual(API);
  });

  it('sets the same headers on 404s, on URLs Fastify refuses before routing, and on health, metrics and the document', async () => {
    const notFound = await t.app.inject({ method: 'GET', url: '/nowhere' });
    expect(notFound.statusCode).toBe(404);
    expect(secured(notFound)).toEqual(API);

    const badUrl = await t.server(env).get('/users/%E0%A4%A');
    expect(badUrl.statusCode).toBe(400);
    expect(secured(badUrl)).toEqual(API);

    for (const url of ['/healthz', '/readyz', '/metrics', '/openapi.json']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(secured(res), url).toEqual(API);
    }
  });

  it('gives the reference page its own Content-Security-Policy, nosniff and no-store', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(secured(page)).toEqual({ nosniff: 'nosniff', cacheControl: 'no-store', csp: DOCS_CSP });
    expect(DOCS_CSP).toBe("default-src 'none'; script-src 'self'; style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='; "
      + "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  });

  it("keeps the cache policy the reference page's static files set for themselves, with nosniff", async () => {
    const script = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/^application\/javascript/);
    expect(secured(script)).toEqual({ nosniff: 'nosniff', cacheControl: 'public, max-age=0', csp: DOCS_CSP });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';

/** The __session Set-Cookie of an answer, raw. */
const sessionCookie = (setCookie: string | string[] | undefined) =>
  [setCookie ?? []].flat().filter((c) => c.startsWith('__session=')).join('\n');

describe('the session cookie on a public host', () => {
  let t: TestApp;
  let env: TestEnv;
  beforeAll(async () => {
    // A proxy that terminates TLS but is not configured as trusted: every request looks like plain http.
    t = await startTestApp({ trustedProxies: [] });
    const created = await t.admin.post('/environments', { name: 'public-host', frontendHost: 'auth.example.com' });
    expect(created.statusCode).toBe(201);
    env = { ...created.json(), name: 'public-host' };
  });
  afterAll(() => t.close());

  it('is Secure even though the request arrived over http from an untrusted proxy', async () => {
    const user = await t.given.user(env);
    const res = await t.client(env).post('/auth/sign-in', { email: user.email, password: user.password }, {
      remoteAddress: '10.0.0.1', headers: { 'x-forwarded-proto': 'http' },
    });

    expect(res.statusCode).toBe(200);
    const raw = sessionCookie(res.headers['set-cookie']);
    expect(raw).toMatch(/^__session=sess_[A-Za-z0-9_-]+; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/);
  });

  it('is cleared with the same attributes, Secure included, at sign-out', async () => {
    const user = await t.given.user(env);
    const signIn = await t.client(env).post('/auth/sign-in', { email: user.email, password: user.password });
    const token = signIn.cookies.find((c) => c.name === '__session')?.value;
    const res = await t.client(env, { cookie: token, origin: 'http://auth.example.com' }).post('/auth/sign-out');

    expect(res.statusCode).toBe(204);
    expect(sessionCookie(res.headers['set-cookie']))
      .toBe('__session=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Lax');
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { hasChromium, launchChromium } from '../helpers/browser.js';


/** A tiny static site standing in for a customer's app on another origin. */
async function startAppSite(): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

type FetchResult = { status: number; body: unknown } | { error: string };

/** Runs fetch inside the page, so the browser applies its own cookie, CORS and Origin rules. */
const browserFetch = (page: Page, url: string, init: { method?: string; body?: unknown } = {}) =>
  page.evaluate(async ({ url, init }): Promise<FetchResult> => {
    try {
      const res = await fetch(url, {
        method: init.method ?? 'GET', credentials: 'include',
        ...(init.body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(init.body) }),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    } catch (err) {
      return { error: String(err) };
    }
  }, { url, init });

describe.skipIf(!hasChromium)('cookie sessions in a real browser (headless Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let site: { server: Server; port: number };
  let env: TestEnv;
  let user: { email: string | null; password: string };
  let frontend: string;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    site = await startAppSite();
    const created = await t.admin.post('/environments', { name: 'browser', frontendHost: `browser.localhost:${port}` });
    env = { ...created.json(), name: 'browser' };
    frontend = `http://browser.localhost:${port}`;
    await t.server(env).put('/allowed-origins', { origins: [`http://browser.localhost:${site.port}`] });
    user = await t.given.user(env);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    site?.server.close();
    await t?.close();
  });

  it('keeps the session in an HttpOnly, Secure, SameSite=Lax cookie that authenticates until sign-out', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // A page of the app on the frontend host itself (a proxy routes /_svc to Gatehouse). Not a Gatehouse
    // answer: those carry `default-src 'none'`, which forbids a page from fetching anything.
    await page.route(`${frontend}/app`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>app</title>' }));
    await page.goto(`${frontend}/app`);

    const signIn = await browserFetch(page, `${frontend}/_svc/auth/sign-in`, { method: 'POST', body: { email: user.email, password: user.password } });
    expect(signIn).toMatchObject({ status: 200, body: { user: { email: user.email } } });
    expect((signIn as { body: Record<string, unknown> }).body).not.toHaveProperty('sessionToken');

    const [cookie] = (await context.cookies(frontend)).filter((c) => c.name === '__session');
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
    expect(cookie.value).toMatch(/^sess_/);
    expect(await page.evaluate(() => document.cookie)).not.toContain('__session');

    expect(await browserFetch(page, `${frontend}/_svc/me`)).toMatchObject({ status: 200, body: { email: user.email } });
    expect(await browserFetch(page, `${frontend}/_svc/me`, { method: 'PATCH', body: { firstName: 'Ada' } }))
      .toMatchObject({ status: 200, body: { firstName: 'Ada' } });

    expect(await browserFetch(page, `${frontend}/_svc/auth/sign-out`, { method: 'POST' })).toMatchObject({ status: 204 });
    expect((await context.cookies(frontend)).filter((c) => c.name === '__session')).toEqual([]);
    expect(await browserFetch(page, `${frontend}/_svc/me`)).toMatchObject({ status: 401, body: { properties: { code: 'unauthenticated' } } });
    await context.close();
  });

  // Same site, another origin (another port here; app.example.com beside auth.example.com in production):
  // the SameSite=Lax cookie travels, and CORS decides whether the app may read the answers.
  it('answers CORS with credentials for an allowed same-site origin, so the app can sign in and read the user', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`http://browser.localhost:${site.port}/`);

    const signIn = await browserFetch(page, `${frontend}/_svc/auth/sign-in`, { method: 'POST', body: { email: user.email, password: user.password } });
    expect(signIn).toMatchObject({ status: 200, body: { user: { email: user.email } } });
    expect(await browserFetch(page, `${frontend}/_svc/me`)).toMatchObject({ status: 200, body: { email: user.email } });
    await context.close();
  });

  it('gives a foreign origin nothing: the preflight fails, the browser blocks the request and no session cookie is set', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`http://evil.localhost:${site.port}/`);

    const attempt = await browserFetch(page, `${frontend}/_svc/auth/sign-in`, { method: 'POST', body: { email: user.email, password: user.password } });
    expect(attempt).toEqual({ error: expect.stringContaining('Failed to fetch') });
    expect((await context.cookies(frontend)).filter((c) => c.name === '__session')).toEqual([]);
    await context.close();
  });
});

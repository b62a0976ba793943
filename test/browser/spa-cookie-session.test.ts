import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { hasChromium, launchChromium } from '../helpers/browser.js';
import { PASSWORD } from '../helpers/given.js';

describe.skipIf(!hasChromium)('a single-page app on a localhost dev server signing in with the cookie (headless Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let spa: Server;
  let spaOrigin: string;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
    spa = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>spa</title>'));
    await new Promise<void>((resolve) => spa.listen(0, '127.0.0.1', resolve));
    spaOrigin = `http://localhost:${(spa.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => spa?.close(resolve));
    await t?.close();
  });

  async function environmentOn(frontendHost: string): Promise<TestEnv> {
    const created = await t.admin.post('/environments', { name: frontendHost.split('.')[0]!.split(':')[0]!, frontendHost });
    const env: TestEnv = { ...created.json(), name: 'spa' };
    await t.server(env).put('/allowed-origins', { origins: [spaOrigin] });
    await t.given.user(env, { email: 'spa@example.com' });
    return env;
  }

  /** From the app's page: sign in with the cookie flow, then call /me with the cookie; the two statuses. */
  async function signInThenMe(frontendUrl: string) {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${spaOrigin}/`);
    return page.evaluate(async ({ url, password }) => {
      const signIn = await fetch(`${url}/_svc/auth/sign-in`, {
        method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'spa@example.com', password }),
      });
      const me = await fetch(`${url}/_svc/me`, { credentials: 'include' });
      return [signIn.status, me.status];
    }, { url: frontendUrl, password: PASSWORD });
  }

  it('keeps the session between calls when the frontend host is localhost:<port>, the same site as the app (the development environment)', async () => {
    await environmentOn(`localhost:${port}`);
    expect(await signInThenMe(`http://localhost:${port}`)).toEqual([200, 200]);
  });

  it('loses it on a <name>.localhost frontend host, another site, whose SameSite=Lax cookie the browser never sends from the app', async () => {
    await environmentOn(`trap.localhost:${port}`);
    expect(await signInThenMe(`http://trap.localhost:${port}`)).toEqual([200, 401]);
  });
});

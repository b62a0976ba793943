import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../examples/express-vite-react/server.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { hasChromium, launchChromium } from '../helpers/browser.js';
import { binOf, exampleDir, runNode } from '../helpers/examples.js';
import { PASSWORD } from '../helpers/given.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { postEnvironmentOnOwnHost } from '../helpers/own-frontend-host.js';

const OUT_DIR = fileURLToPath(new URL('../../node_modules/.cache/gatehouse-examples/express-vite-react/', import.meta.url));

describe.skipIf(!hasChromium)('the Express + Vite React example, end to end in headless Chromium', () => {
  let t: TestApp;
  let env: TestEnv;
  let api: Server;
  let appOrigin: string;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    // localhost:<port> is the same site as the app on localhost:<another port>, as in development.
    env = { ...(await postEnvironmentOnOwnHost(t, { name: 'example', frontendHost: `localhost:${port}` })).json(), name: 'example' };
    const frontendUrl = `http://localhost:${port}`;
    // As the README builds it: `vite build`, the frontend URL from VITE_GATEHOUSE_FRONTEND_URL.
    await runNode([binOf('vite/bin/vite.js'), 'build', '--outDir', OUT_DIR, '--emptyOutDir', '--logLevel', 'warn'], {
      cwd: exampleDir('express-vite-react'), env: { VITE_GATEHOUSE_FRONTEND_URL: frontendUrl },
    });
    api = createApp({ frontendUrl, staticDir: OUT_DIR }).listen(0, '127.0.0.1');
    await new Promise((resolve) => api.once('listening', resolve));
    appOrigin = `http://localhost:${(api.address() as AddressInfo).port}`;
    await t.server(env).put('/allowed-origins', { origins: [appOrigin] });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => (api ? api.close(resolve) : resolve(undefined)));
    await t?.close();
  });

  it('refuses /api/me without a session token with a 401 problem+json', async () => {
    const res = await fetch(`${appOrigin.replace('localhost', '127.0.0.1')}/api/me`);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toMatchObject({ status: 401, properties: { code: 'unauthenticated' } });
  });

  it('signs in through the client plane, shows the user, and calls /api/me with getToken()', async () => {
    const user = await t.given.user(env, { email: 'ada@example.com' });
    // The session JWT is checked against real time by the example's verifier: mint on a test clock that shows it.
    t.clock.set(new Date());
    const page = await browser.newPage();
    page.setDefaultTimeout(PATIENCE_MS);
    await page.goto(`${appOrigin}/`);
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByTestId('signed-in-as').textContent().catch(() => null), { timeout: PATIENCE_MS })
      .toBe('Signed in as ada@example.com');

    await page.getByRole('button', { name: 'Call /api/me' }).click();
    const answer = await page.getByTestId('api-answer').textContent();
    const [status, body] = answer!.split(/ (.*)/s);
    expect(status).toBe('200');
    const me = JSON.parse(body!);
    expect(me).toEqual({ userId: user.id, sessionId: expect.any(String), actorId: null });
    const sessions = (await t.server(env).get(`/users/${user.id}/sessions?status=active`)).json().items;
    expect(sessions.map((session: { id: string }) => session.id)).toEqual([me.sessionId]);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').waitFor();
    expect((await t.server(env).get(`/users/${user.id}/sessions?status=active`)).json().items).toEqual([]);
    await page.close();
  });
});

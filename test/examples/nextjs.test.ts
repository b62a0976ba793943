import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { hasChromium, launchChromium } from '../helpers/browser.js';
import { binOf, exampleDir, runNode, startNodeServer } from '../helpers/examples.js';
import { PASSWORD, type TestUser } from '../helpers/given.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { postEnvironmentOnOwnHost } from '../helpers/own-frontend-host.js';

const NEXT = binOf('next/dist/bin/next');

describe('the Next.js example (next build, then next start)', () => {
  let t: TestApp;
  let env: TestEnv;
  let next: Awaited<ReturnType<typeof startNodeServer>>;
  let app: string;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    env = { ...(await postEnvironmentOnOwnHost(t, { name: 'next', frontendHost: `localhost:${port}` })).json(), name: 'next' };
    const frontendUrl = `http://localhost:${port}`;
    const vars = { NEXT_TELEMETRY_DISABLED: '1', NEXT_PUBLIC_GATEHOUSE_FRONTEND_URL: frontendUrl, GATEHOUSE_FRONTEND_URL: frontendUrl };
    // The README's steps: `npm run build` (next build --webpack), then `npm start`.
    await runNode([NEXT, 'build', '--webpack'], { cwd: exampleDir('nextjs'), env: vars });
    next = await startNodeServer([NEXT, 'start', '--port', '{port}', '--hostname', '127.0.0.1'], { cwd: exampleDir('nextjs'), env: vars });
    app = `http://localhost:${next.port}`;
    await t.server(env).put('/allowed-origins', { origins: [app] });
  });
  afterAll(async () => {
    await next?.stop();
    await t?.close();
  });

  /** A user, signed in, and a session JWT minted now (the app verifies it against real time, not the test clock). */
  async function signedIn(): Promise<{ user: TestUser; sessionId: string; jwt: string }> {
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    t.clock.set(new Date());
    const { token } = (await t.client(env, { token: session.token }).post('/sessions/current/token')).json();
    return { user, sessionId: session.id, jwt: token };
  }

  it('redirects a protected page without a session to the sign-in page, with the page to come back to', async () => {
    const res = await fetch(`${app}/dashboard?tab=1`, { redirect: 'manual' });
    expect(res.status).toBe(307);
    // Next.js writes a redirect to its own origin as a path.
    expect(new URL(res.headers.get('location')!, app).href).toBe(`${app}/sign-in?redirect_url=%2Fdashboard%3Ftab%3D1`);
  });

  it('answers a protected route handler without a session 401 problem+json', async () => {
    const res = await fetch(`${app}/api/me`);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toMatchObject({ status: 401, properties: { code: 'unauthenticated' } });
  });

  it('refuses a token that is not a valid session JWT', async () => {
    const res = await fetch(`${app}/api/me`, { headers: { authorization: 'Bearer not-a-jwt', cookie: '__gatehouse_jwt=not-a-jwt' } });
    expect(res.status).toBe(401);
  });

  it('keeps the home page and the sign-in page open', async () => {
    expect((await fetch(`${app}/`, { redirect: 'manual' })).status).toBe(200);
    expect((await fetch(`${app}/sign-in`, { redirect: 'manual' })).status).toBe(200);
  });

  it('answers the route handler and renders the page with the user of a bearer session JWT', async () => {
    const { user, sessionId, jwt } = await signedIn();
    const api = await fetch(`${app}/api/me`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(api.status).toBe(200);
    expect(await api.json()).toEqual({ userId: user.id, sessionId, actorId: null });
    const page = await fetch(`${app}/dashboard`, { headers: { authorization: `Bearer ${jwt}` }, redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(user.id);
  });

  it('does the same with the session JWT in the __gatehouse_jwt cookie, as server rendering gets it', async () => {
    const { user, sessionId, jwt } = await signedIn();
    const cookie = `__gatehouse_jwt=${jwt}`;
    const api = await fetch(`${app}/api/me`, { headers: { cookie } });
    expect(await api.json()).toEqual({ userId: user.id, sessionId, actorId: null });
    const page = await fetch(`${app}/dashboard`, { headers: { cookie }, redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(user.id);
  });

  it.skipIf(!hasChromium)('signs in on the sign-in page in cookie mode and comes back to the server-rendered page (headless Chromium)', async () => {
    const user = await t.given.user(env, { email: 'grace@example.com' });
    t.clock.set(new Date());
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      page.setDefaultTimeout(PATIENCE_MS);
      await page.goto(`${app}/dashboard`);
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await page.getByLabel('Email').fill('grace@example.com');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${app}/dashboard`);
      expect(await page.getByTestId('user-id').textContent()).toBe(user.id);
      const [cookie] = (await page.context().cookies(app)).filter((c) => c.name === '__gatehouse_jwt');
      expect(cookie).toMatchObject({ httpOnly: false, sameSite: 'Lax', path: '/' });
    } finally {
      await browser.close();
    }
  });
});

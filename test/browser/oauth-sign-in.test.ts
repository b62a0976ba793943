import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { browserStage, hasChromium, launchChromium } from '../helpers/browser.js';
import { loginAtProvider, startOpenIdProvider, type OpenIdProvider } from '../helpers/openid-provider.js';

/** The customer's app: it shows the query and fragment it was opened with. */
const APP_PAGE = '<!doctype html><title>app</title><pre id="out"></pre><script>document.getElementById("out").textContent = location.search + location.hash;</script>';

describe.skipIf(!hasChromium)('signing in with an OpenID provider in a real browser (headless Chromium)', () => {
  let t: TestApp;
  let op: OpenIdProvider;
  let browser: Browser;
  let stage: Awaited<ReturnType<typeof browserStage>>;
  let env: TestEnv;
  let frontend: string;
  let appOrigin: string;

  beforeAll(async () => {
    [t, op] = await Promise.all([startTestApp(), startOpenIdProvider()]);
    stage = await browserStage(t, 'signin', APP_PAGE);
    ({ env, frontend, appOrigin } = stage);
    const { clientId, clientSecret } = await op.register([`${frontend}/_svc/auth/oauth2/idp/callback`]);
    const put = await t.admin.put(`/environments/${env.id}/oauth-providers/idp`, { type: 'oidc', name: 'Test IdP', clientId, clientSecret, issuer: op.issuer });
    expect(put.statusCode, put.body).toBe(201);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await stage?.close();
    await t?.close();
    await op?.stop();
  });

  const authorizeUrl = (landing: string) => `${frontend}/_svc/auth/oauth2/idp/authorize?redirect_url=${encodeURIComponent(landing)}`;

  it('goes to the provider, back through the callback, and lands signed in with an HttpOnly session cookie', async () => {
    await op.nextAccount({ sub: 'browser-user', email: 'browser.user@example.com', email_verified: true, given_name: 'Brow', family_name: 'Ser' });
    const landing = `${appOrigin}/welcome#/home`;
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(authorizeUrl(landing));
    expect(page.url().startsWith(`${op.issuer}/interaction/`)).toBe(true);
    await Promise.all([page.waitForURL(`${appOrigin}/**`), page.click('#continue')]);

    expect(page.url()).toBe(landing);
    expect(await page.textContent('#out')).toBe('#/home');
    const cookies = await context.cookies(frontend);
    expect(cookies.find((c) => c.name === '__session')).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    // The binding cookie has done its work and is gone.
    expect(cookies.find((c) => c.name === '__oauth_browser')).toBeUndefined();
    const me = await page.goto(`${frontend}/_svc/me`);
    expect(me!.status()).toBe(200);
    expect(await me!.json()).toMatchObject({ email: 'browser.user@example.com', firstName: 'Brow', lastName: 'Ser', actor: null });
    await context.close();
  });

  it('refuses to finish in another browser a sign-in that one browser started (login CSRF): state_mismatch, no session', async () => {
    await op.nextAccount({ sub: 'attacker', email: 'attacker@example.com', email_verified: true });
    const landing = `${appOrigin}/welcome`;
    // The attacker starts a sign-in and logs in at the provider with his own script, keeping the callback URL...
    const started = await t.client(env).get(`/auth/oauth2/idp/authorize?redirect_url=${encodeURIComponent(landing)}`);
    expect(started.statusCode).toBe(302);
    const callbackUrl = (await loginAtProvider(started.headers.location as string)).href;
    expect(callbackUrl.startsWith(`${frontend}/_svc/auth/oauth2/idp/callback?code=`)).toBe(true);

    // ...and gets the victim's browser to open it.
    const victim = await browser.newContext();
    const victimPage = await victim.newPage();
    await victimPage.goto(callbackUrl);

    expect(victimPage.url()).toBe(`${landing}?error=state_mismatch`);
    expect(await victimPage.textContent('#out')).toBe('?error=state_mismatch');
    expect((await victim.cookies(frontend)).find((c) => c.name === '__session')).toBeUndefined();
    await victim.close();
  });
});

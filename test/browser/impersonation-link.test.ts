import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { browserStage, hasChromium, launchChromium } from '../helpers/browser.js';

/** The customer's support landing page, served by its own app on another origin; it shows where it landed. */
const LANDING_PAGE = '<!doctype html><title>landing</title><pre id="out"></pre><script>document.getElementById("out").textContent = location.hash;</script>';

describe.skipIf(!hasChromium)('redeeming an impersonation link in a real browser (headless Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let stage: Awaited<ReturnType<typeof browserStage>>;
  let env: TestEnv;
  let frontend: string;
  let appOrigin: string;

  beforeAll(async () => {
    t = await startTestApp();
    stage = await browserStage(t, 'support', LANDING_PAGE);
    ({ env, frontend, appOrigin } = stage);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await stage?.close();
    await t?.close();
  });

  it('sets the HttpOnly cookie, lands on the landing URL with its fragment, and the cookie is the impersonated session', async () => {
    const target = await t.given.user(env);
    const actor = await t.given.user(env);
    const landing = `${appOrigin}/support/home?tab=billing#/invoices/42`;
    const minted = await t.server(env).post(`/users/${target.id}/impersonation-token`, { actorUserId: actor.id, reason: 'Ticket #12', redirectUrl: landing });
    expect(minted.statusCode, minted.body).toBe(201);
    const { url } = minted.json();
    expect(url.startsWith(`${frontend}/_svc/auth/session/impersonate?token=imp_`)).toBe(true);

    const context = await browser.newContext();
    const page = await context.newPage();
    const landed = await page.goto(url);

    expect(landed!.status()).toBe(200);
    expect(page.url()).toBe(landing);
    expect(await page.textContent('#out')).toBe('#/invoices/42');
    const cookie = (await context.cookies(frontend)).find((c) => c.name === '__session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    // The browser's cookie is the impersonated session.
    const me = await page.goto(`${frontend}/_svc/me`);
    expect(me!.status()).toBe(200);
    expect(await me!.json()).toMatchObject({ id: target.id, actor: { type: 'user', id: actor.id, impersonatorId: actor.id } });

    // The link works once: opening it again shows the problem, not a second session.
    const again = await page.goto(url);
    expect(again!.status()).toBe(401);
    expect(JSON.parse(await again!.text()).properties.code).toBe('invalid_token');
    await context.close();
  });
});

import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { accessibilityProblems, browserStage, hasChromium, launchChromium } from '../helpers/browser.js';
import { PASSWORD } from '../helpers/given.js';
import { codeAt, userWithTotp } from '../factors/support.js';
import { randomEmail } from '../invitations/support.js';
import { LOCALES, translator } from '../../src/platform/i18n/catalogue.js';

describe.skipIf(!hasChromium)('hosted pages in a real browser (headless Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let env: TestEnv;
  let frontend: string;
  let landing: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    t = await startTestApp();
    const stage = await browserStage(t, 'hosted', '<!doctype html><title>the app</title><h1>the app</h1>');
    ({ env, frontend, close } = stage);
    landing = `${stage.appOrigin}/home?from=hosted`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await close?.();
    await t?.close();
  });

  const redirect = () => `redirect_url=${encodeURIComponent(landing)}`;

  /** A fresh browser profile, and a check that the session cookie it holds for the frontend host is live. */
  async function freshPage(locale?: string) {
    const context = await browser.newContext(locale ? { locale } : {});
    return { context, page: await context.newPage() };
  }
  async function signedInAs(context: BrowserContext, email: string) {
    const cookie = (await context.cookies(frontend)).find((c) => c.name === '__session');
    expect(cookie, 'no __session cookie').toBeDefined();
    const me = await t.client(env, { cookie: cookie!.value }).get('/me');
    expect(me.statusCode).toBe(200);
    expect(me.json().email).toBe(email);
  }
  /** The code in the newest mail to the address (the pages' language decides the mail's words, not its code). */
  const mailedCode = async (email: string) => {
    await t.app.settled();
    const [mail] = await t.outbox(env, email);
    expect(mail, `no mail to ${email}`).toBeDefined();
    return /\b(\d{6})\b/.exec(mail!.text)![1];
  };

  // Every flow in each of the spec's locales, Danish chosen by the browser's language as a visitor's would be.
  describe.each(LOCALES)('in %s', (locale) => {
    const say = translator(locale);
    const browserLocale = locale === 'da' ? 'da-DK' : 'en-US';

    it('signs up, reads the code from the outbox, verifies and lands on redirect_url signed in', async () => {
      const { context, page } = await freshPage(browserLocale);
      const email = randomEmail('browser');
      const opened = await page.goto(`${frontend}/sign-up?${redirect()}`);
      expect(opened!.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(await accessibilityProblems(page)).toEqual([]);
      expect(await page.getAttribute('html', 'lang')).toBe(locale);
      // The stylesheet loaded under the CSP: the button has the brand colour.
      expect(await page.getByRole('button', { name: say('button.signUp') }).evaluate((b) => getComputedStyle(b).backgroundColor)).toBe('rgb(29, 78, 216)');
      await page.getByLabel(say('field.email'), { exact: true }).fill(email);
      await page.getByLabel(say('field.password'), { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: say('button.signUp') }).click();
      await expect.poll(() => page.getByRole('heading', { name: say('verifyEmail.title') }).count()).toBe(1);
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByLabel(say('field.code'), { exact: true }).fill(await mailedCode(email));
      await page.getByRole('button', { name: say('button.verify') }).click();
      await page.waitForURL(landing);
      await signedInAs(context, email);
      await context.close();
    });

    it('signs in with a password and then the second factor', async () => {
      const { user, secret } = await userWithTotp(t, env);
      const { context, page } = await freshPage(browserLocale);
      await page.goto(`${frontend}/sign-in?${redirect()}`);
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByLabel(say('field.email'), { exact: true }).fill(user.email!);
      await page.getByLabel(say('field.password'), { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: say('button.signIn') }).click();
      await expect.poll(() => page.getByRole('heading', { name: say('secondFactor.title') }).count()).toBe(1);
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByLabel(say('field.code'), { exact: true }).fill(codeAt(t, secret));
      await page.getByRole('button', { name: say('button.verify') }).click();
      await page.waitForURL(landing);
      await signedInAs(context, user.email!);
      await context.close();
    });

    it('resets a forgotten password with the mailed code', async () => {
      const user = await t.given.user(env);
      const { context, page } = await freshPage(browserLocale);
      await page.goto(`${frontend}/sign-in?${redirect()}`);
      await page.getByRole('link', { name: say('signIn.forgotPassword') }).click();
      await expect.poll(() => page.getByRole('heading', { name: say('forgotPassword.title') }).count()).toBe(1);
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByLabel(say('field.email'), { exact: true }).fill(user.email!);
      await page.getByRole('button', { name: say('button.sendCode') }).click();
      await expect.poll(() => page.getByRole('heading', { name: say('resetPassword.title') }).count()).toBe(1);
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByLabel(say('field.code'), { exact: true }).fill(await mailedCode(user.email!));
      await page.getByLabel(say('field.newPassword'), { exact: true }).fill('a brand new passphrase');
      await page.getByRole('button', { name: say('button.resetPassword') }).click();
      await page.waitForURL(landing);
      await signedInAs(context, user.email!);
      await context.close();
    });

    it('accepts an environment invitation from the mailed link, with no signUpUrl configured', async () => {
      const email = randomEmail('invited');
      expect((await t.server(env).post('/invitations', { email, redirectUrl: landing, publicMetadata: {}, privateMetadata: {} })).statusCode).toBe(201);
      const [mail] = await t.outbox(env, email);
      const link = /http:\/\/\S+/.exec(mail.text)![0];
      expect(link.startsWith(`${frontend}/accept-invitation?invitation_token=`)).toBe(true);
      const { context, page } = await freshPage(browserLocale);
      await page.goto(link);
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByLabel(say('field.password'), { exact: true }).fill(PASSWORD);
      await page.getByLabel(say('field.legalConsent')).check();
      await page.getByRole('button', { name: say('button.signUp') }).click();
      await page.waitForURL(landing);
      await signedInAs(context, email);
      await context.close();
    });

    it('accepts an organization invitation: an existing user signs in on the page and joins', async () => {
      const ownerUser = await t.given.user(env);
      const owner = t.client(env, { token: (await t.given.session(env, ownerUser)).token });
      const org = (await owner.post('/organizations', { name: 'Acme' })).json();
      const user = await t.given.user(env);
      expect((await owner.post(`/organizations/${org.id}/invitations`, { email: user.email, role: 'member' })).json().emailDelivery).toBe('dispatched');
      const [mail] = await t.outbox(env, user.email!);
      const link = /http:\/\/\S+/.exec(mail.text)![0];
      expect(link.startsWith(`${frontend}/accept-organization-invitation?invitation_token=`)).toBe(true);
      const { context, page } = await freshPage(browserLocale);
      await page.goto(`${link}&${redirect()}`);
      expect(await accessibilityProblems(page)).toEqual([]);
      const signIn = page.getByRole('region', { name: say('orgInvitation.existingAccount') });
      await signIn.getByLabel(say('field.password'), { exact: true }).fill(PASSWORD);
      await signIn.getByRole('button', { name: say('button.signIn') }).click();
      await page.waitForURL(landing);
      await signedInAs(context, user.email!);
      const members = await t.client(env, { token: (await t.given.session(env, ownerUser)).token }).get(`/organizations/${org.id}/members`);
      expect(members.json().items.map((m: { userId: string }) => m.userId)).toContain(user.id);
      await context.close();
    });
  });

  it('signs in in Danish, chosen by the browser\'s language', async () => {
    const user = await t.given.user(env);
    const { context, page } = await freshPage('da-DK');
    await page.goto(`${frontend}/sign-in?${redirect()}`);
    expect(await page.getAttribute('html', 'lang')).toBe('da');
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel('E-mail', { exact: true }).fill(user.email!);
    await page.getByLabel('Adgangskode', { exact: true }).fill('forkert adgangskode');
    await page.getByRole('button', { name: 'Log ind' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('E-mail eller adgangskode er forkert.');
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel('Adgangskode', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Log ind' }).click();
    await page.waitForURL(landing);
    await signedInAs(context, user.email!);
    await context.close();
  });

  it('cannot be framed by another site', async () => {
    const { context, page } = await freshPage();
    await page.goto(landing);
    await page.evaluate(async (src) => {
      const frame = document.createElement('iframe');
      frame.src = src;
      document.body.append(frame);
      await new Promise((resolve) => { frame.onload = resolve; });
    }, `${frontend}/sign-in`);
    const child = page.frames().find((frame) => frame !== page.mainFrame());
    expect(child).toBeDefined();
    // Chromium refuses the document (frame-ancestors 'none'): the frame holds its error page, not the form.
    expect(await child!.locator('form').count()).toBe(0);
    expect(await child!.locator('#password').count()).toBe(0);
    await context.close();
  });

  it('passes axe on the sign-out, "signed in" and error pages', async () => {
    const { context, page } = await freshPage();
    for (const path of ['/sign-out', '/signed-in', '/verify-email', '/sign-in?redirect_url=https%3A%2F%2Fevil.example']) {
      await page.goto(`${frontend}${path}`);
      expect(await accessibilityProblems(page), path).toEqual([]);
    }
    await context.close();
  });
});

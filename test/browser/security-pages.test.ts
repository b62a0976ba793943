import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { accessibilityProblems, browserStage, hasChromium, launchChromium } from '../helpers/browser.js';
import { PASSWORD } from '../helpers/given.js';
import { codeAt } from '../factors/support.js';

describe.skipIf(!hasChromium)('the security tab and passkey sign-in in a real browser (headless Chromium, virtual authenticator)', () => {
  let t: TestApp;
  let browser: Browser;
  let env: TestEnv;
  let frontend: string;
  let landing: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    t = await startTestApp();
    const stage = await browserStage(t, 'security', '<!doctype html><title>the app</title><h1>the app</h1>');
    ({ env, frontend, close } = stage);
    landing = `${stage.appOrigin}/home?from=passkey`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await close?.();
    await t?.close();
  });

  const signInUrl = () => `${frontend}/sign-in?redirect_url=${encodeURIComponent(landing)}`;

  /** A fresh browser profile whose page has a platform authenticator (user-verifying, holding discoverable keys). */
  async function freshPage(locale?: string) {
    const context = await browser.newContext(locale ? { locale } : {});
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    return { context, page };
  }

  async function signInWithPassword(page: Page, email: string, labels = { email: 'Email', password: 'Password', button: 'Sign in' }) {
    await page.goto(signInUrl());
    await page.getByLabel(labels.email, { exact: true }).fill(email);
    await page.getByLabel(labels.password, { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: labels.button, exact: true }).click();
    await page.waitForURL(landing);
  }

  async function sessionCookie(context: BrowserContext) {
    const cookie = (await context.cookies(frontend)).find((c) => c.name === '__session');
    expect(cookie, 'no __session cookie').toBeDefined();
    return cookie!.value;
  }

  /** Enrols the authenticator app on the tab: the key read from the page, the code computed from it; answers the backup codes shown. */
  async function enrolTotp(page: Page, labels: { start: string; code: string; confirm: string; codesHeading: string }) {
    await page.getByRole('button', { name: labels.start }).click();
    const secret = (await page.locator('[data-totp-secret]').textContent())!;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(await page.getByRole('img').last().getAttribute('aria-label')).toMatch(/QR/);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel(labels.code, { exact: true }).fill(codeAt(t, secret));
    await page.getByRole('button', { name: labels.confirm }).click();
    await expect.poll(() => page.getByRole('heading', { name: labels.codesHeading }).count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);
    return page.locator('[data-backup-codes] li').allTextContents();
  }

  it('enrols TOTP, registers a passkey, signs out, then signs in with the passkey on /sign-in and lands on redirect_url', async () => {
    const user = await t.given.user(env);
    const { context, page } = await freshPage();
    await page.goto(signInUrl());
    // The script found WebAuthn: the passkey button is shown.
    await expect.poll(() => page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible()).toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);
    await signInWithPassword(page, user.email!);

    await page.goto(`${frontend}/account/security`);
    expect(await accessibilityProblems(page)).toEqual([]);
    const codes = await enrolTotp(page, { start: 'Set up an authenticator app', code: 'Code', confirm: 'Turn on two-step verification', codesHeading: 'Your backup codes' });
    expect(codes).toHaveLength(10);
    const mfa = await t.client(env, { cookie: await sessionCookie(context) }).get('/me/mfa');
    expect(mfa.json()).toMatchObject({ factors: [{ type: 'totp' }], backupCodesRemaining: 10 });

    await page.getByRole('link', { name: 'Back to security' }).click();
    await expect.poll(() => page.getByText('JavaScript', { exact: false }).isVisible()).toBe(false);
    await page.getByLabel('Name of the new passkey').fill('Work laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(/done=passkey_added/);
    expect(await page.getByRole('status').textContent()).toBe('The passkey was added.');
    expect(await page.getByRole('button', { name: 'Remove Work laptop' }).count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel('New name for Work laptop').fill('Laptop');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.waitForURL(/done=passkey_renamed/);
    expect(await page.getByRole('status').textContent()).toBe('The passkey was renamed.');
    const keys = await t.client(env, { cookie: await sessionCookie(context) }).get('/me/passkeys');
    expect(keys.json().items).toEqual([expect.objectContaining({ name: 'Laptop', lastUsedAt: null })]);

    await page.goto(`${frontend}/sign-out`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    expect((await context.cookies(frontend)).some((c) => c.name === '__session')).toBe(false);

    await page.goto(signInUrl());
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(landing);
    const me = await t.client(env, { cookie: await sessionCookie(context) }).get('/me');
    expect(me.json().id).toBe(user.id);
    const used = await t.client(env, { cookie: await sessionCookie(context) }).get('/me/passkeys');
    expect(used.json().items[0].lastUsedAt).toEqual(expect.any(String));

    // Signed in by the passkey just now (a recent authentication), the passkey can be removed on the tab.
    await page.goto(`${frontend}/account/security`);
    await page.getByRole('button', { name: 'Remove Laptop' }).click();
    await page.waitForURL(/done=passkey_removed/);
    expect(await page.getByRole('status').textContent()).toBe('The passkey was removed. Remove it from your device too.');
    expect((await t.client(env, { cookie: await sessionCookie(context) }).get('/me/passkeys')).json().items).toEqual([]);
    await context.close();
  });

  it('revokes another session of the user, made by a second browser', async () => {
    const user = await t.given.user(env);
    const mine = await freshPage();
    const theirs = await freshPage();
    await signInWithPassword(mine.page, user.email!);
    await signInWithPassword(theirs.page, user.email!);
    const otherCookie = await sessionCookie(theirs.context);

    await mine.page.goto(`${frontend}/account/security`);
    expect(await mine.page.getByText('This device').count()).toBe(1);
    const revoke = mine.page.getByRole('button', { name: /^Sign out Chrome on / });
    expect(await revoke.count()).toBe(1);
    await revoke.click();
    await mine.page.waitForURL(/done=session_revoked/);
    expect(await mine.page.getByRole('status').textContent()).toBe('That session was signed out.');
    expect((await t.client(env, { cookie: otherCookie }).get('/me')).statusCode).toBe(401);
    expect((await t.client(env, { cookie: await sessionCookie(mine.context) }).get('/me')).statusCode).toBe(200);
    // The other browser is sent to sign in again.
    await theirs.page.goto(`${frontend}/account/security`);
    await theirs.page.waitForURL(/\/sign-in\?redirect_url=%2Faccount%2Fsecurity/);
    await mine.context.close();
    await theirs.context.close();
  });

  it('enrols TOTP in Danish, chosen by the browser\'s language', async () => {
    const user = await t.given.user(env);
    const { context, page } = await freshPage('da-DK');
    await signInWithPassword(page, user.email!, { email: 'E-mail', password: 'Adgangskode', button: 'Log ind' });
    await page.goto(`${frontend}/account/security`);
    expect(await page.getAttribute('html', 'lang')).toBe('da');
    expect(await page.getByRole('heading', { name: 'Sikkerhed', level: 1 }).count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);
    const codes = await enrolTotp(page, { start: 'Sæt en godkendelsesapp op', code: 'Kode', confirm: 'Slå totrinsbekræftelse til', codesHeading: 'Dine backupkoder' });
    expect(codes).toHaveLength(10);
    await page.getByRole('link', { name: 'Tilbage til sikkerhed' }).click();
    expect(await page.getByText('Backupkoder tilbage: 10').count()).toBe(1);
    await context.close();
  });
});

import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { accessibilityProblems, browserStage, hasChromium, launchChromium } from '../helpers/browser.js';
import { PASSWORD, type TestUser } from '../helpers/given.js';
import { randomEmail } from '../invitations/support.js';

/** The labels the flows click, in each language (the catalogue's words, as a reader sees them). */
const WORDS = {
  en: { email: 'Email', password: 'Password', signIn: 'Sign in', newEmail: 'New email address', add: 'Add email address', code: 'Code', verify: 'Verify', verified: 'Verified' },
  da: { email: 'E-mail', password: 'Adgangskode', signIn: 'Log ind', newEmail: 'Ny e-mailadresse', add: 'Tilføj e-mailadresse', code: 'Kode', verify: 'Bekræft', verified: 'Bekræftet' },
};

describe.skipIf(!hasChromium)('the account pages in a real browser (headless Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let env: TestEnv;
  let frontend: string;
  let close: () => Promise<void>;

  // Exports are prepared by a job: the worker stays off and the test runs it (a database of the file's own, as test/data-requests).
  beforeAll(async () => {
    t = await startTestApp({ jobsInBackground: false }, { ownDatabase: true });
    ({ env, frontend, close } = await browserStage(t, 'account', '<!doctype html><title>the app</title><h1>the app</h1>'));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await close?.();
    await t?.close();
  });

  /** Opens `path`, which sends the browser to sign in and back; signs in there as the user. */
  async function signInThrough(path: string, user: TestUser, locale: 'en' | 'da' = 'en') {
    const context = await browser.newContext();
    const page = await context.newPage();
    const words = WORDS[locale];
    await page.goto(`${frontend}${path}`);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await page.getByLabel(words.email, { exact: true }).fill(user.email!);
    await page.getByLabel(words.password, { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: words.signIn, exact: true }).click();
    await page.waitForURL(`${frontend}${path}`);
    return { context, page };
  }

  const mailedCode = async (to: string) => {
    await t.app.settled();
    const mail = (await t.outbox(env, to)).find((m) => /^Your email verification code is \d{6}$/.test(m.subject));
    expect(mail, `no code mailed to ${to}`).toBeDefined();
    return /(\d{6})$/.exec(mail!.subject)![1];
  };

  /** Adds an address on the profile tab, reads its code from the outbox and verifies it: the row then says so. */
  async function addAndVerify(page: Page, locale: 'en' | 'da') {
    const words = WORDS[locale];
    const email = randomEmail(`browser-${locale}`);
    await page.getByLabel(words.newEmail, { exact: true }).fill(email);
    await page.getByRole('button', { name: words.add }).click();
    const row = page.getByRole('listitem').filter({ hasText: email });
    await expect.poll(() => row.count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);
    await row.getByLabel(words.code, { exact: true }).fill(await mailedCode(email));
    await row.getByRole('button', { name: words.verify, exact: true }).click();
    await expect.poll(() => page.getByRole('listitem').filter({ hasText: email }).locator('.badge').allTextContents()).toEqual([words.verified]);
    return email;
  }

  it('signs in through /sign-in, adds an address, verifies it with the mailed code, and passes axe', async () => {
    const user = await t.given.user(env);
    const { context, page } = await signInThrough('/account', user);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your account');
    expect(await accessibilityProblems(page)).toEqual([]);
    const email = await addAndVerify(page, 'en');
    const session = (await context.cookies(frontend)).find((c) => c.name === '__session')!;
    const stored = (await t.client(env, { cookie: session.value }).get('/me/email-addresses')).json().items;
    expect(stored.map((a: { email: string; verified: boolean }) => [a.email, a.verified])).toEqual([[user.email, true], [email, true]]);
    await context.close();
  });

  it('requests an export on /account/data and lists it, with its download once the job ran', async () => {
    const user = await t.given.user(env);
    const { context, page } = await signInThrough('/account/data', user);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByRole('button', { name: 'Request an export' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Your export is being prepared. Its download appears below when it is ready.');
    expect(await page.getByRole('row').nth(1).getByRole('cell').allTextContents()).toEqual(['Export', 'Being prepared', expect.stringMatching(/ UTC$/), '']);
    expect(await accessibilityProblems(page)).toEqual([]);
    await t.app.runJobs();
    await page.reload();
    const download = page.getByRole('link', { name: 'Download the export' });
    expect(await download.count()).toBe(1);
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    expect(file.suggestedFilename()).toMatch(/^data-export-[\w-]+\.json$/);
    expect(JSON.parse(await readFile(await file.path(), 'utf8')).userId).toBe(user.id);
    await page.getByRole('link', { name: 'Delete my account' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Delete your account');
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });

  it('adds and verifies an address in Danish (?locale=da)', async () => {
    const user = await t.given.user(env);
    const { context, page } = await signInThrough('/account?locale=da', user, 'da');
    expect(await page.getAttribute('html', 'lang')).toBe('da');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Din konto');
    expect(await accessibilityProblems(page)).toEqual([]);
    await addAndVerify(page, 'da');
    expect(new URL(page.url()).searchParams.get('locale')).toBe('da');
    await context.close();
  });
});

import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { accessibilityProblems, hasChromium, launchChromium } from '../helpers/browser.js';
import { givenOperator } from '../operators/support.js';

const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });

async function signIn(page: Page, email: string, password: string) {
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe.skipIf(!hasChromium)('the dashboard\'s invitations screen in a real browser (headless Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const tag = `inv${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function environment(name: string): Promise<TestEnv> {
    const created = await t.admin.post('/environments', { name });
    expect(created.statusCode, created.body).toBe(201);
    return { ...created.json(), name };
  }

  /** A signed-in operator's fresh browser profile on `path`; the test fails on any foreign request or CSP report. */
  async function signedInPage(path: string) {
    const operator = await givenOperator(t);
    const context = await browser.newContext();
    const page = await context.newPage();
    const foreign: string[] = [];
    const refused: string[] = [];
    page.on('request', (request) => { if (!request.url().startsWith(base)) foreign.push(request.url()); });
    page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) refused.push(message.text()); });
    await page.goto(`${base}/dashboard${path}`);
    await signIn(page, operator.email, operator.password);
    return { context, page, foreign, refused };
  }

  const rows = (page: Page) => page.getByRole('table', { name: 'All invitations' }).locator('tbody tr');
  const stored = async (env: TestEnv, email: string) =>
    (await t.server(env).get(`/invitations?search=${encodeURIComponent(email)}`)).json().items as { id: string; email: string; status: string }[];

  it('shows the empty state, then invites, resends (a second mail) and revokes behind a confirmation', async () => {
    const env = await environment(`${tag}-flow`);
    const { context, page, foreign, refused } = await signedInPage(`/environments/${env.id}/invitations`);
    await expect.poll(() => heading(page, 'Invitations').count()).toBe(1);
    await expect.poll(() => page.getByText('This environment has sent no invitations yet.').count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Invitations' }).getAttribute('aria-current')).toBe('page');
    expect(await accessibilityProblems(page)).toEqual([]);

    // A redirect URL on no allowed origin: the server's problem is shown, and nothing is sent.
    const email = `ada-${tag}@example.com`;
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Redirect URL (optional)').fill('https://elsewhere.example.net/welcome');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('redirect_url_not_allowed');
    expect(await stored(env, email)).toEqual([]);

    await page.getByLabel('Redirect URL (optional)').fill('');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: `Invitation sent to ${email}.` }).count()).toBe(1);
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await rows(page).locator('td').first().textContent()).toBe(email);
    expect(await rows(page).locator('.badge').textContent()).toBe('Pending');
    expect(await t.outbox(env, email)).toHaveLength(1);
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByRole('button', { name: `Resend to ${email}` }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: `Mailed again to ${email}` }).count()).toBe(1);
    await expect.poll(async () => (await t.outbox(env, email)).length).toBe(2);
    const [second, first] = await t.outbox(env, email);
    expect(second.text).not.toBe(first.text); // a new token: the earlier link stopped working

    // Escape cancels the revocation; confirming revokes it, shown in words.
    await page.getByRole('button', { name: `Revoke the invitation of ${email}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this invitation?' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect((await stored(env, email))[0].status).toBe('PENDING');
    await page.getByRole('button', { name: `Revoke the invitation of ${email}` }).click();
    await dialog.getByRole('button', { name: 'Revoke invitation' }).click();
    await expect.poll(() => rows(page).locator('.badge').textContent()).toBe('Revoked');
    expect((await stored(env, email))[0].status).toBe('REVOKED');
    expect(await page.getByRole('button', { name: `Revoke the invitation of ${email}` }).count()).toBe(0);
    expect(await accessibilityProblems(page)).toEqual([]);

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('filters by status and email and pages by the cursor, all kept in the URL across a reload', async () => {
    const env = await environment(`${tag}-list`);
    const emails = Array.from({ length: 30 }, (_, i) => `guest-${String(i).padStart(2, '0')}-${tag}@example.com`);
    for (const email of emails) {
      const res = await t.server(env).post('/invitations', { email, publicMetadata: {}, privateMetadata: {} });
      expect(res.statusCode, res.body).toBe(201);
    }
    const revoked = (await stored(env, emails[7]))[0];
    expect((await t.server(env).post(`/invitations/${revoked.id}/revoke`)).statusCode).toBe(200);

    const { context, page } = await signedInPage(`/environments/${env.id}/invitations`);
    await expect.poll(() => rows(page).count()).toBe(25);
    const firstPage = await rows(page).locator('td:first-child').allTextContents();
    await page.getByRole('link', { name: 'Next page' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('cursor')).not.toBeNull();
    await expect.poll(() => rows(page).count()).toBe(5);
    expect((await rows(page).locator('td:first-child').allTextContents()).some((email) => firstPage.includes(email))).toBe(false);

    await page.getByLabel('Status').selectOption('revoked');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => rows(page).locator('td:first-child').allTextContents()).toEqual([emails[7]]);
    expect(new URL(page.url()).searchParams.get('status')).toBe('revoked');
    expect(new URL(page.url()).searchParams.get('cursor')).toBeNull();

    await page.getByLabel('Status').selectOption('pending');
    await page.getByLabel('Search by email').fill(`guest-1`);
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => rows(page).count()).toBe(10);
    expect(new URL(page.url()).searchParams.get('search')).toBe('guest-1');
    await page.reload();
    await expect.poll(() => rows(page).count()).toBe(10);
    expect(await page.getByLabel('Status').inputValue()).toBe('pending');
    expect(await page.getByLabel('Search by email').inputValue()).toBe('guest-1');
    expect(await rows(page).locator('.badge').allTextContents()).toEqual(Array(10).fill('Pending'));

    await page.getByLabel('Status').selectOption('accepted');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByText('No invitation matches these filters.').count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });
});

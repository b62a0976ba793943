import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import { accessibilityProblems, hasChromium } from '../helpers/browser.js';
import { type DashboardStage, exactHeading as heading, signedInPage, startDashboardStage } from './dashboard-stage.js';

describe.skipIf(!hasChromium)('the dashboard\'s invitations screen in a real browser (headless Chromium)', () => {
  let stage: DashboardStage;
  let t: TestApp;
  const tag = `inv${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    stage = await startDashboardStage(tag);
    ({ t } = stage);
  }, 180_000);
  afterAll(() => stage?.close());

  async function environment(name: string): Promise<TestEnv> {
    const created = await t.admin.post('/environments', { name });
    expect(created.statusCode, created.body).toBe(201);
    return { ...created.json(), name };
  }

  const rows = (page: Page) => page.getByRole('table', { name: 'All invitations' }).locator('tbody tr');
  const stored = async (env: TestEnv, email: string) =>
    (await t.server(env).get(`/invitations?search=${encodeURIComponent(email)}`)).json().items as { id: string; email: string; status: string }[];

  it('shows the empty state, then invites, resends (a second mail) and revokes behind a confirmation', async () => {
    const env = await environment(`${tag}-flow`);
    const { context, page, foreign, refused } = await signedInPage(stage, `/environments/${env.id}/invitations`);
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

    const { context, page } = await signedInPage(stage, `/environments/${env.id}/invitations`);
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

import { randomBytes, randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { append, eventBody } from '../audit/support.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { accessibilityProblems, hasChromium } from '../helpers/browser.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { startSmtpServer, type SmtpServer } from '../helpers/smtp.js';
import { givenOperator } from '../operators/support.js';
import { type DashboardStage, heading, listen, signIn, startDashboardStage, watchedPage } from './dashboard-stage.js';

const waitLong = { timeout: PATIENCE_MS };
const HOUR = 3_600_000;

/** Opens a dashboard deep link signed out, signs in on the form it leads to, and lands back on the link. */
async function openSignedIn(page: Page, url: string, operator: { email: string; password: string }) {
  await page.goto(url);
  await expect.poll(() => heading(page, 'Sign in to the dashboard').count(), waitLong).toBe(1);
  await signIn(page, operator.email, operator.password);
  await expect.poll(() => new URL(page.url()).pathname, waitLong).toBe(new URL(url).pathname);
}

/** Makes the page's tab hidden or shown again, as switching tabs does (document.visibilityState and its event). */
async function setTabHidden(page: Page, hidden: boolean) {
  await page.evaluate((hide) => {
    if (hide) Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    else delete (document as { visibilityState?: string }).visibilityState;
    document.dispatchEvent(new Event('visibilitychange'));
  }, hidden);
}

async function appended(t: TestApp, env: TestEnv, overrides: Record<string, unknown>) {
  const res = await append(t, env, eventBody(t, overrides));
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; sequence: number };
}

async function createdUser(t: TestApp, env: TestEnv, email: string) {
  const res = await t.server(env).post('/users', { email });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; email: string };
}

describe.skipIf(!hasChromium)('the dashboard audit log, audit event and mail outbox in a real browser', () => {
  let stage: DashboardStage;
  let t: TestApp;
  let base: string;
  let env: TestEnv;
  let ada: { id: string; email: string };
  const tag = `audit${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    stage = await startDashboardStage(tag);
    ({ t, base, env } = stage);
    ada = await createdUser(t, env, `ada-${tag}@example.com`);
  }, 180_000);
  afterAll(() => stage?.close());

  const actionCells = (page: Page) => page.locator('tbody tr td:nth-child(2) a').allTextContents();

  it('filters the log by action, newest first, keeps the filter in the URL and shows the same rows after a reload', async () => {
    const report = await appended(t, env, { action: 'report.exported', occurredAt: new Date(t.clock.now().getTime() - 2 * HOUR).toISOString() });
    const first = await appended(t, env, { action: 'document.shared', metadata: { n: 1 } });
    await appended(t, env, { action: 'document.deleted' });
    const second = await appended(t, env, { action: 'document.shared', metadata: { n: 2 } });
    const operator = await givenOperator(t);
    const { context, page, foreign, refused } = await watchedPage(stage);
    await openSignedIn(page, `${base}/dashboard/environments/${env.id}/audit-log`, operator);
    await expect.poll(() => heading(page, 'Audit log').count(), waitLong).toBe(1);
    await expect.poll(async () => (await actionCells(page)).includes('document.deleted'), waitLong).toBe(true);
    // Newest first: the environment's own trail (its secret key, Ada's creation) comes last.
    const all = await actionCells(page);
    expect(all.slice(0, 3)).toEqual(['document.shared', 'document.deleted', 'document.shared']);
    expect(all.at(-1)).toBe('secret_key.created');
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByLabel('Action', { exact: true }).fill('document.shared');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('action'), waitLong).toBe('document.shared');
    await expect.poll(() => actionCells(page), waitLong).toEqual(['document.shared', 'document.shared']);
    const links = page.locator('tbody tr td:nth-child(2) a');
    expect(await links.nth(0).getAttribute('href')).toBe(`/dashboard/environments/${env.id}/audit-log/${second.id}`);
    expect(await links.nth(1).getAttribute('href')).toBe(`/dashboard/environments/${env.id}/audit-log/${first.id}`);

    // The filtered view is a deep link.
    await page.reload();
    await expect.poll(() => actionCells(page), waitLong).toEqual(['document.shared', 'document.shared']);
    expect(await page.getByLabel('Action', { exact: true }).inputValue()).toBe('document.shared');

    await page.getByLabel('Action', { exact: true }).fill('nothing.like.this');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByText('No audit event matches these filters.').count(), waitLong).toBe(1);
    // From the keyboard: Enter applied the filter and focus stayed in the field.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('audit-action');
    expect(await accessibilityProblems(page)).toEqual([]);

    // A time range: the local time typed is sent, and kept in the URL, as the instant it means.
    const hourAgo = new Date(t.clock.now().getTime() - HOUR);
    const typed = await page.evaluate((iso) => {
      const at = new Date(iso);
      return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    }, hourAgo.toISOString());
    await page.getByLabel('Action', { exact: true }).fill('');
    await page.getByLabel('Occurred before', { exact: true }).fill(typed);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('occurredBefore'), waitLong)
      .toBe(new Date(Math.floor(hourAgo.getTime() / 60_000) * 60_000).toISOString());
    await expect.poll(() => actionCells(page), waitLong).toEqual(['report.exported']);
    expect(await page.locator('tbody tr td:nth-child(2) a').getAttribute('href')).toBe(`/dashboard/environments/${env.id}/audit-log/${report.id}`);
    await page.getByLabel('Occurred before', { exact: true }).fill('');

    // A filter the server refuses shows its problem+json.
    await page.getByLabel('Actor id', { exact: true }).fill('not-a-uuid');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), waitLong).toContain('invalid_request');

    await page.getByRole('link', { name: 'Clear filters' }).click();
    await expect.poll(() => new URL(page.url()).search, waitLong).toBe('');
    expect(await page.getByLabel('Actor id', { exact: true }).inputValue()).toBe('');
    await expect.poll(async () => (await actionCells(page)).length, waitLong).toBe(all.length);
    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it("pages to older events with the server's cursor, kept in the URL", async () => {
    const paged = await t.given.environment();
    // One after another, so id order (the log's) and sequence order agree.
    for (let n = 0; n < 60; n++) await appended(t, paged, { action: 'page.viewed', metadata: { n } });
    const operator = await givenOperator(t);
    const { context, page } = await watchedPage(stage);
    await openSignedIn(page, `${base}/dashboard/environments/${paged.id}/audit-log`, operator);
    await expect.poll(() => page.locator('tbody tr').count(), waitLong).toBe(50);
    const newest = await page.locator('tbody tr td:nth-child(6)').allTextContents();
    expect(newest.map(Number)).toEqual([...newest.map(Number)].sort((a, b) => b - a));

    await page.getByRole('link', { name: 'Older events' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('cursor'), waitLong).not.toBeNull();
    // 60 appended and the environment's first secret key: 11 older ones, none shown before.
    await expect.poll(() => page.locator('tbody tr').count(), waitLong).toBe(11);
    const older = await page.locator('tbody tr td:nth-child(6)').allTextContents();
    expect(older.some((sequence) => newest.includes(sequence))).toBe(false);
    expect(Math.max(...older.map(Number))).toBeLessThan(Math.min(...newest.map(Number)));
    expect(await page.getByRole('link', { name: 'Older events' }).count()).toBe(0);

    await page.reload();
    await expect.poll(() => page.locator('tbody tr').count(), waitLong).toBe(11);
    await page.getByRole('link', { name: 'Newest events' }).click();
    await expect.poll(() => page.locator('tbody tr').count(), waitLong).toBe(50);
    expect(new URL(page.url()).searchParams.get('cursor')).toBeNull();
    await context.close();
  });

  it('opens an event detail by deep link with every field, the metadata as JSON, and users linking to their page', async () => {
    const correlationId = randomUUID();
    const event = await appended(t, env, {
      action: 'invoice.paid', result: 'success', actor: { type: 'user', id: ada.id },
      targets: [{ type: 'invoice', id: 'inv_7' }, { type: 'user', id: ada.id }],
      context: { ipAddress: '203.0.113.9', userAgent: 'TestAgent/1.0' }, correlationId,
      metadata: { amount: 1200, currency: 'EUR', lines: [{ sku: 'A-1' }] },
    });
    const operator = await givenOperator(t);
    const { context, page, foreign, refused } = await watchedPage(stage);
    await openSignedIn(page, `${base}/dashboard/environments/${env.id}/audit-log/${event.id}`, operator);
    await expect.poll(() => heading(page, 'Audit event: invoice.paid').count(), waitLong).toBe(1);
    const field = (name: string) => page.locator('dl.fields dt', { hasText: new RegExp(`^${name}$`) }).locator('xpath=following-sibling::dd[1]');
    expect(await field('Result').textContent()).toBe('success');
    expect(await field('Sequence').textContent()).toBe(String(event.sequence));
    expect(await field('IP address').textContent()).toBe('203.0.113.9');
    expect(await field('User agent').textContent()).toBe('TestAgent/1.0');
    expect(await field('Event id').textContent()).toBe(event.id);
    expect(await field('Targets').textContent()).toBe(`invoice inv_7user ${ada.id}`);
    expect(await field('Written by').textContent()).toMatch(/^A secret key \(key [0-9a-f-]{36}\)$/);
    expect(await field('Correlation id').textContent()).toBe(correlationId);
    expect(JSON.parse((await page.getByLabel('Metadata').textContent())!)).toEqual({ amount: 1200, currency: 'EUR', lines: [{ sku: 'A-1' }] });
    expect(await page.getByLabel('Metadata').textContent()).toContain('\n  "currency": "EUR"');
    expect(await accessibilityProblems(page)).toEqual([]);

    const userLinks = page.getByRole('link', { name: ada.id });
    expect(await userLinks.count()).toBe(2); // the actor and the second target
    for (const href of await userLinks.evaluateAll((links) => links.map((link) => link.getAttribute('href')))) {
      expect(href).toBe(`/dashboard/environments/${env.id}/users/${ada.id}`);
    }
    await field('Actor').getByRole('link').click();
    await expect.poll(() => heading(page, ada.email).count(), waitLong).toBe(1);

    // An unknown event is the problem the Server API answered.
    await page.goto(`${base}/dashboard/environments/${env.id}/audit-log/0193e0a0-0000-7000-8000-00000000dead`);
    await expect.poll(() => page.getByRole('alert').textContent(), waitLong).toContain('resource_not_found');
    expect(await accessibilityProblems(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('shows, with Live on, an event caused through the Server API without reloading, and announces it', async () => {
    const bob = await createdUser(t, env, `bob-${tag}@example.com`);
    const operator = await givenOperator(t);
    const { context, page, foreign, refused } = await watchedPage(stage);
    await openSignedIn(page, `${base}/dashboard/environments/${env.id}/audit-log`, operator);
    const liveButton = page.getByRole('button', { name: 'Live' });
    await expect.poll(() => liveButton.getAttribute('aria-pressed'), waitLong).toBe('false');
    await expect.poll(async () => (await actionCells(page)).length, waitLong).toBeGreaterThan(0);
    const status = page.locator('.audit-live [role="status"]');
    expect(await status.getAttribute('aria-live')).toBe('polite');
    expect(await status.textContent()).toBe('Live is off.');

    await liveButton.click();
    await expect.poll(() => liveButton.getAttribute('aria-pressed'), waitLong).toBe('true');
    expect(new URL(page.url()).searchParams.get('live')).toBe('true');
    // The feed knows where it starts (the newest sequence) before anything happens.
    await expect.poll(() => status.textContent(), waitLong).toBe('Live: watching for new events.');
    expect(await page.locator('tbody tr.audit-fresh').count()).toBe(0);

    const banned = await t.server(env).post(`/users/${bob.id}/ban`);
    expect(banned.statusCode, banned.body).toBe(200);
    const freshRow = page.locator('tbody tr.audit-fresh');
    await expect.poll(() => freshRow.locator('td:nth-child(2) a').allTextContents(), waitLong).toEqual(['user.banned']);
    expect(await freshRow.locator('td:nth-child(5)').textContent()).toBe(`user …${bob.id.slice(-8)}`);
    expect(await page.locator('tbody tr').first().getAttribute('class')).toBe('audit-fresh');
    expect(await status.textContent()).toBe('Live: 1 new event since Live was switched on.');
    expect(await accessibilityProblems(page)).toEqual([]);

    // A hidden tab stops polling; shown again, it asks at once and the event that happened meanwhile appears.
    await setTabHidden(page, true);
    await expect.poll(() => status.textContent(), waitLong).toBe('Live: paused while this tab is hidden.');
    const unbanned = await t.server(env).post(`/users/${bob.id}/unban`);
    expect(unbanned.statusCode, unbanned.body).toBe(200);
    await setTabHidden(page, false);
    await expect.poll(() => freshRow.locator('td:nth-child(2) a').allTextContents(), waitLong).toEqual(['user.unbanned', 'user.banned']);
    expect(await status.textContent()).toBe('Live: 2 new events since Live was switched on.');

    // A live deep link starts Live again after a reload; off forgets the feed and leaves the URL.
    await page.reload();
    await expect.poll(() => status.textContent(), waitLong).toBe('Live: watching for new events.');
    await liveButton.click();
    await expect.poll(() => liveButton.getAttribute('aria-pressed'), waitLong).toBe('false');
    expect(new URL(page.url()).searchParams.get('live')).toBeNull();
    expect(await status.textContent()).toBe('Live is off.');
    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('lists, in the outbox, the mail an invitation sent, with its text part', async () => {
    const invitee = `invitee-${tag}@example.com`;
    const invited = await t.server(env).post('/invitations', { email: invitee, publicMetadata: {}, privateMetadata: {} });
    expect(invited.statusCode, invited.body).toBe(201);
    const [mail] = await t.outbox(env, invitee);
    const operator = await givenOperator(t);
    const { context, page, foreign, refused } = await watchedPage(stage);
    await openSignedIn(page, `${base}/dashboard/environments/${env.id}/outbox`, operator);
    await expect.poll(() => heading(page, 'Mail outbox').count(), waitLong).toBe(1);
    const article = page.getByRole('article', { name: mail!.subject });
    await expect.poll(() => article.count(), waitLong).toBe(1);
    expect(await article.locator('dd').first().textContent()).toBe(invitee);
    expect(await article.getByLabel(`Text of “${mail!.subject}” to ${invitee}`).textContent()).toBe(mail!.text);
    expect(await article.getByText('HTML source (not rendered)').count()).toBe(1);
    expect(await page.locator('iframe').count()).toBe(0);
    expect(await accessibilityProblems(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  describe('with an SMTP server configured', () => {
    let smtpApp: TestApp;
    let smtp: SmtpServer;
    let smtpBase: string;
    beforeAll(async () => {
      smtp = await startSmtpServer();
      smtpApp = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${smtp.port}` }, { ownDatabase: true });
      smtpBase = await listen(smtpApp);
    }, 180_000);
    afterAll(async () => {
      await smtpApp?.close();
      await smtp?.close();
    });

    it('says plainly that there is no outbox to read', async () => {
      const smtpEnv = await smtpApp.given.environment();
      const operator = await givenOperator(smtpApp);
      const { context, page, foreign, refused } = await watchedPage({ browser: stage.browser, base: smtpBase });
      await openSignedIn(page, `${smtpBase}/dashboard/environments/${smtpEnv.id}/outbox`, operator);
      await expect.poll(() => page.locator('.notice').textContent(), waitLong).toContain('The outbox is not available');
      expect(await page.getByRole('article').count()).toBe(0);
      expect(await accessibilityProblems(page)).toEqual([]);
      expect(foreign).toEqual([]);
      expect(refused).toEqual([]);
      await context.close();
    });
  });
});

import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrolTotp } from '../factors/support.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { accessibilityProblems, browserStage, hasChromium, launchChromium } from '../helpers/browser.js';
import { PASSWORD } from '../helpers/given.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { expectProblem } from '../helpers/problem.js';
import { heading, signedInPage } from './dashboard-stage.js';

/** The customer's support landing page, on its own origin. */
const LANDING_PAGE = '<!doctype html><title>support landing</title><p>landed</p>';

const poll = { timeout: PATIENCE_MS };
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe.skipIf(!hasChromium)('the dashboard\'s user screens in a real browser (headless Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let stage: Awaited<ReturnType<typeof browserStage>>;
  let env: TestEnv;
  let base: string;
  const tag = `users${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    t = await startTestApp();
    stage = await browserStage(t, tag, LANDING_PAGE);
    env = stage.env;
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const patched = await t.admin.patch(`/environments/${env.id}`, { settings: { impersonationLandingUrl: `${stage.appOrigin}/support`, plan: { impersonationQuotaPerMonth: 5 } } });
    expect(patched.statusCode, patched.body).toBe(200);
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await stage?.close();
    await t?.close();
  });

  const stored = async (userId: string) => (await t.server(env).get(`/users/${userId}`)).json();
  const sessionsOf = async (userId: string) => (await t.server(env).get(`/users/${userId}/sessions`)).json().items as { id: string; status: string }[];

  it('creates a user, edits each metadata bag within the budget, revokes sessions, resets factors and deletes the user', async () => {
    const { context, page, foreign, refused } = await signedInPage({ t, base, browser }, `/environments/${env.id}/users`);
    await expect.poll(() => heading(page, 'Users').count(), poll).toBe(1);
    await page.getByRole('link', { name: 'Create user' }).click();
    await expect.poll(() => heading(page, 'Create user').count(), poll).toBe(1);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/environments/${env.id}/users/new`);
    await page.reload();
    await expect.poll(() => heading(page, 'Create user').count(), poll).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);

    // A refusal is the server's problem+json, shown beside the form.
    const email = `${tag}-created@example.com`;
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password (optional)').fill('short');
    await page.getByRole('button', { name: 'Create user' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), poll).toContain('weak_password');
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Last name').fill('Lovelace');
    await page.getByLabel('Password (optional)').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create user' }).click();
    await expect.poll(() => heading(page, email).count(), poll).toBe(1);
    const userId = new URL(page.url()).pathname.split('/').at(-1)!;
    expect(await stored(userId)).toMatchObject({ email, name: 'Ada Lovelace', status: 'active' });

    // Two sessions and an authenticator app, then a reload of the deep link shows them.
    const user = { id: userId, email, password: PASSWORD };
    const [first] = [await t.given.session(env, user), await t.given.session(env, user)];
    await enrolTotp(t, env, first.token);
    await page.reload();
    await expect.poll(() => page.getByRole('button', { name: /^Revoke the session started/ }).count(), poll).toBe(2);
    await expect.poll(() => page.getByRole('button', { name: 'Reset factors' }).count(), poll).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);

    // Metadata: each bag edited as JSON; the budget counts the three bags' compact JSON together as you type.
    const bags = { publicMetadata: { plan: 'pro', seats: 3 }, privateMetadata: { stripeId: 'cus_42' }, unsafeMetadata: { theme: 'dark' } };
    await page.getByLabel('Public metadata').fill(JSON.stringify(bags.publicMetadata, null, 2));
    await page.getByLabel('Private metadata').fill(JSON.stringify(bags.privateMetadata));
    await page.getByLabel('Unsafe metadata').fill(JSON.stringify(bags.unsafeMetadata));
    const used = bytes(bags.publicMetadata) + bytes(bags.privateMetadata) + bytes(bags.unsafeMetadata);
    await expect.poll(() => page.locator('#metadata-budget').textContent(), poll).toContain(`${used} of 8,192 bytes used`);
    await page.getByRole('button', { name: 'Save metadata' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Metadata saved.' }).count(), poll).toBe(1);
    expect(await stored(userId)).toMatchObject(bags);

    // A key removed in the editor is removed on the server (sent as null); the other bags stay as they are.
    await page.getByLabel('Public metadata').fill('{"plan": "pro"}');
    await page.getByRole('button', { name: 'Save metadata' }).click();
    await expect.poll(async () => (await stored(userId)).publicMetadata, poll).toEqual({ plan: 'pro' });
    expect(await stored(userId)).toMatchObject({ privateMetadata: bags.privateMetadata, unsafeMetadata: bags.unsafeMetadata });

    // Invalid JSON and a budget overrun are refused before anything is sent.
    await page.getByLabel('Unsafe metadata').fill('{"theme": ');
    await page.getByRole('button', { name: 'Save metadata' }).click();
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'fix the JSON' }).count(), poll).toBe(1);
    expect(await page.getByLabel('Unsafe metadata').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Unsafe metadata').fill('{"theme": "dark"}');
    await page.getByLabel('Private metadata').fill(JSON.stringify({ blob: 'x'.repeat(8200) }));
    await expect.poll(() => page.locator('#metadata-budget').textContent(), poll).toMatch(/over the limit/);
    await page.getByRole('button', { name: 'Save metadata' }).click();
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'over the 8,192-byte budget' }).count(), poll).toBe(1);
    expect((await stored(userId)).privateMetadata).toEqual(bags.privateMetadata);
    await page.getByLabel('Private metadata').fill(JSON.stringify(bags.privateMetadata));
    expect(await accessibilityProblems(page)).toEqual([]);

    // Sessions: one revoked, then all, each behind a confirmation.
    await page.getByRole('button', { name: /^Revoke the session started/ }).first().click();
    const revokeOne = page.getByRole('dialog', { name: 'Revoke this session?' });
    await expect.poll(() => revokeOne.isVisible(), poll).toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);
    await revokeOne.getByRole('button', { name: 'Revoke session' }).click();
    await expect.poll(async () => (await sessionsOf(userId)).filter((s) => s.status === 'active').length, poll).toBe(1);
    await expect.poll(() => page.getByRole('button', { name: /^Revoke the session started/ }).count(), poll).toBe(1);
    await page.getByRole('button', { name: 'Revoke all sessions' }).click();
    await page.getByRole('dialog', { name: "Revoke all of this user's sessions?" }).getByRole('button', { name: 'Revoke all sessions' }).click();
    await expect.poll(async () => (await sessionsOf(userId)).filter((s) => s.status === 'active').length, poll).toBe(0);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'All sessions were revoked.' }).count(), poll).toBe(1);

    // Factors reset, confirmed.
    expect((await t.server(env).get(`/users/${userId}/mfa`)).json().factors).toHaveLength(1);
    await page.getByRole('button', { name: 'Reset factors' }).click();
    await page.getByRole('dialog', { name: "Reset this user's second factors?" }).getByRole('button', { name: 'Reset factors' }).click();
    await expect.poll(async () => (await t.server(env).get(`/users/${userId}/mfa`)).json().factors, poll).toEqual([]);
    await expect.poll(() => page.getByText('No second factor enrolled.').count(), poll).toBe(1);

    // Delete, confirmed: the user shows as deleted, and a repeat DELETE is 403 user_deleted.
    await page.getByRole('button', { name: 'Delete user' }).click();
    const deleting = page.getByRole('dialog', { name: 'Delete this user?' });
    await expect.poll(() => deleting.isVisible(), poll).toBe(true);
    await deleting.getByRole('button', { name: 'Delete user' }).click();
    await expect.poll(() => page.locator('.badge').first().textContent(), poll).toBe('Deleted');
    expect(await page.getByRole('button', { name: 'Delete user' }).count()).toBe(0);
    expect((await stored(userId)).status).toBe('deleted');
    expectProblem(await t.server(env).delete(`/users/${userId}`), 403, 'user_deleted');
    expect(await accessibilityProblems(page)).toEqual([]);

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('impersonates with a required reason: the quota is shown, a new tab opens signed in as the user, and the events appear in their audit events and in the audit log', async () => {
    const target = await t.given.user(env, { email: `${tag}-target@example.com` });
    const { operator, context, page, foreign, refused } = await signedInPage({ t, base, browser }, `/environments/${env.id}/users/${target.id}`);
    await expect.poll(() => heading(page, target.email!).count(), poll).toBe(1);
    const before = (await t.server(env).get('/impersonations/usage')).json();
    await expect.poll(() => page.locator('#impersonation-quota').textContent(), poll)
      .toContain(`${before.used} of 5 impersonations used in ${before.month} (UTC); ${before.remaining} left`);
    expect(await accessibilityProblems(page)).toEqual([]);

    // No reason, no mint.
    await page.getByRole('button', { name: 'Impersonate in a new tab' }).click();
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'Give a reason' }).count(), poll).toBe(1);
    expect((await t.server(env).get('/impersonations/usage')).json().used).toBe(before.used);

    await page.getByLabel('Reason (required)').fill('Ticket #501: the invoices page is blank');
    const opened = context.waitForEvent('page', { timeout: PATIENCE_MS });
    await page.getByRole('button', { name: 'Impersonate in a new tab' }).click();
    const tab = await opened;
    await tab.waitForURL(`${stage.appOrigin}/support`, { timeout: PATIENCE_MS });
    expect(await tab.evaluate(() => window.opener)).toBeNull();
    const me = await tab.goto(`${stage.frontend}/_svc/me`);
    expect(me!.status()).toBe(200);
    expect(await me!.json()).toMatchObject({ id: target.id, actor: { type: 'operator', id: operator.id, impersonatorId: operator.id } });

    await expect.poll(() => page.locator('#impersonation-quota').textContent(), poll).toContain(`${before.used + 1} of 5 impersonations used`);
    const created = page.getByRole('link', { name: 'impersonation.created' });
    await expect.poll(() => created.count(), poll).toBe(1);
    const [event] = (await t.server(env).get(`/audit-events?action=impersonation.created&targetId=${target.id}`)).json().items;
    expect(event).toMatchObject({ actor: { type: 'operator', id: operator.id }, metadata: { reason: 'Ticket #501: the invoices page is blank' } });
    expect(await created.getAttribute('href')).toBe(`/dashboard/environments/${env.id}/audit-log/${event.id}`);
    expect(await accessibilityProblems(page)).toEqual([]);

    // The audit log names both steps, newest first, and the event's page carries the reason.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click();
    await expect.poll(() => heading(page, 'Audit log').count(), poll).toBe(1);
    const impersonationSteps = async () => (await page.locator('tbody tr td:nth-child(2) a').allTextContents()).filter((action) => action.startsWith('impersonation.'));
    await expect.poll(impersonationSteps, poll).toEqual(['impersonation.redeemed', 'impersonation.created']);
    await page.locator('tbody tr td:nth-child(2) a', { hasText: 'impersonation.created' }).click();
    await page.waitForURL(`${base}/dashboard/environments/${env.id}/audit-log/${event.id}`, { timeout: PATIENCE_MS });
    await expect.poll(() => page.locator('main').textContent(), poll).toContain('Ticket #501: the invoices page is blank');

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });
});

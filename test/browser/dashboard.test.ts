import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from 'uuidv7';
import { jsonb } from '../../src/platform/db/database.js';
import { codeAt, STEP_MS } from '../factors/support.js';
import type { TestApp, TestEnv } from '../helpers/app.js';
import { accessibilityProblems, hasChromium } from '../helpers/browser.js';
import { asDashboard, givenOperator, signedInOperator } from '../operators/support.js';
import { type DashboardStage, heading, signIn, startDashboardStage, watchedPage } from './dashboard-stage.js';

const USERS = 10_000;
const PAGE_SIZE = 25;
const SEED_BATCH = 1000;

/**
 * Puts `count` users straight into the test app's database, a thousand rows a statement: 10,000 through the
 * Server API took most of a minute. Each row is what POST /users stores for a passwordless user (a verified
 * email, its primary address under the user's own id as migration 0019 gives it, ids in creation order);
 * nothing else (an audit event) is needed by a screen that lists and finds them. Answers their emails.
 */
async function seedUsers(t: TestApp, env: TestEnv, count: number, tag: string) {
  const emails = Array.from({ length: count }, (_, i) => `${tag}-${String(i).padStart(5, '0')}@example.com`);
  const now = t.clock.now();
  for (let start = 0; start < count; start += SEED_BATCH) {
    const batch = emails.slice(start, start + SEED_BATCH).map((email, i) => ({ email, id: uuidv7(), n: start + i }));
    await t.db.transaction().execute(async (trx) => {
      await trx.insertInto('users').values(batch.map(({ email, id, n }) => ({
        environment_id: env.id, id, email, email_verified_at: now, password_hash: null, name: `Seeded User ${n}`, first_name: 'Seeded',
        last_name: `User ${n}`, locale: null, status: 'active' as const, registration_state: 'complete' as const,
        public_metadata: jsonb({}), private_metadata: jsonb({}), unsafe_metadata: jsonb({}), locked_until: null, last_sign_in_attempt_at: null,
        created_at: now, updated_at: now, deleted_at: null,
      }))).execute();
      await trx.insertInto('email_addresses').values(batch.map(({ email, id }) => ({
        environment_id: env.id, id, user_id: id, email, is_primary: true, verified_at: now, released_at: null,
        code_hash: null, code_expires_at: null, created_at: now,
      }))).execute();
    });
  }
  const listed = await t.server(env).get('/users?limit=1');
  expect(listed.json().items[0].email).toBe(emails[0]);
  return emails;
}

/** The operator's second factor, enrolled with their session as the dashboard would; the clock then moves a step, so the next code is fresh. */
async function enrolOperatorTotp(t: TestApp, cookie: string) {
  const enrol = await asDashboard(t, 'POST', '/api/admin/v1/operators/me/mfa/totp', { cookie });
  expect(enrol.statusCode, enrol.body).toBe(201);
  const { factorId, secret } = enrol.json();
  const confirmed = await asDashboard(t, 'POST', `/api/admin/v1/operators/me/mfa/totp/${factorId}/confirm`, { cookie, body: { code: codeAt(t, secret) } });
  expect(confirmed.statusCode, confirmed.body).toBe(200);
  t.clock.advance(STEP_MS);
  return secret as string;
}

describe.skipIf(!hasChromium)('the operator dashboard in a real browser (headless Chromium)', () => {
  let stage: DashboardStage;
  let t: TestApp;
  let base: string;
  let env: TestEnv;
  let emails: string[];
  const tag = `dash${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    stage = await startDashboardStage(tag);
    ({ t, base, env } = stage);
    emails = await seedUsers(t, env, USERS, tag);
  }, 180_000);
  afterAll(() => stage?.close());

  it('signs an operator in, picks the environment, finds one user among 10,000 by email, bans and unbans them, and edits their metadata', async () => {
    const operator = await givenOperator(t);
    const { context, page, foreign, refused } = await watchedPage(stage);
    await page.goto(`${base}/dashboard`);
    await expect.poll(() => heading(page, 'Sign in to the dashboard').count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    expect(await accessibilityProblems(page)).toEqual([]);

    // A wrong password: the problem+json's detail and code are shown, and nothing else happens.
    await signIn(page, operator.email, 'not-the-password-1');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('invalid_credentials');
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByLabel('Password', { exact: true }).fill(operator.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => heading(page, 'Environments').count()).toBe(1);
    expect(await page.title()).toBe('Environments · Gatehouse dashboard');
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByRole('link', { name: tag, exact: true }).click();
    await expect.poll(() => heading(page, 'Users').count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/environments/${env.id}/users`);
    await expect.poll(() => page.locator('tbody tr').count()).toBe(PAGE_SIZE);
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).getAttribute('aria-current')).toBe('page');
    expect(await accessibilityProblems(page)).toEqual([]);

    // The server's cursor, kept in the URL: the next page is another 25 users.
    const firstPage = await page.locator('tbody tr td:first-child').allTextContents();
    await page.getByRole('link', { name: 'Next page' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('cursor')).not.toBeNull();
    await expect.poll(async () => (await page.locator('tbody tr td:first-child').allTextContents()).some((email) => firstPage.includes(email))).toBe(false);
    expect(await page.locator('tbody tr').count()).toBe(PAGE_SIZE);

    const target = emails[1234];
    expect(await page.getByLabel('Search by').inputValue()).toBe('email');
    await page.getByLabel('Email contains').fill(target);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    expect(new URL(page.url()).searchParams.get('email')).toBe(target);
    expect(new URL(page.url()).searchParams.get('cursor')).toBeNull();
    await page.getByRole('link', { name: target }).click();

    await expect.poll(() => heading(page, target).count()).toBe(1);
    const userId = new URL(page.url()).pathname.split('/').at(-1)!;
    expect((await t.server(env).get(`/users/${userId}`)).json().email).toBe(target);
    await expect.poll(() => page.getByText('No sessions.').count()).toBe(1);
    expect(await page.locator('.badge').textContent()).toBe('Active');
    expect(await accessibilityProblems(page)).toEqual([]);

    // The user's app writes a key while the screen is open; the ban below brings it into the screen's copy of the user.
    expect((await t.server(env).patch(`/users/${userId}/metadata`, { unsafeMetadata: { theme: 'dark' } })).statusCode).toBe(200);

    // Escape closes the confirmation and bans no one.
    await page.getByRole('button', { name: 'Ban user' }).click();
    const dialog = page.getByRole('dialog', { name: 'Ban this user?' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect((await t.server(env).get(`/users/${userId}`)).json().status).toBe('active');

    await page.getByRole('button', { name: 'Ban user' }).click();
    await dialog.getByRole('button', { name: 'Ban user' }).click();
    await expect.poll(() => page.locator('.badge').textContent()).toBe('Banned');
    expect(await page.getByRole('status').filter({ hasText: 'is banned' }).count()).toBe(1);
    expect((await t.server(env).get(`/users/${userId}`)).json().status).toBe('banned');

    await page.getByRole('button', { name: 'Unban user' }).click();
    await page.getByRole('dialog', { name: 'Unban this user?' }).getByRole('button', { name: 'Unban user' }).click();
    await expect.poll(() => page.locator('.badge').textContent()).toBe('Active');
    expect((await t.server(env).get(`/users/${userId}`)).json().status).toBe('active');
    expect(await accessibilityProblems(page)).toEqual([]);

    // Their metadata, edited in place: the private bag is stored, and the key written meanwhile is kept (the editor
    // sends what the operator changed from what it showed, never the app's key as removed).
    await page.getByLabel('Private metadata').fill('{"supportTier": "gold"}');
    await page.getByRole('button', { name: 'Save metadata' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Metadata saved.' }).count()).toBe(1);
    expect((await t.server(env).get(`/users/${userId}`)).json())
      .toMatchObject({ privateMetadata: { supportTier: 'gold' }, publicMetadata: {}, unsafeMetadata: { theme: 'dark' } });

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it("opens a deep link after sign-in and the operator's second factor", async () => {
    const operator = await signedInOperator(t);
    const secret = await enrolOperatorTotp(t, operator.cookie);
    const user = (await t.server(env).get(`/users?emailSearch=${encodeURIComponent(emails[7])}`)).json().items[0];
    const { context, page } = await watchedPage(stage);
    await page.goto(`${base}/dashboard/environments/${env.id}/users/${user.id}`);
    await expect.poll(() => heading(page, 'Sign in to the dashboard').count()).toBe(1);
    await signIn(page, operator.email, operator.password);

    await expect.poll(() => heading(page, 'Second factor').count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel('Code', { exact: true }).fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('invalid_code');
    await page.getByLabel('Code', { exact: true }).fill(codeAt(t, secret));
    await page.getByRole('button', { name: 'Verify' }).click();

    await expect.poll(() => heading(page, emails[7]).count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/environments/${env.id}/users/${user.id}`);
    await context.close();
  });

  it('shows a missing user as the problem the Server API answered', async () => {
    const operator = await givenOperator(t);
    const { context, page } = await watchedPage(stage);
    await page.goto(`${base}/dashboard/environments/${env.id}/users/0193e0a0-0000-7000-8000-00000000dead`);
    await signIn(page, operator.email, operator.password);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('user_not_found');
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });
});

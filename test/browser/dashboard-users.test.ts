import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import { accessibilityProblems, hasChromium } from '../helpers/browser.js';
import { givenOperator } from '../operators/support.js';
import { type DashboardStage, heading, signIn, startDashboardStage, watchedPage } from './dashboard-stage.js';

const PAGE_SIZE = 25;
const WALKERS = 30;

const emailCells = (page: Page) => page.locator('tbody tr td:first-child').allTextContents();

describe.skipIf(!hasChromium)('the users screen: one search by email, name or metadata, kept in the URL (headless Chromium)', () => {
  let stage: DashboardStage;
  let t: TestApp;
  let base: string;
  let env: TestEnv;
  let operator: { email: string; password: string };
  const tag = `users${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    stage = await startDashboardStage(tag);
    ({ t, base, env } = stage);
    const server = t.server(env);
    const people = [
      { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', publicMetadata: { plan: 'pro', onboarding: { completed: true } }, privateMetadata: { tier: 2 } },
      { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', publicMetadata: { plan: 'free', onboarding: { completed: false } }, privateMetadata: { tier: '2' } },
      { email: 'byron@example.com', firstName: 'Augusta', lastName: 'Lovelace', publicMetadata: { plan: 'pro' }, privateMetadata: {} },
      ...Array.from({ length: WALKERS }, (_, i) => ({ email: `walker-${String(i).padStart(2, '0')}@example.com`, firstName: `Walker${i}`, lastName: 'Johnny' })),
    ];
    for (const person of people) expect((await server.post('/users', person)).statusCode).toBe(201);
    operator = await givenOperator(t);
  }, 180_000);
  afterAll(() => stage?.close());

  /** A fresh browser profile, signed in, on the users screen with `search`; it fails the test on foreign requests or CSP reports. */
  async function signedInOn(search: string) {
    const watched = await watchedPage(stage);
    const { page } = watched;
    await page.goto(`${base}/dashboard/environments/${env.id}/users${search}`);
    await expect.poll(() => heading(page, 'Sign in to the dashboard').count()).toBe(1);
    await signIn(page, operator.email, operator.password);
    await expect.poll(() => heading(page, 'Users').count()).toBe(1);
    return watched;
  }

  const params = (page: Page) => Object.fromEntries(new URL(page.url()).searchParams);

  it('searches by name from the field choice, keeps the search in the URL, and lands on the same results after a reload', async () => {
    const { context, page, foreign, refused } = await signedInOn('');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(PAGE_SIZE);
    expect(await page.getByLabel('Search by').inputValue()).toBe('email');

    await page.getByLabel('Search by').selectOption({ label: 'Name' });
    await page.getByLabel('Name contains').fill('LOVELACE');
    await page.keyboard.press('Enter');
    await expect.poll(() => emailCells(page)).toEqual(['ada@example.com', 'byron@example.com']);
    expect(params(page)).toEqual({ name: 'LOVELACE' });
    expect(await page.locator('caption').textContent()).toBe('Users whose name contains “LOVELACE”');
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.reload();
    await expect.poll(() => emailCells(page)).toEqual(['ada@example.com', 'byron@example.com']);
    expect(await page.getByLabel('Search by').inputValue()).toBe('name');
    expect(await page.getByLabel('Name contains').inputValue()).toBe('LOVELACE');

    // Nobody by that name: the empty state says what was searched.
    await page.getByLabel('Name contains').fill('nobody at all');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.empty').textContent()).toBe('No user whose name contains “nobody at all”.');
    expect(await page.locator('tbody tr').count()).toBe(0);
    expect(await accessibilityProblems(page)).toEqual([]);

    // An email search from the same form replaces the name search in the URL.
    await page.getByLabel('Search by').selectOption({ label: 'Email' });
    await page.getByLabel('Email contains').fill('grace@');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => emailCells(page)).toEqual(['grace@example.com']);
    expect(params(page)).toEqual({ email: 'grace@' });

    // "Show all users" clears the search: everyone again, from page 1.
    await page.getByRole('button', { name: 'Show all users' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(PAGE_SIZE);
    expect(params(page)).toEqual({});
    expect(await page.getByLabel('Email contains').inputValue()).toBe('');
    expect(await page.getByRole('button', { name: 'Show all users' }).count()).toBe(0);

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('searches public and private metadata by key = value: JSON values as JSON, nested keys by dots, a malformed search told and not sent', async () => {
    const { context, page, foreign, refused } = await signedInOn('');
    await page.getByLabel('Search by').selectOption({ label: 'Public metadata' });
    expect(await page.getByLabel('Public metadata (key = value)').getAttribute('aria-describedby')).toBe('users-search-hint');
    await page.getByLabel('Public metadata (key = value)').fill('plan = pro');
    await page.keyboard.press('Enter');
    await expect.poll(() => emailCells(page)).toEqual(['ada@example.com', 'byron@example.com']);
    expect(params(page)).toEqual({ metadata: 'plan = pro' });
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByLabel('Public metadata (key = value)').fill('onboarding.completed = true');
    await page.keyboard.press('Enter');
    await expect.poll(() => emailCells(page)).toEqual(['ada@example.com']);

    // The private bag, where 2 is a number and "2" a string.
    await page.getByLabel('Search by').selectOption({ label: 'Private metadata' });
    await page.getByLabel('Private metadata (key = value)').fill('tier = 2');
    await page.keyboard.press('Enter');
    await expect.poll(() => emailCells(page)).toEqual(['ada@example.com']);
    expect(params(page)).toEqual({ metadata: 'tier = 2', bag: 'private' });
    await page.getByLabel('Private metadata (key = value)').fill('tier = "2"');
    await page.keyboard.press('Enter');
    await expect.poll(() => emailCells(page)).toEqual(['grace@example.com']);

    // A deep link to a private metadata search lands on it.
    await page.goto(`${base}/dashboard/environments/${env.id}/users?metadata=${encodeURIComponent('tier = 2')}&bag=private`);
    await expect.poll(() => emailCells(page)).toEqual(['ada@example.com']);
    expect(await page.getByLabel('Search by').inputValue()).toBe('private');

    // Not key = value: said on the screen, and no search goes to the server.
    const searches: string[] = [];
    page.on('request', (request) => { if (request.url().includes('/users')) searches.push(request.url()); });
    await page.getByLabel('Private metadata (key = value)').fill('tier');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Write the metadata search as key = value, for example plan = pro.');
    expect(params(page)).toEqual({ metadata: 'tier', bag: 'private' });
    expect(await page.locator('tbody tr').count()).toBe(0);
    expect(searches).toEqual([]);
    expect(await accessibilityProblems(page)).toEqual([]);

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it("pages a name search's matches by the server's cursor, each once, and keeps the search on every page", async () => {
    const { context, page } = await signedInOn('?name=johnny');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(PAGE_SIZE);
    const first = await emailCells(page);
    expect(first).toEqual(Array.from({ length: PAGE_SIZE }, (_, i) => `walker-${String(i).padStart(2, '0')}@example.com`));

    await page.getByRole('link', { name: 'Next page' }).click();
    await expect.poll(() => emailCells(page)).toEqual(Array.from({ length: WALKERS - PAGE_SIZE }, (_, i) => `walker-${String(PAGE_SIZE + i)}@example.com`));
    expect(params(page)).toMatchObject({ name: 'johnny', cursor: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);

    await page.reload();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(WALKERS - PAGE_SIZE);
    await page.getByRole('link', { name: 'First page' }).click();
    await expect.poll(() => emailCells(page)).toEqual(first);
    expect(params(page)).toEqual({ name: 'johnny' });
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });
});

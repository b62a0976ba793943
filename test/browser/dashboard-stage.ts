import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import type { AppOptions } from '../../src/app.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { launchChromium } from '../helpers/browser.js';
import { givenOperator } from '../operators/support.js';

/** What a dashboard browser test stands on: the test app on a port of its own at `base`, an environment, and Chromium. */
export interface DashboardStage {
  t: TestApp;
  base: string;
  env: TestEnv;
  browser: Browser;
  close: () => Promise<void>;
}

export const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name });

/** `heading` matched whole and case-sensitively, for screens where a heading's name is part of another's. */
export const exactHeading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });

export async function signIn(page: Page, email: string, password: string) {
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Makes the app listen on a free port: a browser needs a real socket, where the other tests inject. Answers its origin. */
export async function listen(t: TestApp) {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

/**
 * The test app listening, an environment named `tag` and headless Chromium; `close` ends both. `app` and
 * `database` go to startTestApp (a file that keeps jobs queued, `jobsInBackground: false`, takes a database
 * of its own on PostgreSQL, where no other file's worker claims them).
 */
export async function startDashboardStage(tag: string, app: Partial<AppOptions> = {}, database: { ownDatabase?: boolean } = {}): Promise<DashboardStage> {
  const t = await startTestApp(app, database);
  try {
    const base = await listen(t);
    const env = await t.given.environment({}, tag);
    const browser = await launchChromium();
    return { t, base, env, browser, close: async () => { await browser.close(); await t.close(); } };
  } catch (error) {
    // afterAll gets no stage to close when this throws, so the app would stay open.
    await t.close();
    throw error;
  }
}

/**
 * A fresh browser profile that keeps every request leaving `base` (`foreign`) and every CSP report (`refused`):
 * the dashboard loads nothing from elsewhere and runs nothing its policy refuses, so a test expects both empty.
 */
export async function watchedPage({ browser, base }: Pick<DashboardStage, 'browser' | 'base'>, options: { permissions?: string[] } = {}) {
  const context = await browser.newContext();
  if (options.permissions) await context.grantPermissions(options.permissions, { origin: base });
  const page = await context.newPage();
  const foreign: string[] = [];
  const refused: string[] = [];
  page.on('request', (request) => { if (!request.url().startsWith(base)) foreign.push(request.url()); });
  page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) refused.push(message.text()); });
  return { context, page, foreign, refused };
}

/** A new operator, signed in on a `watchedPage` opened at the dashboard's `path`. */
export async function signedInPage(stage: Pick<DashboardStage, 't' | 'browser' | 'base'>, path: string, options: { permissions?: string[] } = {}) {
  const operator = await givenOperator(stage.t);
  const watched = await watchedPage(stage, options);
  await watched.page.goto(`${stage.base}/dashboard${path}`);
  await signIn(watched.page, operator.email, operator.password);
  return { operator, ...watched };
}

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityProblems, hasChromium, launchChromium } from '../helpers/browser.js';
import { directUrlOf } from '../helpers/database-urls.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { httpRequest, spawnServer, type ServerProcess } from '../helpers/processes.js';
import { heading, watchedPage } from './dashboard-stage.js';

/**
 * The operator's first steps as a fresh install takes them, against a real server process (the embedded
 * database in a data directory, or a PostgreSQL database of this file's own when TEST_DATABASE_URL is set):
 * `npx gatehouse operators create`, its one-time link, the set-password and sign-in screens, the lockout.
 */
const ADMIN_TOKEN = `dashboard-operators-${randomBytes(8).toString('hex')}`;
const ENCRYPTION_KEY = Buffer.alloc(32, 11).toString('base64');
const PASSWORD = 'a long operator passphrase';
const LOCKOUT_ATTEMPTS = 5;

const run = promisify(execFile);

/** A PostgreSQL database of the file's own (an operator is one per database), created now; its URL and how to drop it. */
async function ownPostgres(testDatabaseUrl: string) {
  const name = `gatehouse_dash_ops_${randomBytes(6).toString('hex')}`;
  const query = async (text: string) => {
    const client = new pg.Client({ connectionString: testDatabaseUrl });
    await client.connect();
    try { await client.query(text); } finally { await client.end(); }
  };
  await query(`create database ${name}`);
  return { url: Object.assign(new URL(testDatabaseUrl), { pathname: `/${name}` }).toString(), drop: () => query(`drop database if exists ${name} with (force)`) };
}

describe.skipIf(!hasChromium)('operators in the dashboard: created with the CLI, first password, sign-in, lockout (headless Chromium)', () => {
  let server: ServerProcess;
  let browser: Browser;
  let base: string;
  let database: Record<string, string>;
  let cleanUp: () => Promise<void>;
  const envName = `ops-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    const testDatabaseUrl = process.env.TEST_DATABASE_URL;
    if (testDatabaseUrl) {
      const own = await ownPostgres(testDatabaseUrl);
      // On PostgreSQL the admin API (which the dashboard calls) is on only with a token.
      database = { DATABASE_URL: own.url, DATABASE_DIRECT_URL: directUrlOf(own.url), GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY, GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN };
      cleanUp = own.drop;
    } else {
      // The embedded database: the admin API is always on, and the CLI goes through the server holding it.
      const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-dashboard-operators-'));
      database = { GATEHOUSE_DATA_DIR: dataDir };
      cleanUp = () => rm(dataDir, { recursive: true, force: true });
    }
    server = await spawnServer({ env: database });
    base = `http://127.0.0.1:${server.port}`;
    await gatehouse('env', 'create', '--name', envName);
    browser = await launchChromium();
  }, PATIENCE_MS);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await cleanUp?.();
  });

  /**
   * `npx gatehouse operators create` as an operator types it (the repository's bin for npx): on the embedded
   * database it goes through the running server that holds it, on PostgreSQL straight to the database.
   */
  async function gatehouse(...args: string[]) {
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(GATEHOUSE_|DATABASE_URL$|DATABASE_DIRECT_URL$|DATABASE_POOLER$|TEST_DATABASE_URL$|PORT$)/.test(k))),
      ...database, DATABASE_URL: database.DATABASE_URL ?? '', GATEHOUSE_BASE_URL: base, PORT: String(server.port),
    };
    return run('node', ['bin/gatehouse.js', ...args], { env });
  }

  /** Submits the sign-in form and answers the status of the sign-in request it sent. */
  async function signIn(page: Page, email: string, password: string) {
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    const [response] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/v1/operator-sessions' && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    return response.status();
  }

  const operatorEmail = () => `op-${randomBytes(5).toString('hex')}@example.com`;

  it("creates an operator with the CLI, sets the password on its one-time link's screen, signs in and picks an environment", async () => {
    const email = operatorEmail();
    const { stdout } = await gatehouse('operators', 'create', '--email', email);
    const link = /^setPasswordUrl: (\S+)$/m.exec(stdout)?.[1];
    expect(link, stdout).toMatch(new RegExp(`^${base.replace(/\./g, '\\.')}/dashboard/set-password\\?token=opw_[A-Za-z0-9_-]{20,}$`));

    const { context, page, foreign, refused } = await watchedPage({ browser, base });
    await page.goto(link!);
    await expect.poll(() => heading(page, 'Choose your password').count()).toBe(1);
    expect(await page.title()).toBe('Choose your password · Gatehouse dashboard');
    expect(await accessibilityProblems(page)).toEqual([]);

    // The policy first: a weak password is refused with its reason, and the link still works.
    await page.getByLabel('New password', { exact: true }).fill('short');
    await page.getByRole('button', { name: 'Set password' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('weak_password');
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await expect.poll(() => heading(page, 'Password set').count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByRole('link', { name: 'Sign in' }).click();

    await expect.poll(() => heading(page, 'Sign in to the dashboard').count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    expect(await accessibilityProblems(page)).toEqual([]);
    expect(await signIn(page, email, PASSWORD)).toBe(200);
    await expect.poll(() => heading(page, 'Environments').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);

    await page.getByRole('link', { name: envName, exact: true }).click();
    await expect.poll(() => heading(page, 'Users').count()).toBe(1);
    expect(new URL(page.url()).pathname).toMatch(/^\/dashboard\/environments\/[0-9a-f-]{36}\/users$/);
    await expect.poll(() => page.getByText('This environment has no users yet.').count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);

    // The link works once: opened again (another browser), it is refused and sets nothing.
    const again = await watchedPage({ browser, base });
    await again.page.goto(link!);
    await again.page.getByLabel('New password', { exact: true }).fill('another long passphrase');
    await again.page.getByRole('button', { name: 'Set password' }).click();
    await expect.poll(() => again.page.getByRole('alert').textContent()).toContain('invalid_token');
    expect(await accessibilityProblems(again.page)).toEqual([]);
    await again.context.close();

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('keeps this network out of an operator\'s account after five wrong passwords in a row: the right password is then refused on the screen (429), as after four it is not, and the account itself is not locked', async () => {
    const [fourTimes, fiveTimes] = [operatorEmail(), operatorEmail()];
    for (const email of [fourTimes, fiveTimes]) await gatehouse('operators', 'create', '--email', email, '--password', PASSWORD);
    const { context, page, foreign, refused } = await watchedPage({ browser, base });

    // Four wrong passwords leave the account open: the fifth attempt, right, signs in.
    await page.goto(`${base}/dashboard/sign-in`);
    for (let i = 1; i < LOCKOUT_ATTEMPTS; i++) expect(await signIn(page, fourTimes, `wrong password ${i}`)).toBe(401);
    expect(await signIn(page, fourTimes, PASSWORD)).toBe(200);
    await expect.poll(() => heading(page, 'Environments').count()).toBe(1);
    await context.clearCookies();

    await page.goto(`${base}/dashboard/sign-in`);
    await expect.poll(() => heading(page, 'Sign in to the dashboard').count()).toBe(1);
    for (let i = 1; i <= LOCKOUT_ATTEMPTS; i++) {
      expect(await signIn(page, fiveTimes, `wrong password ${i}`)).toBe(401);
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('invalid_credentials');
    }
    // The sixth attempt, with the right password, is refused to this network (429 rate_limited, the same for a
    // wrong one), so guessing stops here; the account is not locked, so the operator signs in from elsewhere
    // (test/operators/operator-sign-in.test.ts proves that part with two client networks).
    expect(await signIn(page, fiveTimes, PASSWORD)).toBe(429);
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('Too many attempts; try again later.');
    expect(await alert.textContent()).toContain('rate_limited');
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    expect(await heading(page, 'Sign in to the dashboard').count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);

    // Not the browser's doing: the server refuses the right password from this network too, and still takes the other operator's.
    const direct = (email: string) => httpRequest(server.port, {
      method: 'POST', path: '/api/admin/v1/operator-sessions', headers: { origin: base }, body: { email, password: PASSWORD },
    });
    const again = await direct(fiveTimes);
    expect(again.status).toBe(429);
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
    expect((await direct(fourTimes)).status).toBe(200);

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });
});

/**
 * `npm run bench -- dashboard` (issue 30): the operator dashboard's users screen over 1,000,000 users on real
 * PostgreSQL, in headless Chromium (the system's, as the browser tests use):
 * - the time from navigation to an interactive users list (its first row visible and focusable), cold (an
 *   empty browser cache: a first visit) and warm (the app cached: a return visit), and
 * - the time from submitting an email search, a name search, and from following "Next page", to the
 *   expected first row on screen;
 * - the first screen's bundle: what dashboard/dist/index.html loads, gzip-compressed.
 * Each figure is the median of BENCH_DASHBOARD_RUNS runs (min–max alongside). Writes bench/results/dashboard.md.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { machineLine } from './lib/report.js';
import { statsOf, type Stats } from './lib/rounds.js';
import { FIRST_NAMES, LAST_NAMES, seedUserList } from './lib/seed-user-list.js';
import { REPO_ROOT, startServer, type RunningServer } from './lib/server.js';
import type { SummaryEntry } from './lib/summary.js';

export const description = 'The dashboard users screen at 1M users in headless Chromium: time to an interactive list (cold, warm), email and name search, next page; first-screen bundle gzip';

const RESULTS_FILE = new URL('results/dashboard.md', import.meta.url);
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** The aim for the first screen's bundle; the others are the bench's: a list within a second of navigating (RAIL's "1 s"), a search well within it. */
const AIMS = { bundleBytes: 300 * 1024, coldMs: 1000, warmMs: 1000, searchMs: 500 } as const;
const PAGE_SIZE = 25; // the screen's
const OPERATOR_PASSWORD = 'bench operator passphrase';

function readConfig() {
  return {
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench',
    users: Math.floor(envNumber('BENCH_USERS', 1_000_000, 10_000)),
    runs: Math.floor(envNumber('BENCH_DASHBOARD_RUNS', 7, 1)),
  };
}

/** What dashboard/dist/index.html makes a browser load for the first screen, each file gzip-compressed (level 9). */
async function firstScreenBundle() {
  const dist = new URL('../dashboard/dist/', import.meta.url);
  const html = await readFile(new URL('index.html', dist), 'utf8');
  const linked = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*\shref)="([^"]+)"/g)].map((m) => m[1]!).filter((p) => /\.(js|css)$/.test(p));
  const files = [{ path: 'index.html', body: Buffer.from(html) }];
  for (const path of linked) files.push({ path, body: await readFile(new URL(path.replace(/^\/dashboard\//, ''), dist)) });
  const sized = files.map((f) => ({ path: f.path, bytes: f.body.length, gzip: gzipSync(f.body, { level: 9 }).length }));
  return { files: sized, bytes: sized.reduce((s, f) => s + f.bytes, 0), gzip: sized.reduce((s, f) => s + f.gzip, 0) };
}

/**
 * Resolves with the page's milliseconds from `since` (performance.now(); 0 is the navigation's start) to the
 * moment the table's first row shows `firstEmail` (any first row when undefined), its results settled
 * (tbody not busy), and its link took focus. Polled on every animation frame.
 */
async function untilFirstRow(page: Page, since: number, firstEmail?: string): Promise<number> {
  const handle = await page.waitForFunction(({ since, firstEmail }) => {
    const body = document.querySelector('tbody');
    const link = body?.querySelector<HTMLAnchorElement>('tr td a');
    if (!body || !link || body.getAttribute('aria-busy') === 'true') return false;
    if (firstEmail !== undefined && link.textContent !== firstEmail) return false;
    const box = link.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) return false;
    link.focus();
    return document.activeElement === link ? performance.now() - since : false;
  }, { since, firstEmail }, { polling: 'raf', timeout: 60_000 });
  return (await handle.jsonValue()) as number;
}

/** Marks the start in the page, then submits the search form with the field and text given (filled before the mark). */
async function timedSearch(page: Page, field: 'email' | 'name', text: string, firstEmail: string) {
  await page.getByLabel('Search by').selectOption(field);
  await page.getByLabel(field === 'email' ? 'Email contains' : 'Name contains').fill(text);
  const since = await page.evaluate(() => {
    const started = performance.now();
    document.querySelector<HTMLFormElement>('form[role="search"]')!.requestSubmit();
    return started;
  });
  return untilFirstRow(page, since, firstEmail);
}

async function timedNextPage(page: Page, firstEmail: string) {
  const since = await page.evaluate(() => {
    const started = performance.now();
    const next = [...document.querySelectorAll<HTMLAnchorElement>('nav[aria-label="Pages"] a')].find((a) => a.textContent === 'Next page');
    if (!next) throw new Error('no Next page link');
    next.click();
    return started;
  });
  return untilFirstRow(page, since, firstEmail);
}

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
const fmtStats = (s: Stats) => `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})`;
const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  console.log(`dashboard bench: ${config.users.toLocaleString('en-US')} users, ${config.runs} runs per figure, database ${redact(config.databaseUrl)}`);
  console.log(machineLine());
  const build = spawnSync('npm', ['run', 'build:dashboard'], { cwd: REPO_ROOT, stdio: 'ignore' });
  if (build.status !== 0) throw new Error('npm run build:dashboard failed');
  const bundle = await firstScreenBundle();

  const adminToken = randomBytes(24).toString('hex');
  const serverEnv = { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY };
  let gatehouse: RunningServer | undefined;
  let browser: Browser | undefined;
  try {
    await recreateDatabase(config.databaseUrl);
    gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts', env: serverEnv });
    const admin = (method: string, path: string, body?: unknown) =>
      http(`${gatehouse!.url}/api/admin/v1${path}`, { method, headers: { authorization: `Bearer ${adminToken}` }, body });
    const target = expectStatus<{ id: string; secretKey: string }>('create environment', await admin('POST', '/environments', { name: 'dashboard-bench' }), 201);
    const other = expectStatus<{ id: string }>('create environment', await admin('POST', '/environments', { name: 'dashboard-bench-other' }), 201);
    const operatorEmail = 'bench-operator@example.com';
    expectStatus('create operator', await admin('POST', '/operators', { email: operatorEmail, password: OPERATOR_PASSWORD }), 201);
    await gatehouse.stop();

    console.log(`seeding ${config.users.toLocaleString('en-US')} users (INSERT … SELECT FROM generate_series, secondary indexes rebuilt after)`);
    const seeded = await seedUserList({
      databaseUrl: config.databaseUrl, targetEnvironmentId: target.id, noiseEnvironmentId: other.id, count: config.users, noiseCount: 0,
      onProgress: (done, total) => { if (done === total || done % 200_000 === 0) console.log(`  ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}`); },
    });
    console.log(`  done in ${seeded.seconds.toFixed(1)} s (insert ${seeded.insertSeconds.toFixed(1)}, indexes ${seeded.indexSeconds.toFixed(1)}, VACUUM ANALYZE ${seeded.vacuumSeconds.toFixed(1)})`);

    gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts', env: serverEnv });
    const base = gatehouse.url;
    const usersUrl = `${base}/dashboard/environments/${target.id}/users`;
    /** The first email of a Server API page: what the screen must show first. */
    const firstOf = async (query: string) => {
      const page = expectStatus<{ items: { email: string }[]; nextCursor: string | null }>(`GET /users${query}`,
        await http(`${base}/api/server/v1/users${query}`, { headers: { authorization: `Bearer ${target.secretKey}` } }), 200);
      if (!page.items[0]) throw new Error(`no user for ${query}`);
      return { email: page.items[0].email, nextCursor: page.nextCursor };
    };

    // Searches vary per run: whole emails spread over the id range (seeded emails end in the user's number and
    // "@"), and first + last names (0.04% of the users each).
    const emails: string[] = [];
    for (let i = 0; i < config.runs; i++) emails.push((await firstOf(`?limit=1&emailSearch=${Math.floor(((i + 0.5) / config.runs) * config.users)}@`)).email);
    const names = Array.from({ length: config.runs }, (_, i) => `${FIRST_NAMES[(i * 3) % FIRST_NAMES.length]} ${LAST_NAMES[(i * 11) % LAST_NAMES.length]}`);
    const pageOne = await firstOf(`?limit=${PAGE_SIZE}`);
    const pageTwo = await firstOf(`?limit=${PAGE_SIZE}&cursor=${pageOne.nextCursor}`);

    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    /** A context signed in as the operator through the sign-in screen, its cache then emptied. */
    const signedIn = async (): Promise<{ context: BrowserContext; page: Page }> => {
      const context = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${base}/dashboard/sign-in`);
      await page.getByLabel('Email', { exact: true }).fill(operatorEmail);
      await page.getByLabel('Password', { exact: true }).fill(OPERATOR_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Environments' }).waitFor();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.clearBrowserCache');
      await cdp.detach();
      return { context, page };
    };
    const navigate = async (page: Page) => {
      await page.goto(usersUrl, { waitUntil: 'commit' });
      return untilFirstRow(page, 0);
    };

    const times: Record<'cold' | 'warm' | 'email' | 'name' | 'next', number[]> = { cold: [], warm: [], email: [], name: [], next: [] };
    for (let i = 0; i < config.runs; i++) {
      const { context, page } = await signedIn();
      times.cold.push(await navigate(page));
      times.warm.push(await navigate(page));
      times.email.push(await timedSearch(page, 'email', emails[i]!, emails[i]!));
      const name = names[i]!;
      times.name.push(await timedSearch(page, 'name', name, (await firstOf(`?limit=1&nameSearch=${encodeURIComponent(name)}`)).email));
      await navigate(page);
      times.next.push(await timedNextPage(page, pageTwo.email));
      await context.close();
      console.log(`  run ${i + 1}: cold ${fmt(times.cold.at(-1)!)} ms, warm ${fmt(times.warm.at(-1)!)}, email search ${fmt(times.email.at(-1)!)}, `
        + `name search ${fmt(times.name.at(-1)!)}, next page ${fmt(times.next.at(-1)!)}`);
    }
    const stats = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, statsOf(v)])) as Record<keyof typeof times, Stats>;

    const rows: [string, Stats, number][] = [
      ['Navigation to an interactive users list, cold (empty browser cache)', stats.cold, AIMS.coldMs],
      ['Navigation to an interactive users list, warm (app cached)', stats.warm, AIMS.warmMs],
      ['Email search submitted → first row (one exact address)', stats.email, AIMS.searchMs],
      ['Name search submitted → first row (first + last name, 0.04% of users)', stats.name, AIMS.searchMs],
      ['"Next page" followed → first row of page 2', stats.next, AIMS.searchMs],
    ];
    const report = [
      `## ${new Date().toISOString().slice(0, 10)}, ${config.users.toLocaleString('en-US')} users, ${machineLine().replace('machine: ', '')}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`, '',
      `\`npm run bench -- dashboard\` (PostgreSQL, the server as \`npm start\` runs it, Chromium ${browser.version()}, 1280×800). `
      + `Milliseconds, median of ${config.runs} runs (min–max); each run is a fresh browser profile, signed in, its cache emptied. `
      + 'Interactive: the first row is on screen with the search settled and its link takes focus.', '',
      '| Figure | ms | Aim |', '|---|---:|---:|',
      ...rows.map(([name, s, aim]) => `| ${name} | ${fmtStats(s)} | ≤ ${aim} |`), '',
      '| First screen (dashboard/dist) | Bytes | gzip -9 |', '|---|---:|---:|',
      ...bundle.files.map((f) => `| ${f.path} | ${f.bytes.toLocaleString('en-US')} | ${f.gzip.toLocaleString('en-US')} |`),
      `| **total** (aim ≤ ${kib(AIMS.bundleBytes)} gzip) | ${bundle.bytes.toLocaleString('en-US')} | **${bundle.gzip.toLocaleString('en-US')}** (${kib(bundle.gzip)}) |`, '',
      `Seeding: ${seeded.seconds.toFixed(0)} s (insert ${seeded.insertSeconds.toFixed(0)} s, indexes ${seeded.indexSeconds.toFixed(0)} s, VACUUM ANALYZE ${seeded.vacuumSeconds.toFixed(0)} s); `
      + `table ${(seeded.tableBytes / 2 ** 20).toFixed(1)} MiB, users_name_trgm ${((seeded.indexBytes.users_name_trgm ?? 0) / 2 ** 20).toFixed(1)} MiB.`, '',
    ].join('\n');
    const previous = await readFile(RESULTS_FILE, 'utf8').catch(() => '');
    const heading = '# `dashboard` results\n\nNewest first. See bench/README.md for what is measured.\n\n';
    await writeFile(RESULTS_FILE, heading + report + '\n' + previous.replace(heading, ''));
    console.log(`\n${report}\nwrote bench/results/dashboard.md`);

    const entry = (name: string, s: Stats, aim: number, unit = 'ms'): SummaryEntry =>
      ({ name, value: s.median, unit, aim: { op: '<=', value: aim }, spread: { min: s.min, max: s.max } });
    return [
      { name: 'first screen bundle, gzip', value: bundle.gzip / 1024, unit: 'KiB', aim: { op: '<=', value: AIMS.bundleBytes / 1024 }, spread: null },
      entry('users list interactive, cold', stats.cold, AIMS.coldMs),
      entry('users list interactive, warm', stats.warm, AIMS.warmMs),
      entry('email search to first row', stats.email, AIMS.searchMs),
      entry('name search to first row', stats.name, AIMS.searchMs),
      entry('next page to first row', stats.next, AIMS.searchMs),
    ];
  } catch (err) {
    if (gatehouse) console.error(`--- last output of gatehouse ---\n${gatehouse.output()}`);
    throw err;
  } finally {
    await browser?.close();
    await gatehouse?.stop();
  }
}

/**
 * The README's screenshot of the dashboard: `npx tsx scripts/dashboard-screenshot.ts` starts Gatehouse on
 * the embedded database (PGlite, in a temporary data directory), seeds an environment with a few users,
 * signs an operator in through the sign-in screen in headless Chromium (the system's, /usr/bin/chromium)
 * and saves the users screen, 1280×800, to docs/images/dashboard-users.png. Run `npm run build:dashboard`
 * first when the dashboard changed: the server serves dashboard/dist.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUTPUT = join(ROOT, 'docs/images/dashboard-users.png');
const ADMIN_TOKEN = randomBytes(24).toString('hex');
const OPERATOR = { email: 'support@acme.example', password: 'a long operator passphrase' };

const USERS: { firstName: string; lastName: string; email: string; plan: string; ban?: boolean }[] = [
  { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@analytical.example', plan: 'enterprise' },
  { firstName: 'Grace', lastName: 'Hopper', email: 'grace.hopper@navy.example', plan: 'pro' },
  { firstName: 'Alan', lastName: 'Turing', email: 'alan@bletchley.example', plan: 'pro' },
  { firstName: 'Katherine', lastName: 'Johnson', email: 'kjohnson@langley.example', plan: 'team' },
  { firstName: 'Edsger', lastName: 'Dijkstra', email: 'ewd@eindhoven.example', plan: 'free', ban: true },
  { firstName: 'Margaret', lastName: 'Hamilton', email: 'margaret@apollo.example', plan: 'enterprise' },
  { firstName: 'Linus', lastName: 'Torvalds', email: 'linus@kernel.example', plan: 'free' },
  { firstName: 'Radia', lastName: 'Perlman', email: 'radia@spanning.example', plan: 'team' },
  { firstName: 'Barbara', lastName: 'Liskov', email: 'liskov@clu.example', plan: 'pro' },
  { firstName: 'Donald', lastName: 'Knuth', email: 'knuth@taocp.example', plan: 'free' },
  { firstName: 'Frances', lastName: 'Allen', email: 'fran.allen@ibm.example', plan: 'pro' },
  { firstName: 'Ken', lastName: 'Thompson', email: 'ken@unix.example', plan: 'free' },
];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function call(base: string, method: string, path: string, auth: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method, headers: { authorization: `Bearer ${auth}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}

async function main() {
  const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-screenshot-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(GATEHOUSE_|DATABASE_URL$|PORT$|HOST$)/.test(k)));
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...env, GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
  });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  try {
    for (let ready = false; !ready;) {
      if (server.exitCode !== null) throw new Error('the server exited before it was ready');
      ready = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
      if (!ready) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const environment = await call(base, 'POST', '/api/admin/v1/environments', ADMIN_TOKEN, { name: 'Acme production' }) as { id: string; secretKey: string };
    await call(base, 'POST', '/api/admin/v1/operators', ADMIN_TOKEN, OPERATOR);
    for (const user of USERS) {
      const created = await call(base, 'POST', '/api/server/v1/users', environment.secretKey, {
        email: user.email, firstName: user.firstName, lastName: user.lastName, publicMetadata: { plan: user.plan },
      }) as { id: string };
      if (user.ban) await call(base, 'POST', `/api/server/v1/users/${created.id}/ban`, environment.secretKey);
    }

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, colorScheme: 'light' });
    await page.goto(`${base}/dashboard/environments/${environment.id}/users`);
    await page.getByLabel('Email', { exact: true }).fill(OPERATOR.email);
    await page.getByLabel('Password', { exact: true }).fill(OPERATOR.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('tbody tr').nth(USERS.length - 1).waitFor();
    // No focus ring or caret in the picture.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await mkdir(join(ROOT, 'docs/images'), { recursive: true });
    await page.screenshot({ path: OUTPUT });
    console.log(`wrote ${OUTPUT}`);
  } finally {
    await browser.close();
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();

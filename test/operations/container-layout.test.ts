/**
 * The container image without Docker, which these machines cannot run: the layout the Dockerfile builds,
 * made from the Dockerfile's own lines (test/helpers/container-layout.ts), `npm ci --omit=dev` included,
 * then started with the image's CMD, ENV and user (nobody when the test runs as root, so the app's files
 * are not the server's own) on a data directory of its own, as on a volume.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildContainerLayout, type ContainerLayout } from '../helpers/container-layout.js';
import { databaseEnv } from '../helpers/database-urls.js';
import { PASSWORD } from '../helpers/given.js';
import { httpRequest, type ServerProcess } from '../helpers/processes.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const lockfile = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8'));

/** An IPv4 address of this machine other than loopback: reaching the server there proves it listens beyond 127.0.0.1. */
const outsideAddress = Object.values(networkInterfaces()).flat().find((address) => address?.family === 'IPv4' && !address.internal)?.address;

let layout: ContainerLayout;
const servers: ServerProcess[] = [];
beforeAll(async () => { layout = await buildContainerLayout(); });
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await layout?.remove();
});

async function start(env: Record<string, string>, options: { workerOnly?: boolean } = {}) {
  const server = await layout.start(env, options);
  servers.push(server);
  return server;
}

const printed = (stderr: string) => ({
  secretKey: /secret key:\s+(sk_[A-Za-z0-9_-]+)/.exec(stderr)?.[1],
  frontendHost: /frontend host:\s+(\S+)/.exec(stderr)?.[1],
  environmentId: /environment id:\s+(\S+)/.exec(stderr)?.[1],
});

const serverApi = (server: ServerProcess, secretKey: string, method: string, path: string, body?: unknown) =>
  httpRequest(server.port, { method, path: `/api/server/v1${path}`, headers: { authorization: `Bearer ${secretKey}` }, body });

// The module specifiers of the compiled server, as esbuild writes them: `import x from "y";` (or export ... from)
// at the start of a line, `import "y";`, and `import("y")`.
const IMPORTS = [/^(?:import|export)\s[^;]*?\bfrom\s*"([^"]+)";?$/gm, /^import\s*"([^"]+)";?$/gm, /\bimport\(\s*"([^"]+)"\s*\)/g];

/** The packages the compiled server imports (bare specifiers, not node: built-ins), dynamic imports included. */
function importedPackages(distDir: string): string[] {
  const specifiers = new Set<string>();
  for (const file of readdirSync(distDir, { recursive: true }).map(String).filter((name) => name.endsWith('.js'))) {
    const code = readFileSync(join(distDir, file), 'utf8');
    for (const [, specifier] of IMPORTS.flatMap((pattern) => [...code.matchAll(pattern)])) {
      if (!/^(\.|node:)/.test(specifier!)) specifiers.add(specifier!);
    }
  }
  return [...specifiers].sort();
}

describe('the image the Dockerfile describes', () => {
  it("runs npm start's node flags and script without npm, as the non-root user node, on 0.0.0.0, with the data directory a volume that user owns", () => {
    expect(layout.command).toEqual(packageJson.scripts.start.split(' '));
    expect(layout.command[0]).toBe('node');
    expect(layout.user).toBe('node');
    expect(layout.env).toMatchObject({ HOST: '0.0.0.0', PORT: '3000', GATEHOUSE_DATA_DIR: '/data' });
    expect(layout.volumes).toEqual(['/data']);
    expect(layout.userDirs).toEqual(['/data']);
    expect(layout.healthcheck[0]).toBe('node');
  });

  it('holds the compiled server and no source: dist/ with its build record and database template, the dashboard, the migrations', () => {
    const entries = readdirSync(layout.appDir).sort();
    expect(entries).toEqual(['bin', 'dashboard', 'dist', 'migrations', 'node_modules', 'package-lock.json', 'package.json', 'scripts']);
    expect(readdirSync(join(layout.appDir, 'scripts')).sort()).toEqual(['build-state.js', 'start.js']);
    expect(existsSync(join(layout.appDir, 'dist/build-info.json'))).toBe(true);
    expect(existsSync(join(layout.appDir, 'dist/platform/db/embedded-template/PG_VERSION'))).toBe(true);
    expect(existsSync(join(layout.appDir, 'dashboard/dist/index.html'))).toBe(true);
    expect(readdirSync(join(layout.appDir, 'migrations'))).toEqual(readdirSync(new URL('../../migrations/', import.meta.url)));
  });

  it('installs production dependencies only: no package the lockfile marks dev', () => {
    const installed = Object.keys(JSON.parse(readFileSync(join(layout.appDir, 'node_modules/.package-lock.json'), 'utf8')).packages);
    expect(installed.filter((path) => lockfile.packages[path]?.dev)).toEqual([]);
    expect(installed).toEqual(expect.arrayContaining(Object.keys(packageJson.dependencies).map((name) => `node_modules/${name}`)));
    for (const tool of ['typescript', 'vitest', 'vite', 'tsup', 'eslint']) expect(existsSync(join(layout.appDir, 'node_modules', tool))).toBe(false);
  });

  it('loads every package the compiled server imports from the layout alone, the lazily loaded openid-client and nodemailer among them', async () => {
    const packages = importedPackages(join(layout.appDir, 'dist'));
    expect(packages).toEqual(expect.arrayContaining(['@electric-sql/pglite', 'fastify', 'nodemailer', 'openid-client', 'pg']));
    const script = `${packages.map((name, i) => `import * as m${i} from ${JSON.stringify(name)};`).join('\n')}\nconsole.log('loaded', ${packages.length});`;
    const result = await layout.exec(['node', '--input-type=module', '-e', script], {});
    expect(result).toEqual({ code: 0, stdout: `loaded ${packages.length}\n`, stderr: '' });
  });
});

describe('the image started with its CMD on the embedded database', () => {
  let server: ServerProcess;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = layout.volume();
    server = await start({ GATEHOUSE_DATA_DIR: dataDir });
  });

  it('listens on 0.0.0.0: /healthz and /readyz answer through a non-loopback address of this machine', async (ctx) => {
    expect(server.stderr()).toContain(`Gatehouse listening on http://0.0.0.0:${server.port} with embedded PGlite in ${dataDir}`);
    if (!outsideAddress) ctx.skip('this machine has no non-loopback IPv4 address to reach the server through');
    const health = await fetch(`http://${outsideAddress}:${server.port}/healthz`);
    const ready = await fetch(`http://${outsideAddress}:${server.port}/readyz`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    expect(ready.status).toBe(200);
  });

  it('keeps the embedded database, its encryption key and its admin token in the data directory', () => {
    expect(readdirSync(dataDir)).toEqual(expect.arrayContaining(['PG_VERSION', 'encryption.key', 'admin.token', 'gatehouse.pid', 'server.json']));
  });

  it('creates a user and signs them in with the password (argon2), and serves the API reference, the dashboard, the hosted sign-in page and /metrics', async () => {
    const { secretKey, frontendHost } = printed(server.stderr());
    const created = await serverApi(server, secretKey!, 'POST', '/users', { email: 'ada@example.com', password: PASSWORD });
    expect(created.status).toBe(201);
    const signedIn = await httpRequest(server.port, { method: 'POST', path: '/_svc/auth/sign-in?_is_native=true', host: frontendHost, body: { email: 'ada@example.com', password: PASSWORD } });
    expect(signedIn.status).toBe(200);
    expect(signedIn.json().sessionToken).toEqual(expect.any(String));

    const docs = await httpRequest(server.port, { path: '/docs/' });
    expect([docs.status, docs.headers['content-type']]).toEqual([200, expect.stringContaining('text/html')]);
    const dashboard = await httpRequest(server.port, { path: '/dashboard/' });
    expect(dashboard.status).toBe(200);
    const script = /<script[^>]+src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(dashboard.body)?.[1];
    expect((await httpRequest(server.port, { path: script! })).status).toBe(200);
    const signInPage = await httpRequest(server.port, { path: '/sign-in', host: frontendHost });
    expect([signInPage.status, signInPage.headers['content-type']]).toEqual([200, expect.stringContaining('text/html')]);
    const metrics = await httpRequest(server.port, { path: '/metrics' });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('gatehouse_');
  });

  it('runs the CLI as `npx gatehouse`, the command the server prints, offline: it lists the environment the first start made', async () => {
    const { environmentId } = printed(server.stderr());
    // An unreachable registry: npx must find the CLI in the image, never download it.
    const result = await layout.exec(['npx', 'gatehouse', '--json', 'env', 'list'], { GATEHOUSE_DATA_DIR: dataDir, npm_config_registry: 'http://127.0.0.1:9/' });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).map((env: { id: string }) => env.id)).toEqual([environmentId]);
  });

  it("HEALTHCHECK's command succeeds against the running server", async () => {
    expect(await layout.exec(layout.healthcheck, { PORT: String(server.port) })).toMatchObject({ code: 0 });
  });
});

describe('the image stopped and started again, as a container restarts', () => {
  it('exits 0 on SIGTERM, its HEALTHCHECK then fails, and the next start on the same volume has the data', async () => {
    const dataDir = layout.volume();
    const first = await start({ GATEHOUSE_DATA_DIR: dataDir });
    const { secretKey } = printed(first.stderr());
    const created = await serverApi(first, secretKey!, 'POST', '/users', { email: 'grace@example.com', password: PASSWORD });
    expect(created.status).toBe(201);

    expect(await first.stop()).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dataDir, 'gatehouse.pid'))).toBe(false);
    expect((await layout.exec(layout.healthcheck, { PORT: String(first.port) })).code).toBe(1);

    const second = await start({ GATEHOUSE_DATA_DIR: dataDir });
    expect(second.stderr()).not.toContain('Created the first environment');
    const found = await serverApi(second, secretKey!, 'GET', `/users/${created.json().id}`);
    expect([found.status, found.json().email]).toEqual([200, 'grace@example.com']);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });
});

describe.skipIf(!TEST_DATABASE_URL)('the image on PostgreSQL (TEST_DATABASE_URL), with a second container as the job worker', () => {
  const adminToken = randomBytes(24).toString('hex');
  const databaseName = `gatehouse_container_${randomBytes(6).toString('hex')}`;
  let maintenance: pg.Client;
  let env: Record<string, string>;
  beforeAll(async () => {
    maintenance = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await maintenance.connect();
    await maintenance.query(`create database ${databaseName}`);
    env = {
      ...databaseEnv(Object.assign(new URL(TEST_DATABASE_URL!), { pathname: `/${databaseName}` }).toString()),
      GATEHOUSE_ENCRYPTION_KEY: randomBytes(32).toString('base64'), GATEHOUSE_ADMIN_TOKEN: adminToken,
    };
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await maintenance?.query(`drop database if exists ${databaseName} with (force)`);
    await maintenance?.end();
  });

  it('serves with GATEHOUSE_JOB_WORKER=off beside a worker with =only, its CLI issues a key, and both exit 0 on SIGTERM', async () => {
    const api = await start({ ...env, GATEHOUSE_JOB_WORKER: 'off' });
    const worker = await start({ ...env, GATEHOUSE_JOB_WORKER: 'only' }, { workerOnly: true });
    expect(api.stderr()).toContain(`Gatehouse listening on http://0.0.0.0:${api.port} with PostgreSQL (DATABASE_URL)`);
    // Off a terminal, on a shared database, the first start does not print the key: the CLI in the image issues one.
    const { environmentId, secretKey } = printed(api.stderr());
    expect(secretKey).toBeUndefined();
    const issued = await layout.exec(['node', 'bin/gatehouse.js', '--json', 'keys', 'create', environmentId!], env);
    expect(issued).toMatchObject({ code: 0, stderr: '' });
    const created = await serverApi(api, JSON.parse(issued.stdout).secretKey, 'POST', '/users', { email: 'ada@example.com', password: PASSWORD });
    expect(created.status).toBe(201);

    expect(await worker.stop()).toEqual({ code: 0, signal: null });
    expect(await api.stop()).toEqual({ code: 0, signal: null });
  });
});

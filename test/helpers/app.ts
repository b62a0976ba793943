import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { KyselyPlugin } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { buildApp, type AppOptions } from '../../src/app.js';
import { createTestClock, type TestClock } from '../../src/platform/clock.js';
import { openDatabase, type Database, type Db, type StatementLimits } from '../../src/platform/db/database.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { databaseUrls } from './database-urls.js';
import { createGiven, type Given } from './given.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const TEST_PORT = 3000;
/** The suite's encryption key (GATEHOUSE_ENCRYPTION_KEY): 32 fixed bytes. */
export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7);

export interface TestEnv { id: string; secretKey: string; frontendHost: string; name: string }

type Body = Record<string, unknown> | unknown[] | string | undefined;
export interface Caller {
  get(path: string, opts?: Partial<InjectOptions>): Promise<LightMyRequestResponse>;
  delete(path: string, opts?: Partial<InjectOptions>): Promise<LightMyRequestResponse>;
  post(path: string, body?: Body, opts?: Partial<InjectOptions>): Promise<LightMyRequestResponse>;
  patch(path: string, body?: Body, opts?: Partial<InjectOptions>): Promise<LightMyRequestResponse>;
  put(path: string, body?: Body, opts?: Partial<InjectOptions>): Promise<LightMyRequestResponse>;
}

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  clock: TestClock;
  given: Given;
  /** Server API caller with the environment's secret key; paths are relative to /api/server/v1. */
  server(env: TestEnv, secretKey?: string): Caller;
  /** Client plane caller on the environment's frontend host; paths relative to /_svc. */
  client(env: TestEnv, auth?: { token?: string; cookie?: string; origin?: string }): Caller;
  /** Admin plane caller; paths relative to /api/admin/v1. */
  admin: Caller;
  /** Mail caught in the outbox for an address, newest first. */
  outbox(env: TestEnv, to: string): Promise<{ subject: string; text: string; html: string }[]>;
  close(): Promise<void>;
}

/**
 * Opens the suite's database: PostgreSQL when TEST_DATABASE_URL is set (through PgBouncer under
 * TEST_PGBOUNCER=1, see database-urls.ts), else a fresh in-memory PGlite started from the run's migrated
 * image (test/helpers/global-setup.ts).
 `poolSize` sets PostgreSQL's pool (5 by default), `limits` its statement and lock timeouts. With `own`, a file that sweeps or sends every environment's rows (housekeeping, the mail worker) gets
 * a PostgreSQL database of its own, created here and dropped on close, so it never touches another
 * file's rows on the shared one (PGlite is always the file's own).
 */
export async function openTestDatabase(options: { own?: boolean; poolSize?: number; limits?: StatementLimits } = {}): Promise<Database> {
  if (process.env.GATEHOUSE_TEST_PROJECT === 'unit') {
    throw new Error('A file of the unit project opened a database: it runs once, on no database. Move it out of UNIT in test/projects.ts.');
  }
  const url = process.env.TEST_DATABASE_URL;
  if (url && options.own) return openOwnDatabase(url);
  const database = await openDatabase(url ? { ...databaseUrls(url), poolSize: options.poolSize ?? 5, limits: options.limits } : await inMemoryDatabase());
  await migrate(database.db);
  return database;
}

/** Options for a fresh in-memory PGlite, already migrated. */
export const inMemoryDatabase = async () => ({ dataDir: undefined, image: new Blob([await readFile(inject('pgliteImagePath'))]) });

async function openOwnDatabase(testDatabaseUrl: string): Promise<Database> {
  const name = `gatehouse_own_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const database = await openDatabase({ ...databaseUrls(Object.assign(new URL(testDatabaseUrl), { pathname: `/${name}` }).toString()), poolSize: 5 });
  await migrate(database.db);
  return {
    ...database,
    close: async () => {
      await database.close();
      const dropper = new pg.Client({ connectionString: testDatabaseUrl });
      await dropper.connect();
      await dropper.query(`drop database if exists ${name} with (force)`).finally(() => dropper.end());
    },
  };
}

function caller(app: FastifyInstance, prefix: string, headers: Record<string, string>): Caller {
  // The work a request leaves for after its answer (background.ts) is done before a test looks.
  const send = async (method: InjectOptions['method'], path: string, body?: Body, opts: Partial<InjectOptions> = {}) => {
    const res = await app.inject({
      method, url: prefix + path, ...opts,
      headers: { ...headers, ...(opts.headers as Record<string, string> | undefined) },
      ...(body !== undefined && { payload: body as InjectOptions['payload'] }),
    });
    await app.settled();
    return res;
  };
  return {
    get: (path, opts) => send('GET', path, undefined, opts),
    delete: (path, opts) => send('DELETE', path, undefined, opts),
    post: (path, body, opts) => send('POST', path, body, opts),
    patch: (path, body, opts) => send('PATCH', path, body, opts),
    put: (path, body, opts) => send('PUT', path, body, opts),
  };
}

/**
 * The app over a fresh test database (see openTestDatabase for `ownDatabase`), or over `database` (migrated,
 * closed with the app). `plugin` sees every statement the app runs (to count round trips); the test's own `t.db` goes around it.
 */
export async function startTestApp(options: Partial<AppOptions> = {}, { ownDatabase = false, plugin, poolSize, limits, database: given }: { ownDatabase?: boolean; plugin?: KyselyPlugin; poolSize?: number; limits?: StatementLimits; database?: Database } = {}): Promise<TestApp> {
  const database = given ?? await openTestDatabase({ own: ownDatabase, poolSize, limits });
  const clock = createTestClock();
  const app = await buildApp({ db: plugin ? database.db.withPlugin(plugin) : database.db, notifications: database.notifications, poolStats: database.poolStats, clock, publicPort: TEST_PORT, adminToken: ADMIN_TOKEN, logLevel: process.env.TEST_LOG_LEVEL ?? 'silent', encryptionKey: TEST_ENCRYPTION_KEY, ...options });
  await app.ready();
  const admin = caller(app, '/api/admin/v1', { authorization: `Bearer ${ADMIN_TOKEN}` });
  const t: TestApp = {
    app, db: database.db, clock, admin,
    given: undefined as unknown as Given,
    server: (env, secretKey = env.secretKey) => caller(app, '/api/server/v1', { authorization: `Bearer ${secretKey}` }),
    client: (env, auth = {}) => caller(app, '/_svc', {
      host: env.frontendHost,
      ...(auth.token && { authorization: `Bearer ${auth.token}` }),
      ...(auth.cookie && { cookie: `__session=${auth.cookie}` }),
      ...(auth.origin && { origin: auth.origin }),
    }),
    outbox: async (env, to) => (await admin.get(`/environments/${env.id}/outbox?to=${encodeURIComponent(to)}`)).json().items,
    close: async () => { await app.close(); await database.close(); },
  };
  t.given = createGiven(t);
  return t;
}

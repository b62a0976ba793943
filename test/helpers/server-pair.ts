import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PASSWORD } from './given.js';
import { PATIENCE_MS } from './patience.js';
import { httpRequest, spawnServer, type HttpRequestOptions, type HttpResponse, type ServerProcess } from './processes.js';

export const PAIR_ADMIN_TOKEN = 'multi-process-admin-token-0123456789';
/** GATEHOUSE_ENCRYPTION_KEY of servers on PostgreSQL in the tests (required with DATABASE_URL), the same in every process. */
export const PAIR_ENCRYPTION_KEY = Buffer.alloc(32, 9).toString('base64');

export interface PairEnv { id: string; secretKey: string; frontendHost: string }

/**
 * The servers wait on PostgreSQL's locks as long as a test is patient, not the production 2 s (statement 5 s).
 * These tests prove exactly-once and at-most-N; on a busy machine a burst in one environment queues on its
 * hot rows (the audit counter, a quota, an advisory lock) for longer than 2 s, and the production limits
 * would answer part of it 503. How a stuck database is answered is test/platform/stuck-database.test.ts.
 */
const PATIENT_DATABASE = { GATEHOUSE_DB_LOCK_TIMEOUT_MS: String(PATIENCE_MS), GATEHOUSE_DB_STATEMENT_TIMEOUT_MS: String(PATIENCE_MS) };

/**
 * How many server processes a pair starts: TEST_PROCESSES (2 by default; CI also runs the multi-process
 * tests at 4), so every guarantee raced over `pair.servers` is proven at that count. At most 8: each
 * burst in the tests has at least 8 requests, one per process. Each process may hold 11 connections (its
 * pool and LISTEN), and vitest runs two files at once here: 4 processes take up to 88 of PostgreSQL's
 * default 100 connections; above 4, run the files one at a time (--no-file-parallelism).
 */
export function testProcessCount(): number {
  const count = Number(process.env.TEST_PROCESSES ?? 2);
  if (!Number.isInteger(count) || count < 2 || count > 8) throw new Error(`TEST_PROCESSES must be a whole number from 2 to 8, not "${process.env.TEST_PROCESSES}"`);
  return count;
}

/**
 * Real server processes (testProcessCount(), started together) on one fresh PostgreSQL database of their
 * own (created on the server of TEST_DATABASE_URL, dropped by stop()). `a` and `b` are the first two of
 * `servers`. PGlite is one process's file, so callers skip without that URL.
 */
export async function startServerPair(testDatabaseUrl: string, extraEnv: Record<string, string> = {}) {
  const databaseName = `gatehouse_mp_${randomBytes(6).toString('hex')}`;
  const databaseUrl = Object.assign(new URL(testDatabaseUrl), { pathname: `/${databaseName}` }).toString();
  const maintenance = new pg.Client({ connectionString: testDatabaseUrl });
  await maintenance.connect();
  await maintenance.query(`create database ${databaseName}`);
  const env = { DATABASE_URL: databaseUrl, GATEHOUSE_ADMIN_TOKEN: PAIR_ADMIN_TOKEN, GATEHOUSE_ENCRYPTION_KEY: PAIR_ENCRYPTION_KEY, ...PATIENT_DATABASE, ...extraEnv };
  const started = await Promise.allSettled(Array.from({ length: testProcessCount() }, () => spawnServer({ env })));
  const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await maintenance.query(`drop database if exists ${databaseName} with (force)`);
    await maintenance.end();
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stop();
    throw (failed as PromiseRejectedResult).reason;
  }
  const [a, b] = servers;
  const call = (server: ServerProcess, options: HttpRequestOptions) => answered(() => httpRequest(server.port, options));
  const admin = (server: ServerProcess, method: string, path: string, body?: unknown) =>
    call(server, { method, path: `/api/admin/v1${path}`, headers: { authorization: `Bearer ${PAIR_ADMIN_TOKEN}` }, body });
  const serverApi = (server: ServerProcess, env: PairEnv, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(server, { method, path: `/api/server/v1${path}`, headers: { authorization: `Bearer ${env.secretKey}`, ...headers }, body });
  return {
    a, b, servers, databaseUrl, stop, call, admin, serverApi,
    /** The environment the servers run with, for a test that starts another process on the same database. */
    serverEnv: env,
    /** The server the i-th request of a burst goes to: round-robin over all of them, so every process races. */
    roundRobin: (i: number) => servers[i % servers.length],
    /** A new environment, made through process A. */
    environment: async (settings: Record<string, unknown> = {}): Promise<PairEnv> =>
      created(await admin(a, 'POST', '/environments', { name: `mp-${randomBytes(4).toString('hex')}`, settings })),
    /** A new user with the tests' PASSWORD, made through process A. */
    user: async (env: PairEnv) => {
      const email = `user-${randomBytes(6).toString('hex')}@example.com`;
      return { id: created<{ id: string }>(await serverApi(a, env, 'POST', '/users', { email, password: PASSWORD })).id, email };
    },
    client: (server: ServerProcess, env: PairEnv, method: string, path: string, body?: unknown, token?: string) =>
      call(server, { method, path: `/_svc${path}`, host: env.frontendHost, headers: token ? { authorization: `Bearer ${token}` } : {}, body }),
  };
}

/**
 * A request sent again while it is answered 503 unavailable with Retry-After, as a client does. On a busy
 * machine a burst in one environment can outwait its share of a process's pool (3 s, by design: the rest
 * of the pool stays free for other environments); these tests prove what the answers do, not how fast.
 * The counts still hold exactly when a 503 left no effect; when one did (a sign-up answered 503 after its
 * user was written), the retry's answer differs and the test fails.
 */
async function answered(send: () => Promise<HttpResponse>): Promise<HttpResponse> {
  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    const res = await send();
    const retryAfter = Number(res.headers['retry-after']);
    if (res.status !== 503 || !(retryAfter > 0) || !/"code":"unavailable"/.test(res.body) || Date.now() > deadline) return res;
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
  }
}

/** The body of a 201, or an error that shows what came back instead. */
function created<T>(res: HttpResponse): T {
  if (res.status !== 201) throw new Error(`expected 201, got ${res.status}: ${res.body}`);
  return res.json();
}

export type ServerPair = Awaited<ReturnType<typeof startServerPair>>;

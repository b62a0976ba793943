import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PASSWORD } from './given.js';
import { httpRequest, spawnServer, type HttpRequestOptions, type HttpResponse, type ServerProcess } from './processes.js';

export const PAIR_ADMIN_TOKEN = 'multi-process-admin-token-0123456789';
/** GATEHOUSE_ENCRYPTION_KEY of servers on PostgreSQL in the tests (required with DATABASE_URL), the same in every process. */
export const PAIR_ENCRYPTION_KEY = Buffer.alloc(32, 9).toString('base64');

export interface PairEnv { id: string; secretKey: string; frontendHost: string }

/**
 * Two real server processes on one fresh PostgreSQL database of their own (created on the server of
 * TEST_DATABASE_URL, dropped by stop()). PGlite is one process's file, so callers skip without that URL.
 */
export async function startServerPair(testDatabaseUrl: string, extraEnv: Record<string, string> = {}) {
  const databaseName = `gatehouse_mp_${randomBytes(6).toString('hex')}`;
  const databaseUrl = Object.assign(new URL(testDatabaseUrl), { pathname: `/${databaseName}` }).toString();
  const maintenance = new pg.Client({ connectionString: testDatabaseUrl });
  await maintenance.connect();
  await maintenance.query(`create database ${databaseName}`);
  const env = { DATABASE_URL: databaseUrl, GATEHOUSE_ADMIN_TOKEN: PAIR_ADMIN_TOKEN, GATEHOUSE_ENCRYPTION_KEY: PAIR_ENCRYPTION_KEY, ...extraEnv };
  const started = await Promise.allSettled([spawnServer({ env }), spawnServer({ env })]);
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
  const call = (server: ServerProcess, options: HttpRequestOptions) => httpRequest(server.port, options);
  const admin = (server: ServerProcess, method: string, path: string, body?: unknown) =>
    call(server, { method, path: `/api/admin/v1${path}`, headers: { authorization: `Bearer ${PAIR_ADMIN_TOKEN}` }, body });
  const serverApi = (server: ServerProcess, env: PairEnv, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(server, { method, path: `/api/server/v1${path}`, headers: { authorization: `Bearer ${env.secretKey}`, ...headers }, body });
  return {
    a, b, databaseUrl, stop, call, admin, serverApi,
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

/** The body of a 201, or an error that shows what came back instead. */
function created<T>(res: HttpResponse): T {
  if (res.status !== 201) throw new Error(`expected 201, got ${res.status}: ${res.body}`);
  return res.json();
}

export type ServerPair = Awaited<ReturnType<typeof startServerPair>>;

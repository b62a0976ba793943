import { databaseOf, loadConfig, type Config } from '../config.js';
import { openDatabase, type Database } from '../platform/db/database.js';
import { dataDirHolder, lockDataDir } from '../platform/db/data-dir-lock.js';
import { migrate } from '../platform/db/migrate.js';
import { ProblemError } from '../platform/http/problem.js';
import { findLocalServer, type LocalServer } from '../platform/local-admin.js';
import { ACTIONS, type Action, type HttpCall } from './actions.js';
import { print } from './output.js';
import { cliServices } from './services.js';

/** Says what runs on stderr when it takes more than a second, so a slow first run is never silent. */
export async function withProgress<T>(message: string, work: () => Promise<T>): Promise<T> {
  const timer = setTimeout(() => process.stderr.write(`${message}\n`), 1000);
  try {
    return await work();
  } finally {
    clearTimeout(timer);
  }
}

async function withDatabase<T>(config: Config, fn: (database: Database) => Promise<T>): Promise<T> {
  const unlock = config.databaseUrl ? () => {} : lockDataDir(config.dataDir);
  try {
    const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `the embedded database in ${config.dataDir} (created on first use)`;
    const database = await withProgress(`Opening ${where}...`, () =>
      openDatabase(databaseOf(config)));
    try {
      const ran = await withProgress('Applying database migrations...', () => migrate(database.db));
      if (ran.length > 0) process.stderr.write(`Applied migrations: ${ran.join(', ')}\n`);
      return await fn(database);
    } finally {
      await database.close();
    }
  } finally {
    unlock();
  }
}

/** One call of the running server's API; a problem it answers becomes the CLI's ProblemError. */
async function request(server: LocalServer, call: { method: string; path: string; body?: unknown; token: string }) {
  const res = await fetch(`${server.url}${call.path}`, {
    method: call.method, headers: { authorization: `Bearer ${call.token}`, ...(call.body !== undefined && { 'content-type': 'application/json' }) },
    ...(call.body !== undefined && { body: JSON.stringify(call.body) }),
  }).catch((err: unknown) => { throw new Error(`The server of this data directory (pid ${server.pid}, ${server.url}) did not answer: ${(err as Error).message}`); });
  const answer = res.status === 204 ? undefined : await res.json() as { detail?: string; properties?: { code?: string; errors?: unknown } } | undefined;
  if (!res.ok) {
    throw new ProblemError(res.status, answer?.properties?.code ?? 'admin_api', answer?.detail ?? `HTTP ${res.status}`, answer?.properties?.errors ? { errors: answer.properties.errors } : {});
  }
  return answer;
}

/**
 * A command through the server that holds the embedded database: the admin API with the token it keeps in the
 * data directory, or the Server API with a secret key issued for this one command and revoked right after.
 */
async function throughServer(server: LocalServer, call: HttpCall) {
  const admin = (method: string, path: string, body?: unknown) => request(server, { method, path: `/api/admin/v1${path}`, body, token: server.token });
  const send = async (base: string, token: string) => {
    const body = typeof call.body === 'function' ? (call.body as (current: unknown) => unknown)(await request(server, { method: 'GET', path: `${base}${call.path}`, token })) : call.body;
    const answer = await request(server, { method: call.method, path: `${base}${call.path}`, body, token });
    return call.answer ? call.answer(answer as never) : answer;
  };
  if (!call.environmentId) return send('/api/admin/v1', server.token);
  const key = await admin('POST', `/environments/${call.environmentId}/secret-keys`) as { id: string; secretKey: string };
  try {
    return await send('/api/server/v1', key.secretKey);
  } finally {
    await admin('DELETE', `/secret-keys/${key.id}`);
  }
}

/** Runs a command: through the running server of the embedded database when there is one, else over the database. */
export async function runCommand(command: string, operands: string[], options: Record<string, string | string[] | undefined>, json: boolean) {
  const config = loadConfig();
  const action: Action = ACTIONS[command]!({ operands, options, config });
  const server = config.databaseUrl ? undefined : findLocalServer(config.dataDir);
  if (server && dataDirHolder(config.dataDir) === server.pid) {
    if (!action.http) return void process.stderr.write('The running server keeps the database up to date.\n');
    return print(await throughServer(server, action.http), action.show, json);
  }
  const result = await withDatabase(config, ({ db }) => action.direct(cliServices(config, db, command)));
  print(result, action.show, json);
}

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { serverLimits, STATEMENT_LIMITS } from '../../src/platform/db/pool.js';
import { PATIENCE_MS } from './patience.js';
import { freePort } from './processes.js';

/** Debian's pgbouncer (apt-get install pgbouncer) is in /usr/sbin, which a non-root PATH may lack. */
export const pgbouncerBinary = (): string | undefined =>
  [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin'].map((dir) => join(dir, 'pgbouncer')).find((path) => existsSync(path));

export interface PgBouncer {
  port: number;
  /** The pooler's process (the scaling bench reads its CPU time). */
  pid: number;
  /** A URL of the PostgreSQL server PgBouncer fronts, leading through PgBouncer instead (same role and database). */
  pooled(directUrl: string): string;
  /** PgBouncer's admin console (SHOW POOLS, SHOW CLIENTS; simple queries only). */
  adminUrl: string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** Server connections per database and role (PgBouncer's default_pool_size). */
  poolSize?: number;
  /**
   * The settings (in ms) each server session starts with (connect_query), as an operator gives them; by
   * default Gatehouse's own limits (serverLimits of STATEMENT_LIMITS); `{}`: none.
   */
  serverSettings?: Record<string, number>;
}

/** A user the pooler may switch to: PgBouncer refuses to run as root. */
function unprivilegedUser(): { name: string; uid: number; gid: number } {
  const entries = readFileSync('/etc/passwd', 'utf8').split('\n').map((line) => line.split(':'));
  const entry = entries.find(([name]) => name === 'postgres') ?? entries.find(([name]) => name === 'nobody');
  if (!entry) throw new Error('PgBouncer refuses to run as root, and there is no postgres or nobody user to run it as');
  return { name: entry[0]!, uid: Number(entry[2]), gid: Number(entry[3]) };
}

function configFile(dir: string, port: number, server: URL, { poolSize = 20, serverSettings = serverLimits(STATEMENT_LIMITS) }: PgBouncerOptions) {
  const settings = Object.entries(serverSettings).map(([name, ms]) => `SET ${name} = ${Math.trunc(ms)}`);
  const connectQuery = settings.length > 0 ? ` connect_query='${settings.join('; ')}'` : '';
  const user = decodeURIComponent(server.username || 'postgres');
  return [
    '[databases]',
    // Any database of the server: the suite's, and those its files create for themselves.
    `* = host=${server.hostname} port=${server.port || 5432}${connectQuery}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1', `listen_port = ${port}`, 'unix_socket_dir =',
    'pool_mode = transaction', `default_pool_size = ${poolSize}`, 'max_client_conn = 2000',
    // Clients are trusted as the PostgreSQL here trusts them; roles other than the file's are looked up (auth_query).
    'auth_type = trust', `auth_file = ${join(dir, 'users.txt')}`, `auth_user = ${user}`, `admin_users = ${user}`,
    'log_connections = 0', 'log_disconnections = 0',
    '',
  ].join('\n');
}

/**
 * Starts a PgBouncer process in transaction mode in front of the PostgreSQL server of `directUrl`, on a
 * free port, with a configuration file of its own in a temporary directory (never the system service).
 * As root it runs as the postgres user (or nobody), since PgBouncer refuses root.
 */
export async function startPgBouncer(directUrl: string, options: PgBouncerOptions = {}): Promise<PgBouncer> {
  const binary = pgbouncerBinary();
  if (!binary) throw new Error('pgbouncer is not installed (apt-get install -y pgbouncer)');
  const server = new URL(directUrl);
  const [dir, port] = [await mkdtemp(join(tmpdir(), 'gatehouse-pgbouncer-')), await freePort()];
  const config = join(dir, 'pgbouncer.ini');
  await writeFile(config, configFile(dir, port, server, options), { mode: 0o600 });
  await writeFile(join(dir, 'users.txt'), `"${decodeURIComponent(server.username || 'postgres')}" "${decodeURIComponent(server.password)}"\n`, { mode: 0o600 });
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { uid, gid } = unprivilegedUser();
    await Promise.all([dir, config, join(dir, 'users.txt')].map((path) => chown(path, uid, gid)));
  }
  const child = spawn(binary, [...(asRoot ? ['-u', unprivilegedUser().name] : []), config], { stdio: ['ignore', 'ignore', 'pipe'] });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await untilUp(child.stderr!, exited);
  } catch (err) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const pooled = (url: string) => Object.assign(new URL(url), { hostname: '127.0.0.1', port: String(port) }).toString();
  return {
    port,
    pid: child.pid!,
    pooled,
    adminUrl: Object.assign(new URL(pooled(directUrl)), { pathname: '/pgbouncer' }).toString(),
    async stop() {
      process.off('exit', killOnExit);
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once PgBouncer says it is up (it listens by then); rejects with its output if it exits first. */
function untilUp(stderr: NodeJS.ReadableStream, exited: Promise<void>): Promise<void> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pgbouncer did not start within ${PATIENCE_MS} ms:\n${output}`)), PATIENCE_MS);
    stderr.setEncoding('utf8');
    stderr.on('data', (chunk: string) => {
      // Only the start is kept: a failure to start is told there, and the log must not grow with the run.
      if (output.length < 64_000) output += chunk;
      if (output.includes('process up')) { clearTimeout(timer); resolve(); }
    });
    void exited.then(() => { clearTimeout(timer); reject(new Error(`pgbouncer exited:\n${output}`)); });
  });
}

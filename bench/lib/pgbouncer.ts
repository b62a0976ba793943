import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './server.js';
import { stopChild, track } from './children.js';

/**
 * PgBouncer (Debian's, 1.18) in transaction mode in front of the PostgreSQL of `databaseUrl`: what managed
 * platforms put between an application and its database. Answers the URL through it. PgBouncer will not
 * run as root, so as root it drops to the `postgres` user (`-u`).
 */
export async function startPgBouncer(databaseUrl: string, { poolSize = 20, maxClients = 400 } = {}) {
  const upstream = new URL(databaseUrl);
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pgbouncer-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `* = host=${upstream.hostname} port=${upstream.port || 5432} user=${decodeURIComponent(upstream.username) || 'postgres'}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1', `listen_port = ${port}`, `unix_socket_dir = ${dir}`,
    'auth_type = any', 'pool_mode = transaction',
    `default_pool_size = ${poolSize}`, `max_client_conn = ${maxClients}`,
    // The pg driver sends these at connect; PgBouncer does not forward them (the limits are set on the role, docs/operations.md).
    'ignore_startup_parameters = extra_float_digits,statement_timeout,lock_timeout,idle_in_transaction_session_timeout,options',
    'logfile = /dev/null', `pidfile = ${join(dir, 'pgbouncer.pid')}`,
  ].join('\n'));
  const asRoot = process.getuid?.() === 0;
  const child = track(spawn('pgbouncer', [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'ignore', 'pipe'] }));
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => { errors += chunk.toString(); });
  for (let tries = 0; !(await listening(port)); tries++) {
    if (child.exitCode !== null || tries > 100) throw new Error(`pgbouncer did not start: ${errors}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = Object.assign(new URL(databaseUrl), { host: `127.0.0.1:${port}` }).toString();
  return { url, pid: child.pid!, stop: () => stopChild(child) };
}

const listening = (port: number) => new Promise<boolean>((resolve) => {
  const socket = createConnection({ port, host: '127.0.0.1' }, () => { socket.end(); resolve(true); });
  socket.on('error', () => resolve(false));
});

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { httpRequest, spawnServer, type ServerProcess } from '../helpers/processes.js';
import { PAIR_ENCRYPTION_KEY } from '../helpers/server-pair.js';

const testDatabaseUrl = process.env.TEST_DATABASE_URL;

/** Every line of stdout as JSON; fails on any line that is not (a banner, a stray console.log). */
function jsonLines(stdout: string): Record<string, unknown>[] {
  const lines = stdout.split('\n').filter((line) => line !== '');
  expect(lines.length).toBeGreaterThan(0);
  return lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`a stdout line is not JSON: ${line}`);
    }
  });
}

const firstEnvironmentLine = (stdout: string) => jsonLines(stdout).find((line) => line.msg === 'created the first environment, "development"');

describe('what the server process writes (src/main.ts)', () => {
  let server: ServerProcess | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('writes only JSON lines to stdout, and shows the first secret key on stderr with the embedded database', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-output-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    server = await spawnServer({ env: { GATEHOUSE_DATA_DIR: dataDir, LOG_LEVEL: 'info' } });
    const secretKey = /secret key:\s+(sk_[A-Za-z0-9_-]+)/.exec(server.stderr())?.[1];
    expect((await httpRequest(server.port, { path: '/api/server/v1/users', headers: { authorization: `Bearer ${secretKey}` } })).status).toBe(200);
    expect((await httpRequest(server.port, { path: '/api/server/v1/users' })).status).toBe(401);
    await server.waitForOutput((stdout) => stdout.includes('"code":"unauthenticated"'));
    expect(await server.stop()).toEqual({ code: 0, signal: null });

    const lines = jsonLines(server.stdout());
    expect(firstEnvironmentLine(server.stdout())).toMatchObject({
      level: 30, environmentId: expect.any(String), frontendHost: `localhost:${server.port}`, secretKeyId: expect.any(String), secretKeyShown: true,
    });
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'Gatehouse ready', storage: 'embedded', dataDir }));
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'request completed', code: 'unauthenticated', res: { statusCode: 401 } }));
    expect(server.stdout()).not.toContain('sk_');
    expect(server.stderr()).toContain(`Gatehouse listening on http://127.0.0.1:${server.port} with embedded PGlite in ${dataDir}`);
    // The signing keys' encryption key is generated once into the data directory, owner-only, and said so.
    expect(server.stderr()).toContain(`Generated the encryption key of the embedded database's secrets (signing keys) in ${join(dataDir, 'encryption.key')} (mode 0600)`);
    expect((await stat(join(dataDir, 'encryption.key'))).mode & 0o777).toBe(0o600);
    expect(server.stderr()).toContain(`Admin API (/api/admin/v1): on, with the token in ${join(dataDir, 'admin.token')}`);
    expect(server.stderr()).not.toContain('GATEHOUSE_METRICS_TOKEN');
  });

  it('warns at start, on stderr and in the log, when /metrics is open (no token) on an address other than loopback', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-metrics-open-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    server = await spawnServer({ env: { GATEHOUSE_DATA_DIR: dataDir, HOST: '0.0.0.0' } });
    await server.waitForStderr('Warning: /metrics answers anyone who can reach 0.0.0.0 (no GATEHOUSE_METRICS_TOKEN)');
    await server.waitForOutput('metrics served without a token on a non-loopback address');
  });

  it('prints commands that work as pasted: create a user, then sign them in on the frontend host', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-output-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    server = await spawnServer({ env: { GATEHOUSE_DATA_DIR: dataDir } });
    const banner = server.stderr();
    const commands = banner.slice(banner.indexOf('Try it')).split('\n').slice(1, 5).join('\n').split(/(?<=[^\\])\n(?= {2}curl)/);
    expect(commands).toHaveLength(2);
    const run = (command: string) => promisify(execFile)('bash', ['-c', command]);
    expect(JSON.parse((await run(commands[0]!)).stdout)).toMatchObject({ email: 'ada@example.com' });
    expect(JSON.parse((await run(commands[1]!)).stdout)).toMatchObject({ user: { email: 'ada@example.com' }, sessionToken: expect.stringMatching(/^sess_/) });
  });

  it.runIf(testDatabaseUrl)('never shows the first secret key with DATABASE_URL off a terminal, and says how to issue one', async () => {
    const databaseName = `gatehouse_output_${randomBytes(6).toString('hex')}`;
    const maintenance = new pg.Client({ connectionString: testDatabaseUrl });
    await maintenance.connect();
    await maintenance.query(`create database ${databaseName}`);
    cleanups.push(async () => {
      await maintenance.query(`drop database if exists ${databaseName} with (force)`);
      await maintenance.end();
    });
    const databaseUrl = Object.assign(new URL(testDatabaseUrl!), { pathname: `/${databaseName}` }).toString();

    server = await spawnServer({ env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', GATEHOUSE_ENCRYPTION_KEY: PAIR_ENCRYPTION_KEY } });
    expect(await server.stop()).toEqual({ code: 0, signal: null });

    const created = firstEnvironmentLine(server.stdout());
    expect(created).toMatchObject({ level: 30, environmentId: expect.any(String), secretKeyId: expect.any(String), secretKeyShown: false });
    expect(jsonLines(server.stdout())).toContainEqual(expect.objectContaining({ msg: 'Gatehouse ready', storage: 'postgresql' }));
    expect(server.stdout() + server.stderr()).not.toContain('sk_');
    expect(server.stderr()).toContain(`Its secret key is not shown`);
    expect(server.stderr()).toContain(`npx gatehouse keys create ${created!.environmentId}`);
    expect(server.stderr()).toContain(`POST /api/admin/v1/environments/${created!.environmentId}/secret-keys`);
    expect(server.stderr()).toContain(`npx gatehouse keys revoke ${created!.secretKeyId}`);
    expect(server.stdout() + server.stderr()).not.toContain(databaseUrl);
  });
});

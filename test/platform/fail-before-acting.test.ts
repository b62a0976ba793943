import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, serverEntry } from '../helpers/processes.js';

const run = promisify(execFile);

/** `npm start`'s server (src/main.ts) on a fresh embedded data directory, with `env`: how it ended, and whether the data directory came to be. */
async function start(env: Record<string, string>) {
  const parent = mkdtempSync(join(tmpdir(), 'gatehouse-fail-early-'));
  const dataDir = join(parent, 'data');
  try {
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(GATEHOUSE_|DATABASE_URL$|PORT$|HOST$|LOG_LEVEL$)/.test(k)));
    const failure = await run('node', serverEntry(), { env: { ...base, GATEHOUSE_DATA_DIR: dataDir, ...env } })
      .then(() => undefined, (err: { code: number; stdout: string; stderr: string }) => err);
    return { failure, dataDirCreated: existsSync(dataDir) };
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
}

describe('the server checks where it will listen before it opens the database or creates anything', () => {
  let taken: Server;
  let takenPort: number;
  beforeAll(async () => {
    takenPort = await freePort();
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(takenPort, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => { taken.close(() => resolve()); }));

  it('stops with exit code 2 and one sentence when the port is in use, creating no environment and printing no key', async () => {
    const { failure, dataDirCreated } = await start({ HOST: '127.0.0.1', PORT: String(takenPort) });
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toBe(`Port ${takenPort} on 127.0.0.1 is already in use (another Gatehouse, or another server): stop it, or set PORT to a free port.\n`);
    expect(failure?.stdout).toBe('');
    expect(dataDirCreated).toBe(false);
  });

  it('stops with exit code 2 and one sentence when HOST does not resolve', async () => {
    const { failure, dataDirCreated } = await start({ HOST: 'gatehouse-no-such-host.invalid', PORT: String(await freePort()) });
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toMatch(/^HOST "gatehouse-no-such-host\.invalid" does not resolve to an address \((ENOTFOUND|EAI_AGAIN)\): set HOST to a name or address of this machine, such as localhost or 0\.0\.0\.0\.\n$/);
    expect(failure?.stdout).toBe('');
    expect(dataDirCreated).toBe(false);
  });

  it('stops with exit code 2 when HOST resolves to an address of another machine', async () => {
    const { failure, dataDirCreated } = await start({ HOST: '192.0.2.1', PORT: String(await freePort()) });
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toBe('HOST 192.0.2.1 is not an address of this machine: set HOST to one of its names or addresses, such as localhost or 0.0.0.0.\n');
    expect(dataDirCreated).toBe(false);
  });

  it('checks the metrics port as well', async () => {
    const { failure, dataDirCreated } = await start({ HOST: '127.0.0.1', PORT: String(await freePort()), GATEHOUSE_METRICS_PORT: String(takenPort) });
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toBe(`Port ${takenPort} on 127.0.0.1 is already in use (another Gatehouse, or another server): stop it, or set GATEHOUSE_METRICS_PORT to a free port.\n`);
    expect(dataDirCreated).toBe(false);
  });
});

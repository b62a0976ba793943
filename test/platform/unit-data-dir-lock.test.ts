import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { dataDirHolder, lockDataDir, processStartTicks } from '../../src/platform/db/data-dir-lock.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const onLinux = process.platform === 'linux';
const LONG_AGO = new Date('2000-01-01T00:00:00Z');

/** Another process that takes the lock as the server does, and holds it until its stdin closes. */
async function startHolder(dataDir: string) {
  const code = `const { lockDataDir } = await import('./src/platform/db/data-dir-lock.ts');
    const release = lockDataDir(process.env.LOCK_DIR);
    console.log('locked');
    process.stdin.resume().on('end', () => { release(); process.exit(0); });`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: ROOT, env: { ...process.env, LOCK_DIR: dataDir }, stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { if (chunk.includes('locked')) resolve(); });
    child.once('exit', () => reject(new Error('the holder exited before taking the lock')));
  });
  return { pid: child.pid!, stop: async () => { child.stdin!.end(); await exited; } };
}

describe('the embedded data directory lock', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'gatehouse-lock-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const pidFile = (dataDir = dir) => join(dataDir, 'gatehouse.pid');
  const record = () => JSON.parse(readFileSync(pidFile(), 'utf8'));

  it('writes a record of this process (pid, real path, start time, pid namespace, host) and removes it on release', () => {
    const release = lockDataDir(dir);
    expect(record()).toEqual({
      pid: process.pid, dataDir: realpathSync(dir), host: hostname(),
      ...(onLinux && { startTicks: expect.any(Number), pidNamespace: readlinkSync('/proc/self/ns/pid') }),
    });
    release();
    expect(existsSync(pidFile())).toBe(false);
  });

  it('refuses while another Gatehouse process holds the directory, naming its pid, and takes over once it is gone', async () => {
    const holder = await startHolder(dir);
    try {
      expect(dataDirHolder(dir)).toBe(holder.pid);
      expect(() => lockDataDir(dir)).toThrow(`Another Gatehouse process (pid ${holder.pid}) is using ${dir}. Stop it first`);
      expect(record().pid).toBe(holder.pid);
    } finally {
      await holder.stop();
    }
    const release = lockDataDir(dir);
    expect(record().pid).toBe(process.pid);
    release();
  });

  it('is not blocked by a record copied from another directory whose holder still runs', async () => {
    const other = mkdtempSync(join(tmpdir(), 'gatehouse-lock-other-'));
    const holder = await startHolder(other);
    try {
      copyFileSync(pidFile(other), pidFile());
      expect(dataDirHolder(dir)).toBeUndefined();
      const release = lockDataDir(dir);
      expect(record().pid).toBe(process.pid);
      release();
      expect(dataDirHolder(other)).toBe(holder.pid);
    } finally {
      await holder.stop();
      rmSync(other, { recursive: true, force: true });
    }
  });

  it.runIf(onLinux)('takes over a record whose pid now belongs to an unrelated live process', () => {
    // The test runner's parent is alive, but it started at another time than the process that wrote the record.
    writeFileSync(pidFile(), JSON.stringify({ pid: process.ppid, dataDir: realpathSync(dir), startTicks: 1 }));
    expect(dataDirHolder(dir)).toBeUndefined();
    const release = lockDataDir(dir);
    expect(record().pid).toBe(process.pid);
    release();
  });

  it('still honours a bare pid file from an older version while that process lives', () => {
    writeFileSync(pidFile(), String(process.ppid));
    expect(dataDirHolder(dir)).toBe(process.ppid);
    expect(() => lockDataDir(dir)).toThrow(`Another Gatehouse process (pid ${process.ppid}) is using ${dir}`);
    expect(readFileSync(pidFile(), 'utf8')).toBe(String(process.ppid));
  });

  it.runIf(onLinux)('takes over a bare pid file written before its live process started (the pid was reused)', () => {
    writeFileSync(pidFile(), String(process.ppid));
    utimesSync(pidFile(), LONG_AGO, LONG_AGO);
    expect(dataDirHolder(dir)).toBeUndefined();
    const release = lockDataDir(dir);
    expect(record().pid).toBe(process.pid);
    release();
  });

  // Two containers on one volume: each runs its server as pid 1 in a pid namespace of its own, so the record's
  // pid and start time are those of a live process here too (this machine's pid 1).
  const otherContainer = (host: string) => JSON.stringify({ pid: 1, dataDir: realpathSync(dir), startTicks: processStartTicks(1), pidNamespace: 'pid:[1]', host });

  it("refuses another container's record while its holder keeps it fresh, naming that host, and takes it over once 30 s stale", () => {
    writeFileSync(pidFile(), otherContainer('other-container'));
    expect(dataDirHolder(dir)).toBe(1);
    expect(() => lockDataDir(dir)).toThrow(`Another Gatehouse process (pid 1 on host other-container) is using ${dir}. Stop it first`);
    const stale = new Date(Date.now() - 31_000);
    utimesSync(pidFile(), stale, stale);
    expect(dataDirHolder(dir)).toBeUndefined();
    const release = lockDataDir(dir);
    expect(record().pid).toBe(process.pid);
    release();
  });

  it("takes over at once a record of this host name from another pid namespace: this container before it restarted", () => {
    writeFileSync(pidFile(), otherContainer(hostname()));
    expect(dataDirHolder(dir)).toBeUndefined();
    const release = lockDataDir(dir);
    expect(record().pid).toBe(process.pid);
    release();
  });

  it('keeps its own record fresh every 10 s while it holds the directory, and stops on release', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const release = lockDataDir(dir);
      utimesSync(pidFile(), LONG_AGO, LONG_AGO);
      vi.advanceTimersByTime(10_000);
      expect(statSync(pidFile()).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
      release();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('takes over a lock left by a process that is gone', () => {
    writeFileSync(pidFile(), JSON.stringify({ pid: 2147483646, dataDir: realpathSync(dir) }));
    expect(dataDirHolder(dir)).toBeUndefined();
    const release = lockDataDir(dir);
    expect(record().pid).toBe(process.pid);
    release();
  });

  it('refuses while a fresh empty file is being written by a process that is starting, and takes over an old one', () => {
    writeFileSync(pidFile(), '');
    expect(() => lockDataDir(dir)).toThrow(`Another Gatehouse process is starting on ${dir}; try again.`);
    utimesSync(pidFile(), LONG_AGO, LONG_AGO);
    const release = lockDataDir(dir);
    expect(record().pid).toBe(process.pid);
    release();
  });
});

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dataDirHolder, lockDataDir } from '../../src/platform/db/data-dir-lock.js';

describe('the embedded data directory lock', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'gatehouse-lock-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const pidFile = () => join(dir, 'gatehouse.pid');

  it('writes this process id and removes it on release', () => {
    const release = lockDataDir(dir);
    expect(readFileSync(pidFile(), 'utf8')).toBe(String(process.pid));
    release();
    expect(existsSync(pidFile())).toBe(false);
  });

  it('refuses while another live process holds the directory, naming its pid', () => {
    writeFileSync(pidFile(), String(process.ppid));
    expect(dataDirHolder(dir)).toBe(process.ppid);
    expect(() => lockDataDir(dir)).toThrow(`Another Gatehouse process (pid ${process.ppid}) is using ${dir}`);
    expect(readFileSync(pidFile(), 'utf8')).toBe(String(process.ppid));
  });

  it('takes over a lock left by a process that is gone', () => {
    writeFileSync(pidFile(), '2147483646');
    expect(dataDirHolder(dir)).toBeUndefined();
    const release = lockDataDir(dir);
    expect(readFileSync(pidFile(), 'utf8')).toBe(String(process.pid));
    release();
  });
});

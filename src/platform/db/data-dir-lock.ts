import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LOCK_FILE = 'gatehouse.pid';

const isAlive = (pid: number) => {
  try { process.kill(pid, 0); return true; } catch { return false; }
};

/** The pid of a live process holding the embedded data directory, if any. */
export function dataDirHolder(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, LOCK_FILE), 'utf8'));
    return Number.isInteger(pid) && pid !== process.pid && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * PGlite is one in-process database: two processes on one data directory would corrupt it. The holder
 * creates the pid file exclusively (so two processes starting together cannot both win), and a file
 * left by a process that is gone is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = dataDirHolder(dataDir);
    if (holder) {
      throw new Error(`Another Gatehouse process (pid ${holder}) is using ${dataDir}. Stop it first, or use the admin API (GATEHOUSE_ADMIN_TOKEN) while it runs.`);
    }
    rmSync(path, { force: true }); // left by a process that is gone
  }
  throw new Error(`Another Gatehouse process is starting on ${dataDir}; try again.`);
}

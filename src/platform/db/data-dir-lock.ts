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
 * PGlite is one in-process database: two processes on one data directory would corrupt it.
 * The holder writes its pid; a second process refuses to start while that pid is alive.
 */
export function lockDataDir(dataDir: string): () => void {
  const holder = dataDirHolder(dataDir);
  if (holder) {
    throw new Error(`Another Gatehouse process (pid ${holder}) is using ${dataDir}. Stop it first, or use the admin API (GATEHOUSE_ADMIN_TOKEN) while it runs.`);
  }
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, LOCK_FILE), String(process.pid));
  return () => rmSync(join(dataDir, LOCK_FILE), { force: true });
}

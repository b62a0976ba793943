import { mkdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

const LOCK_FILE = 'gatehouse.pid';

/** What the holder writes: enough to tell it from an unrelated process that was given the same pid later. */
interface LockRecord {
  pid: number;
  /** The data directory's real path, so a copied or restored directory's file does not name a holder here. */
  dataDir: string;
  /** When the process started, in clock ticks since boot (Linux /proc); absent elsewhere. */
  startTicks?: number;
  /** The holder's pid namespace (Linux): in another one, as in another container on the same volume, its pid says nothing here. */
  pidNamespace?: string;
  /** The holder's host name: a container keeps its own across restarts. */
  host?: string;
}

export class DataDirLockedError extends Error {}

/** The holder touches its file this often, so that a process that cannot check its pid (another container) can tell it lives. */
const HEARTBEAT_MS = 10_000;
/** A file of another pid namespace untouched this long was left by a holder that is gone. */
const HEARTBEAT_STALE_MS = 3 * HEARTBEAT_MS;

/** This process's pid namespace, as /proc names it (pid:[4026531836]), or undefined without /proc. */
function pidNamespace(): string | undefined {
  try { return readlinkSync('/proc/self/ns/pid'); } catch { return undefined; }
}

const isAlive = (pid: number) => {
  try { process.kill(pid, 0); return true; } catch { return false; }
};

/**
 * The start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined where
 * there is no /proc. The command name (field 2) may hold spaces and parentheses, so fields count from the last ')'.
 */
export function processStartTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isInteger(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

/** Boot time in ms since the epoch (Linux), to place a start time in ticks on the wall clock. */
function bootTimeMs(): number | undefined {
  try {
    const btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1];
    return btime === undefined ? undefined : Number(btime) * 1000;
  } catch {
    return undefined;
  }
}

// USER_HZ: the unit of /proc start times, 100 on every mainstream Linux architecture.
const TICKS_PER_SECOND = 100;

/** A file this young and still empty is being written by a process that is starting. */
const STARTING_GRACE_MS = 10_000;

type Found = { record: LockRecord; writtenAtMs: number } | 'starting' | undefined;

function readRecord(path: string): Found {
  try {
    const text = readFileSync(path, 'utf8').trim();
    const writtenAtMs = statSync(path).mtimeMs;
    if (text === '') return Date.now() - writtenAtMs < STARTING_GRACE_MS ? 'starting' : undefined;
    // Versions before the JSON record wrote the bare pid; they are still read, for a rolling upgrade.
    const record = /^\d+$/.test(text) ? { pid: Number(text), dataDir: '' } : JSON.parse(text) as LockRecord;
    return Number.isInteger(record.pid) && record.pid > 0 ? { record, writtenAtMs } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the live process with the record's pid is the one that wrote it. A pid is reused once its process
 * is gone, so a stale file can name a live, unrelated process: its start time then differs from the record's
 * (or, for a bare-pid file, comes after the file was written). Without /proc only liveness can be checked.
 * A record of another pid namespace (another container sharing the volume) is judged by its heartbeat.
 */
function recordHolderIsAlive({ record, writtenAtMs }: { record: LockRecord; writtenAtMs: number }, realDir: string): boolean {
  if (record.dataDir && record.dataDir !== realDir) return false;
  if (record.pidNamespace !== undefined && record.pidNamespace !== pidNamespace()) {
    // Written in another pid namespace: under our host name that is this container before a restart, whose
    // processes are all gone; under another, a process of another container, alive while it keeps the file fresh.
    return record.host !== hostname() && Date.now() - writtenAtMs < HEARTBEAT_STALE_MS;
  }
  if (record.pid === process.pid || !isAlive(record.pid)) return false;
  const startTicks = processStartTicks(record.pid);
  if (startTicks === undefined) return true;
  if (record.startTicks !== undefined) return record.startTicks === startTicks;
  const boot = bootTimeMs();
  // A tick of slack each way: start times are rounded to ticks and btime to seconds.
  return boot === undefined || boot + (startTicks / TICKS_PER_SECOND) * 1000 <= writtenAtMs + 1000;
}

/** The record of the live Gatehouse process holding the data directory, 'starting' while it writes it, or undefined. */
function holderOf(dataDir: string): LockRecord | 'starting' | undefined {
  const found = readRecord(join(dataDir, LOCK_FILE));
  if (found === undefined || found === 'starting') return found;
  let realDir: string;
  try { realDir = realpathSync(dataDir); } catch { return undefined; }
  return recordHolderIsAlive(found, realDir) ? found.record : undefined;
}

/** The pid of a live Gatehouse process holding the embedded data directory, if any. */
export function dataDirHolder(dataDir: string): number | undefined {
  const holder = holderOf(dataDir);
  return typeof holder === 'object' ? holder.pid : undefined;
}

/** The holder as a refusal names it: its pid, and its host when that is another (its pid means nothing here then). */
const describeHolder = ({ pid, host }: LockRecord) => (host && host !== hostname() ? `pid ${pid} on host ${host}` : `pid ${pid}`);

/** Keeps the file's time fresh while held; the release stops it and removes the file. */
function holdWithHeartbeat(path: string): () => void {
  const heartbeat = setInterval(() => {
    try { const now = new Date(); utimesSync(path, now, now); } catch { /* removed meanwhile: the next start writes it again */ }
  }, HEARTBEAT_MS).unref();
  return () => { clearInterval(heartbeat); rmSync(path, { force: true }); };
}

/**
 * PGlite is one in-process database: two processes on one data directory would corrupt it. The holder
 * creates the pid file exclusively (so two processes starting together cannot both win), and a file
 * left by a process that is gone, or whose pid now belongs to another process, is taken over. Two
 * containers on one volume each see the other's pid 1 as their own: there the holder's heartbeat decides.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  const record: LockRecord = { pid: process.pid, dataDir: realpathSync(dataDir), startTicks: processStartTicks(process.pid), pidNamespace: pidNamespace(), host: hostname() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(record), { flag: 'wx' });
      return holdWithHeartbeat(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = holderOf(dataDir);
    if (holder === 'starting') break;
    if (holder) {
      throw new DataDirLockedError(`Another Gatehouse process (${describeHolder(holder)}) is using ${dataDir}. Stop it first, or use the admin API (GATEHOUSE_ADMIN_TOKEN) while it runs.`);
    }
    rmSync(path, { force: true }); // left by a process that is gone
  }
  throw new DataDirLockedError(`Another Gatehouse process is starting on ${dataDir}; try again.`);
}

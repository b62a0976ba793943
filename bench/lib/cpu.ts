import { readdir, readFile } from 'node:fs/promises';
import pg from 'pg';

/**
 * CPU time per request, the figure that stays meaningful on a busy machine: requests/s halves when
 * someone else's test suite takes a core, CPU milliseconds per request barely move. Read from
 * /proc/<pid>/stat (Linux), for the server process (all its threads, so argon2 work counts) and for
 * the PostgreSQL backends serving the bench database (only when PostgreSQL runs on this machine).
 */

const TICKS_PER_SECOND = 100; // USER_HZ; 100 on every Linux build we run on

/** utime + stime in ms from a /proc stat file (a process's or one thread's); undefined when unreadable. */
async function statCpuMs(path: string): Promise<number | undefined> {
  try {
    const stat = await readFile(path, 'utf8');
    // The command name (field 2) may contain spaces; fields after the closing parenthesis are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** utime + stime of a process (all its threads) in ms; undefined when unreadable (not Linux, gone, another machine's pid). */
export const processCpuMs = (pid: number) => statCpuMs(`/proc/${pid}/stat`);

export interface CpuSample {
  serverMs: number | undefined;
  /** By backend pid. */
  backends: Map<number, number>;
}

export interface CpuDelta {
  serverMs: number | null;
  postgresMs: number | null;
}

/** Samples a server process and the PostgreSQL backends connected to `databaseUrl`'s database. */
export function cpuProbe(serverPid: number | undefined, databaseUrl: string) {
  const isLocal = ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(new URL(databaseUrl).hostname);

  async function sample(): Promise<CpuSample> {
    const backends = new Map<number, number>();
    if (isLocal) {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ pid: number }>(
          `select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`);
        for (const { pid } of rows) {
          const ms = await processCpuMs(pid);
          if (ms !== undefined) backends.set(pid, ms);
        }
      } finally {
        await client.end();
      }
    }
    return { serverMs: serverPid === undefined ? undefined : await processCpuMs(serverPid), backends };
  }

  let start: CpuSample | undefined;
  return {
    async start() { start = await sample(); },
    async stop(): Promise<CpuDelta> {
      const end = await sample();
      if (!start) throw new Error('cpuProbe.stop() before start()');
      const serverMs = start.serverMs !== undefined && end.serverMs !== undefined ? end.serverMs - start.serverMs : null;
      // Backends that ended during the load are lost; pools keep theirs open, so that is rare.
      let postgresMs: number | null = null;
      if (isLocal && end.backends.size > 0) {
        postgresMs = 0;
        for (const [pid, ms] of end.backends) postgresMs += ms - (start.backends.get(pid) ?? 0);
      }
      return { serverMs, postgresMs };
    },
  };
}

/**
 * A process's CPU in ms split between its main thread (the thread whose id is the pid: in Node, the
 * event loop) and every other thread (in Node: the libuv pool, where argon2 and crypto run, and V8's
 * helpers). Undefined when unreadable.
 */
export async function threadCpuMs(pid: number): Promise<{ main: number; others: number } | undefined> {
  try {
    const tids = await readdir(`/proc/${pid}/task`);
    let main = 0;
    let others = 0;
    for (const tid of tids) {
      const ms = await statCpuMs(`/proc/${pid}/task/${tid}/stat`);
      if (ms === undefined) continue; // a thread that ended meanwhile
      if (Number(tid) === pid) main = ms;
      else others += ms;
    }
    return { main, others };
  } catch {
    return undefined;
  }
}

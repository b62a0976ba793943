/**
 * `npm start` as a user runs it, timed from the spawn to the first 200 from /healthz, and the resident
 * memory of the server process it leads to (not npm's, nor a shell's between them).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { stopChild, track } from './children.js';
import { freePort, REPO_ROOT } from './server.js';

export interface NpmStart {
  /** Spawn to the first /healthz 200. */
  readyMs: number;
  /** The node process running scripts/start.js (the server). */
  serverPid: number;
  /** npm start decided dist/ was stale and built it first: the time includes a build. */
  built: boolean;
  output(): string;
  stop(): Promise<void>;
}

/** The environment of someone typing `npm start`: ours without the service's settings, npm's own variables or NODE_OPTIONS. */
export function userEnvironment(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_|GATEHOUSE_|BENCH_)/.test(name) || ['DATABASE_URL', 'PORT', 'HOST', 'LOG_LEVEL', 'NODE_OPTIONS', 'INIT_CWD'].includes(name)) continue;
    env[name] = value;
  }
  return { ...env, ...settings };
}

async function parentOf(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Node running scripts/start.js itself: not npm, nor the shell (`sh -c "node … scripts/start.js"`) npm may put between. */
const runsStartScript = (argv: string[]) => basename(argv[0] ?? '') === 'node' && argv.slice(1).some((arg) => arg.endsWith('scripts/start.js'));

/** `rootPid` itself when it is the server (the container's command, no npm), else its descendant that is. */
async function findServerPid(rootPid: number): Promise<number | undefined> {
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (!runsStartScript(cmdline.split('\0'))) continue;
    for (let p: number | undefined = pid; p && p > 1; p = await parentOf(p)) if (p === rootPid) return pid;
  }
  return undefined;
}

/** VmRSS of a process in MiB (Linux /proc). */
export async function residentMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!kib) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kib[1]) / 1024;
}

/** Running, not gone nor a zombie waiting to be reaped. */
const alive = (pid: number) => readFile(`/proc/${pid}/stat`, 'utf8').then((stat) => stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z', () => false);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForHealth(url: string, child: ChildProcess, lines: string[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`npm start exited (${child.exitCode ?? child.signalCode}):\n${lines.join('\n')}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(1000) }).then((res) => res.status === 200, () => false);
    if (ok) return;
    if (performance.now() > deadline) throw new Error(`no 200 from ${url} within ${timeoutMs} ms:\n${lines.join('\n')}`);
    // Polls often, for a fine timing; a refused connection costs the starting server nothing.
    await sleep(10);
  }
}

/**
 * Spawns `npm start` (or `command`: the container's, its script without npm) in `cwd` (default this
 * repository; the start bench's fresh clone) with `env` (PORT and HOST are added) in a process group of
 * its own, so stopping it reaches npm, any shell and the server alike.
 */
export async function npmStart(env: Record<string, string>, { cwd = REPO_ROOT, command = ['npm', 'start'], timeoutMs = 60_000 } = {}): Promise<NpmStart> {
  const port = await freePort();
  const started = performance.now();
  const child = track(spawn(command[0]!, command.slice(1), {
    cwd, env: userEnvironment({ ...env, PORT: String(port), HOST: '127.0.0.1' }), stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  }), { group: true });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const stopGroup = () => stopChild(child, 15_000);
  try {
    await waitForHealth(`http://127.0.0.1:${port}/healthz`, child, lines, timeoutMs);
  } catch (err) {
    await stopGroup();
    throw err;
  }
  const readyMs = performance.now() - started;
  const serverPid = await findServerPid(child.pid!);
  if (!serverPid) {
    await stopGroup();
    throw new Error('npm start answers, but no process running scripts/start.js was found under it');
  }
  return {
    readyMs, serverPid, built: lines.some((l) => l.startsWith('Building Gatehouse')), output: () => lines.join('\n'),
    // The server releases the data directory's lock on its way out: wait for it, so a restart finds it free.
    async stop() {
      await stopGroup();
      const deadline = performance.now() + 15_000;
      while (await alive(serverPid)) {
        if (performance.now() > deadline) process.kill(serverPid, 'SIGKILL');
        await sleep(20);
      }
    },
  };
}

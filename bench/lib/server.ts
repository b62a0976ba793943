import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freePort } from '../../test/helpers/free-port.js';
import { fileURLToPath } from 'node:url';
import { stopChild, track } from './children.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface RunningServer {
  name: string;
  url: string;
  port: number;
  child: ChildProcess;
  /** The last lines the process printed (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * The service is measured as `npm start` runs it: the compiled dist/main.js, with the node flags of
 * package.json's start script, built once per bench run (so it is current).
 */
const SERVICE_ENTRY = 'src/main.ts';
let built = false;
function productionStart(): string[] {
  if (!built) {
    const build = spawnSync(process.execPath, ['scripts/build.js'], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed');
    built = true;
  }
  const start: string = JSON.parse(readFileSync(new URL('package.json', `file://${REPO_ROOT}`), 'utf8')).scripts.start;
  const flags = start.split(/\s+/).filter((word) => word.startsWith('--'));
  return [...flags, 'dist/main.js'];
}

export { freePort };

export interface StartOptions {
  name: string;
  /** A TypeScript entry point relative to the repository root, run as `node --import tsx <script>`; the service's (`src/main.ts`) runs compiled, as `npm start` runs it. */
  script: string;
  env: Record<string, string>;
  /** Extra node flags before the script, e.g. ['--cpu-prof'] (not allowed in NODE_OPTIONS). */
  nodeArgs?: string[];
  readyPath?: string;
  /** Ready when the process prints a line matching this (a process with no HTTP, e.g. a job worker), instead of `readyPath`. */
  readyLine?: RegExp;
  timeoutMs?: number;
}

/**
 * Starts a server script as a child process on a free port (PORT and HOST=127.0.0.1 are set) and waits
 * until `readyPath` answers 200 (or it prints `readyLine`). `node --import tsx` (not the tsx CLI) keeps it one process, so the pid
 * we signal is the server itself.
 */
export async function startServer({ name, script, env, nodeArgs = [], readyPath = '/readyz', readyLine, timeoutMs = 30_000 }: StartOptions): Promise<RunningServer> {
  const port = await freePort();
  const entry = script === SERVICE_ENTRY ? productionStart() : ['--import', 'tsx', script];
  const child = track(spawn(process.execPath, [...nodeArgs, ...entry], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  }));
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    if (lines.length > 60) lines.splice(0, lines.length - 60);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', (chunk: Buffer) => {
    keep(chunk);
    process.stderr.write(chunk.toString().replace(/^(?=.)/gm, `[${name}] `));
  });
  const url = `http://127.0.0.1:${port}`;
  const server: RunningServer = { name, url, port, child, output: () => lines.join('\n'), stop: () => stopChild(child) };

  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${server.output()}`);
    }
    if (readyLine) {
      if (lines.some((line) => readyLine.test(line))) return server;
    } else {
      try {
        const res = await fetch(url + readyPath, { signal: AbortSignal.timeout(1000) });
        if (res.ok) return server;
      } catch { /* not listening yet */ }
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${name} was not ready on ${url}${readyPath} within ${timeoutMs} ms:\n${server.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The service in `processes` processes behind one port (Node's cluster: bench/lib/cluster-primary.ts), as
 * `npm start` runs each; answers the server (its pid the primary's) and the processes' pids.
 */
export async function startCluster(processes: number, env: Record<string, string>): Promise<RunningServer & { pids: number[] }> {
  const server = await startServer({
    name: `gatehouse x${processes}`, script: 'bench/lib/cluster-primary.ts', readyLine: /^cluster ready: /, timeoutMs: 60_000,
    env: { ...env, BENCH_CLUSTER_PROCESSES: String(processes), BENCH_CLUSTER_EXEC: JSON.stringify(productionStart()) },
  });
  const ready = server.output().split('\n').find((line) => line.startsWith('cluster ready: '))!;
  return { ...server, pids: ready.slice('cluster ready: '.length).split(',').map(Number) };
}

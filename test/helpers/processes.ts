import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isBuildFresh } from '../../scripts/build-state.js';
import { directUrlOf, underPgBouncer } from './database-urls.js';
import { PATIENCE_MS } from './patience.js';
import { freePort } from './free-port.js';

export { freePort };

/** Real server processes for tests that need more than app.inject: several processes, signals, stdout. */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Exit { code: number | null; signal: NodeJS.Signals | null }

export interface ServerProcess {
  port: number;
  pid: number;
  /** Everything the process wrote so far. */
  stdout(): string;
  stderr(): string;
  /** Settles when the process has exited. */
  exited: Promise<Exit>;
  /** Resolves once stdout contains the text (or satisfies the predicate); rejects after the timeout or if the process exits first. */
  waitForOutput(expected: string | ((stdout: string) => boolean), timeoutMs?: number): Promise<void>;
  /** The same for stderr, where the human banner goes. */
  waitForStderr(expected: string | ((stderr: string) => boolean), timeoutMs?: number): Promise<void>;
  /** Sends a signal to the server process only, as `kill <pid>` would. */
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL to the whole process group if it has not exited within the timeout. */
  stop(timeoutMs?: number): Promise<Exit>;
}

const running = new Set<ChildProcess>();
// Safety net: a test runner that exits without afterAll must not leave servers behind.
process.once('exit', () => { for (const child of running) killGroup(child, 'SIGKILL'); });

function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  try { process.kill(-child.pid!, signal); } catch { /* already gone */ }
}

/**
 * Variables of the test runner that would change the server's behaviour are dropped; `env` is added on top.
 * A server given a DATABASE_URL through the suite's PgBouncer (TEST_PGBOUNCER) gets its DATABASE_DIRECT_URL too.
 */
function serverEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !/^(GATEHOUSE_|DATABASE_URL$|DATABASE_DIRECT_URL$|DATABASE_POOLER$|PORT$|HOST$|LOG_LEVEL$|TEST_DATABASE_URL$)/.test(k)));
  return { ...base, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...directUrlFor(env), ...env };
}

/** Under the suite's PgBouncer (TEST_PGBOUNCER), the DATABASE_DIRECT_URL a server given DATABASE_URL needs beside it. */
export const directUrlFor = (env: Record<string, string>): Record<string, string> =>
  (env.DATABASE_URL && !env.DATABASE_DIRECT_URL && underPgBouncer() ? { DATABASE_DIRECT_URL: directUrlOf(env.DATABASE_URL) } : {});

/**
 * The server's entry as `npm start` runs it: the compiled dist/main.js when the build is up to date (after `npm ci`,
 * as in CI), else src/main.ts through tsx, so a test never runs stale code. Compiling the source in every server a
 * test starts cost a second or two of CPU each.
 */
export const serverEntry = (): string[] => (isBuildFresh() ? [join(ROOT, 'dist/main.js')] : ['--import', 'tsx', 'src/main.ts']);

/**
 * Starts the server (serverEntry) on a free port and waits until GET /readyz answers 200 and the startup banner is
 * on stderr.
 *
 * It runs as `node <entry>`: the same code as `npm start`, without the tsx CLI's wrapper process. That wrapper relays SIGTERM to its node child and SIGKILLs the
 * child when it does not acknowledge within 30 ms, which a busy server often cannot, so signals sent
 * through it do not reach the graceful shutdown reliably. The process leads its own process group so
 * that stop() can kill it and anything it started together.
 */
export async function spawnServer(options: { env?: Record<string, string>; readyTimeoutMs?: number; workerOnly?: boolean } = {}): Promise<ServerProcess> {
  const port = await freePort();
  return startServerProcess({
    argv: [process.execPath, ...REPORT_ON_SIGNAL, ...serverEntry()], cwd: ROOT, env: serverEnv({ PORT: String(port), ...options.env }), port,
    readyTimeoutMs: options.readyTimeoutMs, workerOnly: options.workerOnly,
  });
}

export interface ServerLaunch {
  /** The program and its arguments. */
  argv: string[];
  cwd: string;
  /** The process's whole environment: nothing else is inherited. */
  env: NodeJS.ProcessEnv;
  /** The port it was told to listen on. */
  port: number;
  /** Runs it as this user and group (when the test runs as root). */
  uid?: number;
  gid?: number;
  readyTimeoutMs?: number | undefined;
  workerOnly?: boolean | undefined;
}

/** Starts a server process as told (spawnServer's, or a built layout's command) and waits until it is ready, as spawnServer does. */
export async function startServerProcess(launch: ServerLaunch): Promise<ServerProcess> {
  const { port, argv: [program, ...args], uid, gid, readyTimeoutMs } = launch;
  const child = spawn(program!, args, {
    cwd: launch.cwd, env: launch.env, ...(uid !== undefined && { uid }), ...(gid !== undefined && { gid }), detached: true, stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  let err = '';
  const outputWaiters = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { out += chunk; for (const w of outputWaiters) w(); });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { err += chunk; for (const w of outputWaiters) w(); });
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
    // A program that could not be started (missing, or not executable by `uid`) emits 'error' and never 'exit'.
    child.once('error', (error) => {
      if (child.pid !== undefined) return;
      err += `${error.message}\n`;
      running.delete(child);
      resolve({ code: null, signal: null });
    });
  });
  let hasExited = false;
  void exited.then(() => { hasExited = true; for (const w of outputWaiters) w(); });

  function waitFor(stream: string, text: () => string, expected: string | ((text: string) => boolean), timeoutMs = PATIENCE_MS) {
    return new Promise<void>((resolve, reject) => {
      const matches = typeof expected === 'string' ? (t: string) => t.includes(expected) : expected;
      const timer = setTimeout(() => done(new Error(`expected output not on ${stream} within ${timeoutMs} ms (${String(expected)}):\n${out}\n${err}`)), timeoutMs);
      const check = () => {
        if (matches(text())) done();
        else if (hasExited) done(new Error(`exited before the expected output (${String(expected)}):\n${out}\n${err}`));
      };
      function done(error?: Error) {
        clearTimeout(timer);
        outputWaiters.delete(check);
        if (error) reject(error); else resolve();
      }
      outputWaiters.add(check);
      check();
    });
  }

  const server: ServerProcess = {
    port, pid: child.pid!, exited,
    stdout: () => out,
    stderr: () => err,
    waitForOutput: (expected, timeoutMs) => waitFor('stdout', () => out, expected, timeoutMs),
    waitForStderr: (expected, timeoutMs) => waitFor('stderr', () => err, expected, timeoutMs),
    signal: (signal) => { child.kill(signal); },
    async stop(timeoutMs = PATIENCE_MS) {
      if (hasExited) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), timeoutMs);
      const exit = await exited;
      clearTimeout(timer);
      killGroup(child, 'SIGKILL'); // anything the server started, should it outlive it
      return exit;
    },
  };

  try {
    // A worker process (GATEHOUSE_JOB_WORKER=only) serves no HTTP: its banner is its readiness.
    if (launch.workerOnly) {
      await server.waitForStderr('Gatehouse job worker running', readyTimeoutMs);
      return server;
    }
    await waitForReady(port, readyTimeoutMs ?? PATIENCE_MS, () => hasExited);
    // Everything printed at startup comes before this line, so stderr() is complete from here on.
    await server.waitForStderr('Gatehouse listening on');
  } catch (error) {
    const hang = hasExited || !launch.argv.includes(REPORT_ON_SIGNAL[0]) ? '' : await whereItHangs(child.pid!);
    await server.stop();
    throw new Error(`${(error as Error).message}\nstdout:\n${out}\nstderr:\n${err}${hang}`);
  }
  return server;
}

const REPORT_DIR = join(tmpdir(), 'gatehouse-test-reports');
/** A server that never gets ready can be asked where it is (Node's diagnostic report): a start that hangs is otherwise a mystery. */
const REPORT_ON_SIGNAL = ['--report-on-signal', '--report-signal=SIGUSR2', `--report-directory=${REPORT_DIR}`];

/** The JavaScript stack and the libuv handles of a live process that is not ready, from its diagnostic report. */
async function whereItHangs(pid: number): Promise<string> {
  mkdirSync(REPORT_DIR, { recursive: true });
  try { process.kill(pid, 'SIGUSR2'); } catch { return ''; }
  for (let waited = 0; waited < 5000; waited += 100) {
    await sleepMs(100);
    const file = readdirSync(REPORT_DIR).find((name) => name.includes(`.${pid}.`));
    if (!file) continue;
    let report: { javascriptStack?: { message?: string; stack?: string[] }; libuv?: { type: string; is_active?: boolean; localEndpoint?: { port?: number } }[] };
    try {
      report = JSON.parse(readFileSync(join(REPORT_DIR, file), 'utf8'));
    } catch {
      continue; // still being written
    }
    rmSync(join(REPORT_DIR, file), { force: true });
    const stack = [report.javascriptStack?.message, ...(report.javascriptStack?.stack ?? []).slice(0, 20)].join('\n  ');
    const handles = (report.libuv ?? []).filter((h) => h.is_active).map((h) => (h.localEndpoint?.port ? `${h.type}:${h.localEndpoint.port}` : h.type));
    return `\nits JavaScript stack:\n  ${stack}\nits active libuv handles: ${handles.join(', ')}`;
  }
  return '\n(no diagnostic report within 5 s)';
}

const POLL_ANSWER_MS = 2000;
const sleepMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls GET /readyz until it answers 200, within a bounded time. */
async function waitForReady(port: number, timeoutMs: number, hasExited: () => boolean) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error('the server exited before it was ready');
    // A poll that gets no answer (a port taken by something else that never answers) must not outlast the deadline.
    const status = await Promise.race([httpRequest(port, { path: '/readyz' }).then((r) => r.status, () => 0), sleepMs(POLL_ANSWER_MS).then(() => 0)]);
    if (status === 200) return;
    await sleepMs(100);
  }
  throw new Error(`GET /readyz did not answer 200 within ${timeoutMs} ms`);
}

export interface HttpResponse { status: number; headers: http.IncomingHttpHeaders; body: string; json(): any }

export interface HttpRequestOptions {
  method?: string;
  path: string;
  /** Sent as the Host header (fetch cannot set Host; the client plane is chosen by it). */
  host?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Sent urlencoded, as a browser posts a form (instead of `body` as JSON). */
  form?: Record<string, string>;
  agent?: http.Agent | false;
}

/** One HTTP request to 127.0.0.1:<port> with node:http, so the Host header can be chosen. */
export function httpRequest(port: number, options: HttpRequestOptions): Promise<HttpResponse> {
  const payload = options.form ? new URLSearchParams(options.form).toString() : options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = {
    ...(options.host && { host: options.host }),
    ...(payload !== undefined && { 'content-type': options.form ? 'application/x-www-form-urlencoded' : 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers, agent: options.agent ?? false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk; }).on('error', reject).on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body, json: () => JSON.parse(body) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

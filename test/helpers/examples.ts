import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PATIENCE_MS } from './patience.js';
import { freePort } from './processes.js';

/** The example apps under examples/, built and run as their READMEs say, for the tests in test/examples. */

const ROOT = new URL('../../', import.meta.url);
export const exampleDir = (name: string) => fileURLToPath(new URL(`examples/${name}/`, ROOT));
/** A package's command-line entry, from the root node_modules where the workspaces' dependencies are installed. */
export const binOf = (path: string) => fileURLToPath(new URL(`node_modules/${path}`, ROOT));

/** Runs a Node.js command to its end in `cwd`; a failure carries everything it printed. */
export async function runNode(args: string[], options: { cwd: string; env?: Record<string, string> }) {
  try {
    return await promisify(execFile)(process.execPath, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${args.join(' ')} failed:\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: err });
  }
}

/**
 * Starts a Node.js server command on a free port (`{port}` in its arguments is replaced) and waits until
 * it answers HTTP at `http://127.0.0.1:<port>/`, polling: how long depends on the machine, never on a timer.
 */
export async function startNodeServer(args: string[], options: { cwd: string; env?: Record<string, string> }) {
  const port = await freePort();
  const child = spawn(process.execPath, args.map((arg) => arg.replace('{port}', String(port))), {
    cwd: options.cwd, env: { ...process.env, ...options.env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let hasExited = false;
  void exited.then(() => { hasExited = true; });
  const stop = async () => {
    if (hasExited) return;
    try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ }
    await exited;
  };

  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    if (hasExited) throw new Error(`${args.join(' ')} exited before answering:\n${output}`);
    const answered = await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' }).then((res) => res.body?.cancel(), () => false);
    if (answered !== false) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${args.join(' ')} did not answer within ${PATIENCE_MS} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { port, output: () => output, stop };
}

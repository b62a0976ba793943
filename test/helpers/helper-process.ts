import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PATIENCE_MS } from './patience.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface HelperProcess { port: number; child: ChildProcess; stop(signal?: NodeJS.Signals): Promise<void> }

/**
 * Starts a test helper script (an OpenID provider, a SAML IdP, a webhook receiver) as its own process on
 * loopback, and answers once it printed `listening <port>`; `what` names it in the error when it does not.
 */
export async function startHelperProcess(script: string, what: string, env: NodeJS.ProcessEnv = process.env): Promise<HelperProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the ${what} did not start:\n${stderr}`)), PATIENCE_MS);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /listening (\d+)/.exec(out);
      if (match) { clearTimeout(timer); resolve(Number(match[1])); }
    });
    child.once('exit', () => { clearTimeout(timer); reject(new Error(`the ${what} exited:\n${stderr}`)); });
  });
  const stop = (signal: NodeJS.Signals = 'SIGTERM') => new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
  return { port, child, stop };
}

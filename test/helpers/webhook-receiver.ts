import { spawn } from 'node:child_process';
import type { IncomingHttpHeaders } from 'node:http';
import { fileURLToPath } from 'node:url';
import { PATIENCE_MS } from './patience.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ReceivedWebhook { path: string; headers: IncomingHttpHeaders; body: string; answeredWith: number | 'hang' }

export interface WebhookReceiver {
  /** The receiver's base URL (http://127.0.0.1:<port>); any path under it receives. */
  url: string;
  /** What the next requests are answered with, in order (200 once these are used up; "hang" never answers). */
  script(answers: (number | 'hang')[]): Promise<void>;
  received(): Promise<ReceivedWebhook[]>;
  stop(): Promise<void>;
}

/** Starts test/helpers/webhook-receiver-process.ts as its own process on loopback. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/webhook-receiver-process.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the webhook receiver did not start:\n${stderr}`)), PATIENCE_MS);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /listening (\d+)/.exec(out);
      if (match) { clearTimeout(timer); resolve(Number(match[1])); }
    });
    child.once('exit', () => { clearTimeout(timer); reject(new Error(`the webhook receiver exited:\n${stderr}`)); });
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    async script(answers) {
      const res = await fetch(`${url}/test/script`, { method: 'POST', body: JSON.stringify({ answers }) });
      if (res.status !== 204) throw new Error(`script: ${res.status}`);
    },
    received: async () => (await fetch(`${url}/test/received`)).json() as Promise<ReceivedWebhook[]>,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

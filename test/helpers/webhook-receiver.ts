import type { IncomingHttpHeaders } from 'node:http';
import { startHelperProcess } from './helper-process.js';


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
  const { port, stop } = await startHelperProcess('test/helpers/webhook-receiver-process.ts', 'webhook receiver');
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    async script(answers) {
      const res = await fetch(`${url}/test/script`, { method: 'POST', body: JSON.stringify({ answers }) });
      if (res.status !== 204) throw new Error(`script: ${res.status}`);
    },
    received: async () => (await fetch(`${url}/test/received`)).json() as Promise<ReceivedWebhook[]>,
    stop: () => stop('SIGKILL'),
  };
}

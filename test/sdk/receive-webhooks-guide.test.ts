import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { webhookEventTypes } from '@gatehouse/sdk';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { examplePayload } from '../../src/webhooks/catalogue.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { freePort } from '../helpers/processes.js';

const ROOT = new URL('../../', import.meta.url);
// Inside the repository, so the snippet's imports (@gatehouse/sdk, express) resolve as an adopter's would (the
// SDK's sources, by the `source` condition, as in the tests).
const SNIPPETS_DIR = new URL('node_modules/.cache/gatehouse-doc-snippets/', ROOT);
const SECRET = `whsec_${Buffer.from('the guide endpoint secret 32 b..').toString('base64')}`;

const guide = async () => {
  const doc = await readFile(new URL('docs/api.md', ROOT), 'utf8');
  return doc.slice(doc.indexOf('\n## Receive webhooks\n'));
};

/** A delivery as Gatehouse sends it: the event's JSON, signed by `secret` under `id`. */
function delivery(id: string, type: Parameters<typeof examplePayload>[0], secret = SECRET) {
  const body = JSON.stringify(examplePayload(type));
  const at = new Date();
  return {
    body,
    headers: {
      'content-type': 'application/json', 'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, body),
    },
  };
}

/** Runs the guide's receiver as a process of its own, until `work` is done; answers what it printed. */
async function withReceiver(code: string, work: (url: string) => Promise<void>): Promise<string> {
  await mkdir(SNIPPETS_DIR, { recursive: true });
  const file = new URL('webhook-receiver.mts', SNIPPETS_DIR);
  await writeFile(file, code);
  const port = await freePort();
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', file.pathname], {
    cwd: ROOT, env: { ...process.env, PORT: String(port), GATEHOUSE_WEBHOOK_SECRET: SECRET }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { err += chunk; });
  const exited = new Promise((resolve) => child.once('close', resolve)); // 'close': stdout read to its end
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the receiver did not start within ${PATIENCE_MS} ms:\n${out}\n${err}`)), PATIENCE_MS);
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        if (out.includes('listening\n')) { clearTimeout(timer); resolve(); }
      });
      void exited.then(() => { clearTimeout(timer); reject(new Error(`the receiver exited:\n${out}\n${err}`)); });
    });
    await work(`http://127.0.0.1:${port}/webhooks/gatehouse`);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  return out;
}

describe('docs/api.md: "Receive webhooks"', () => {
  it('runs its Express receiver as written: accepts signed deliveries once each, refuses forged ones', async () => {
    const code = /<!-- webhook-receiver -->\n```ts\n([\s\S]*?)```/.exec(await guide())![1]!;
    const statuses: number[] = [];
    const send = async (url: string, { body, headers }: { body: string; headers: Record<string, string> }) => {
      const res = await fetch(url, { method: 'POST', body, headers });
      statuses.push(res.status);
      return res;
    };
    const stdout = await withReceiver(code, async (url) => {
      const created = delivery('msg_1', 'user.created');
      await send(url, created);
      await send(url, created); // the same message again: a retry, or a resend after a crash
      await send(url, delivery('msg_2', 'organization.created'));
      const forged = delivery('msg_3', 'user.banned', `whsec_${Buffer.from('somebody else entirely, 32 bytes').toString('base64')}`);
      expect(await (await send(url, forged)).json()).toEqual({ error: 'invalid_signature' });
      const { body } = delivery('msg_4', 'user.banned');
      expect(await (await send(url, { body, headers: { 'content-type': 'application/json' } })).json()).toEqual({ error: 'missing_headers' });
      await send(url, delivery('msg_5', 'user.banned'));
    });
    expect(statuses).toEqual([204, 204, 204, 400, 400, 204]);
    const user = examplePayload('user.created').data.id;
    expect(stdout.trim().split('\n')).toEqual(['listening', `welcome ${user}`, 'already handled msg_1', 'ignored organization.created', `lock out ${user}`]);
  });

  it('lists every event type the SDK and the server catalogue know', async () => {
    const list = /\*\*Event types\.\*\*([\s\S]*?)New types\s+may be added/.exec(await guide())![1]!;
    expect([...list.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((m) => m[1])).toEqual([...webhookEventTypes]);
  });
});

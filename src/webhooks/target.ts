import http from 'node:http';
import https from 'node:https';
import { checkedLookup, literalRefusal, RefusedTarget, restrictedAddress } from '../platform/net/outbound.js';

/** Whether deliveries may go to loopback and private networks (GATEHOUSE_WEBHOOK_PRIVATE_TARGETS). */
export type PrivateTargets = 'allow' | 'deny';

/** Why a delivery may not go to this address, or null when it may (contract §3d): never link-local or cloud metadata, private networks only when allowed. */
export function refusal(rawAddress: string, privateTargets: PrivateTargets): string | null {
  const restricted = restrictedAddress(rawAddress);
  if (restricted?.kind === 'metadata') return `${restricted.address} is a link-local or cloud-metadata address, never a webhook target`;
  if (restricted?.kind === 'private' && privateTargets === 'deny') {
    return `${restricted.address} is a loopback or private address, refused with GATEHOUSE_WEBHOOK_PRIVATE_TARGETS=deny`;
  }
  return null;
}

export interface PostResult { status: number; body: string }

export interface WebhookSender {
  /**
   * POSTs the body and answers the status and the first `keepBytes` of the response; throws RefusedTarget
   * when the SSRF rule refuses every address, and any other error (timeout, reset) as it comes.
   */
  post(url: string, headers: Record<string, string>, body: string): Promise<PostResult>;
  close(): void;
}

export interface SenderOptions {
  privateTargets: PrivateTargets;
  /** The whole attempt, from connecting to the end of the response. */
  timeoutMs: number;
  /** At most this much of a response is read (the rest is dropped); what is kept of it is shorter. */
  maxResponseBytes: number;
  keepBytes: number;
}

/** Private targets refused (the safe default; main passes GATEHOUSE_WEBHOOK_PRIVATE_TARGETS), 15 s an attempt, 64 KB read, 1 KB kept. */
export const WEBHOOK_SENDER_DEFAULTS: SenderOptions = { privateTargets: 'deny', timeoutMs: 15_000, maxResponseBytes: 64 * 1024, keepBytes: 1024 };

/** Sends deliveries over keep-alive connections; redirects are answers (3xx), never followed. */
export function createWebhookSender(options: SenderOptions): WebhookSender {
  const rule = (address: string) => refusal(address, options.privateTargets);
  const lookupFn = checkedLookup(rule);
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64, lookup: lookupFn } as http.AgentOptions),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64, lookup: lookupFn } as https.AgentOptions),
  };
  return {
    post(url, headers, body) {
      const target = new URL(url);
      const reason = literalRefusal(target, rule);
      if (reason) return Promise.reject(new RefusedTarget(reason));
      const client = target.protocol === 'https:' ? https : http;
      const agent = agents[target.protocol as 'http:' | 'https:'];
      return new Promise<PostResult>((resolve, reject) => {
        const request = client.request(target, {
          method: 'POST', agent, signal: AbortSignal.timeout(options.timeoutMs),
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Gatehouse-Webhooks/1' },
        }, (response) => {
          const chunks: Buffer[] = [];
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            if (read < options.maxResponseBytes) chunks.push(chunk);
            read += chunk.length;
            if (read >= options.maxResponseBytes) response.destroy();
          });
          const done = () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).subarray(0, options.keepBytes).toString('utf8') });
          response.on('end', done);
          response.on('close', done);
          response.on('error', reject);
        });
        request.on('error', reject);
        request.end(body);
      });
    },
    close() { agents['http:'].destroy(); agents['https:'].destroy(); },
  };
}

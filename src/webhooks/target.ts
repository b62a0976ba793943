import { lookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

/** Whether deliveries may go to loopback and private networks (GATEHOUSE_WEBHOOK_PRIVATE_TARGETS). */
export type PrivateTargets = 'allow' | 'deny';

const subnets = (ranges: [string, number, 'ipv4' | 'ipv6'][]) => {
  const list = new net.BlockList();
  for (const [address, prefix, type] of ranges) list.addSubnet(address, prefix, type);
  return list;
};

/** Never a delivery target: link-local (cloud metadata lives there) and the known metadata addresses elsewhere. */
const NEVER = subnets([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6'], ['100.100.100.200', 32, 'ipv4'], ['fd00:ec2::254', 128, 'ipv6']]);
/**
 * Only with GATEHOUSE_WEBHOOK_PRIVATE_TARGETS=allow: this host, private and carrier-grade NAT networks,
 * "any address" (which reaches this host), and the IPv6 forms that carry an IPv4 address a gateway would
 * reach for us (IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96).
 */
const PRIVATE = subnets([
  ['127.0.0.0', 8, 'ipv4'], ['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['0.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], ['::', 96, 'ipv6'], ['64:ff9b::', 96, 'ipv6'], ['fc00::', 7, 'ipv6'],
]);

/** An IPv4 address written as IPv6 (::ffff:a.b.c.d) is checked as the IPv4 address it is. */
const unmapped = (address: string) => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address);

/** Why a delivery may not go to this address, or null when it may (contract §3d). */
export function refusal(rawAddress: string, privateTargets: PrivateTargets): string | null {
  const address = unmapped(rawAddress);
  const type = net.isIPv4(address) ? 'ipv4' : 'ipv6';
  if (NEVER.check(address, type)) return `${address} is a link-local or cloud-metadata address, never a webhook target`;
  if (privateTargets === 'deny' && PRIVATE.check(address, type)) {
    return `${address} is a loopback or private address, refused with GATEHOUSE_WEBHOOK_PRIVATE_TARGETS=deny`;
  }
  return null;
}

/** A delivery the SSRF rule refused: a failed attempt with its reason, never sent. */
export class RefusedTarget extends Error {}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** DNS as Node's sockets ask it, answering only the addresses a delivery may go to: the rule holds after resolution. */
function checkedLookup(privateTargets: PrivateTargets) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const reasons = addresses.map((a) => refusal(a.address, privateTargets));
      const allowed = addresses.filter((_, i) => reasons[i] === null);
      if (allowed.length === 0) return callback(new RefusedTarget(`${hostname} resolves only to refused addresses: ${reasons[0]}`), []);
      if (options.all) return callback(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
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
  const lookupFn = checkedLookup(options.privateTargets);
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64, lookup: lookupFn } as http.AgentOptions),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64, lookup: lookupFn } as https.AgentOptions),
  };
  return {
    post(url, headers, body) {
      const target = new URL(url);
      // An address written in the URL is never looked up, so it is checked here.
      const literal = target.hostname.replace(/^\[(.*)\]$/, '$1');
      const reason = net.isIP(literal) ? refusal(literal, options.privateTargets) : null;
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

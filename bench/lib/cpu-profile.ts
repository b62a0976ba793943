import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Reads a V8 `.cpuprofile` (written by `node --cpu-prof`) and sums the self time of its samples by
 * where the code comes from (a package, Node's core, the kernel work of a socket write, GC), over one
 * time window only: the measured load, not the start-up or the warm-up.
 *
 * The window is in microseconds of CLOCK_MONOTONIC, the clock of V8's profile timestamps and of
 * `process.hrtime` on Linux, so the bench process can take it with `monotonicMicros()` around its load.
 */

interface CallFrame { functionName: string; url: string; scriptId: string | number }
interface ProfileNode { id: number; callFrame: CallFrame }
interface CpuProfile { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] }

export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

export interface Window { fromMicros: number; toMicros: number }

/** Native functions whose self time is the kernel's work of writing to a socket. */
const SOCKET_WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString']);

const PACKAGE_GROUPS: [RegExp, string][] = [
  [/^(pg|pg-protocol|pg-pool|pg-types|pg-cloudflare|pgpass|postgres-.*)$/, 'pg driver (pg, pg-protocol, pg-pool, pg-types)'],
  [/^kysely$/, 'Kysely (building and compiling statements)'],
  [/^(ajv|ajv-formats|fast-json-stringify|fast-uri|json-schema-ref-resolver|@fastify\/ajv-compiler|@fastify\/fast-json-stringify-compiler)$/, 'schemas (Ajv, fast-json-stringify)'],
  [/^(fastify|find-my-way|avvio|light-my-request|fastq|toad-cache|process-warning|@fastify\/.*|secure-json-parse|rfdc)$/, 'Fastify and its plugins (routing, hooks, replies)'],
  [/^(pino|pino-std-serializers|thread-stream|sonic-boom|on-exit-leak-free|quick-format-unescaped|fast-redact|abstract-logging)$/, 'logging (pino)'],
  [/^prom-client$/, 'metrics (prom-client)'],
];

/** Where a frame's code comes from; null for idle time. */
export function categoryOf(frame: CallFrame, ownCode: RegExp): string | null {
  const { functionName, url } = frame;
  if (functionName === '(idle)' || functionName === '(root)') return null;
  if (functionName === '(garbage collector)') return 'garbage collection (main thread)';
  if (functionName === '(program)') return 'V8 and native code without a JS frame';
  if (!url) {
    if (SOCKET_WRITES.has(functionName)) return 'socket writes (kernel work of writev/write)';
    // Functions made with `new Function` have a script but no URL: Ajv's validators, fast-json-stringify's serializers.
    if (String(frame.scriptId) !== '0') return 'schemas (Ajv, fast-json-stringify)';
    return 'other native functions (crypto, timers, HTTP parser)';
  }
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(url);
  if (inPackage) return PACKAGE_GROUPS.find(([pattern]) => pattern.test(inPackage[1]))?.[1] ?? `other packages (${inPackage[1]})`;
  if (ownCode.test(url)) return 'the server\'s own code';
  if (url.startsWith('node:')) return /node:(_http|internal\/http)/.test(url) ? 'Node HTTP (parsing, headers)' : 'Node core (net, streams, events, timers)';
  return `other (${url})`;
}

/** Self time in ms by category within the window. */
export function selfTimeByCategory(profile: CpuProfile, window: Window, ownCode: RegExp): Map<string, number> {
  const categories = new Map<number, string | null>(profile.nodes.map((n) => [n.id, categoryOf(n.callFrame, ownCode)]));
  const totals = new Map<string, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    // A sample's time is the interval that ends at the next sample; counting each delta once is what DevTools does.
    const next = profile.timeDeltas[i + 1] ?? 0;
    if (at < window.fromMicros || at > window.toMicros) continue;
    const category = categories.get(profile.samples[i]);
    if (category) totals.set(category, (totals.get(category) ?? 0) + next / 1000);
  }
  return totals;
}

/**
 * The main thread's profile of what a process wrote into `dir`. Node names each thread's file
 * `CPU.<date>.<time>.<pid>.<thread id>.<sequence>.cpuprofile`, and the main thread's id is 0; a module
 * loader's thread (tsx's) writes one of its own, with more samples than the main thread's in a short run.
 */
export async function readProfile(dir: string): Promise<CpuProfile> {
  const main = (await readdir(dir)).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (!main) throw new Error(`no main-thread .cpuprofile in ${dir}`);
  return JSON.parse(await readFile(join(dir, main), 'utf8')) as CpuProfile;
}

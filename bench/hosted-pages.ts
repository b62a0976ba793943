/**
 * `npm run bench -- hosted-pages` (issue 29): what the hosted sign-in page costs the person who opens it.
 * - time to first byte of GET /sign-in: the first request after the server starts, and warm (one request
 *   after another, on keep-alive-less connections as a first visit makes them), p50 and p99;
 * - page weight: the requests a browser makes for the page (the document and what it links) and their bytes.
 * Writes bench/results/hosted-pages.md.
 */
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { randomBytes } from 'node:crypto';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus, loadConfig } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { machineLine } from './lib/report.js';
import { statsOf } from './lib/rounds.js';
import { startServer, type RunningServer } from './lib/server.js';
import { entryFromStats, type SummaryEntry } from './lib/summary.js';

export const description = 'The hosted sign-in page: time to first byte (first and warm) and page weight (requests, bytes)';

const RESULTS_FILE = new URL('results/hosted-pages.md', import.meta.url);
const AIMS = { warmP50Ms: 10, bytes: 10_000, requests: 3 } as const;

/** Milliseconds from sending the request to the response's headers, and the body's bytes. */
function timedGet(url: string, host: string): Promise<{ ttfbMs: number; bytes: number; body: string }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(url, { headers: { host, 'accept-language': 'en' }, agent: false }, (res) => {
      const ttfbMs = Number(process.hrtime.bigint() - started) / 1e6;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ ttfbMs, bytes: body.length, body: body.toString() });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** What the document makes a browser fetch: its stylesheets, scripts and images (same host). */
const subresources = (html: string) => [...html.matchAll(/<(?:link rel="stylesheet" href|script src|img src)="([^"]+)"/g)].map((m) => m[1]!);

export async function run(): Promise<SummaryEntry[]> {
  const config = loadConfig({ rounds: 3 });
  const calls = Math.floor(envNumber('BENCH_PAGE_CALLS', 1000, 50));
  console.log(`hosted-pages bench: ${calls} warm requests per round, ${config.rounds} rounds, database ${redact(config.databaseUrl)}`);
  console.log(machineLine());
  const adminToken = randomBytes(24).toString('hex');
  let gatehouse: RunningServer | undefined;
  try {
    await recreateDatabase(config.databaseUrl);
    gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts',
      env: { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY } });
    const host = new URL(gatehouse.url).host;
    expectStatus('create environment', await http(`${gatehouse.url}/api/admin/v1/environments`, {
      method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name: 'hosted-pages-bench', frontendHost: host },
    }), 201);
    const page = `${gatehouse.url}/sign-in`;
    const first = await timedGet(page, host);
    const linked = await Promise.all(subresources(first.body).map((path) => timedGet(new URL(path, gatehouse!.url).href, host)));
    const weight = { requests: 1 + linked.length, bytes: first.bytes + linked.reduce((sum, r) => sum + r.bytes, 0) };

    const p50s: number[] = [];
    const p99s: number[] = [];
    for (let round = 0; round < config.rounds; round++) {
      const times: number[] = [];
      for (let i = 0; i < calls; i++) times.push((await timedGet(page, host)).ttfbMs);
      times.sort((a, b) => a - b);
      p50s.push(times[Math.floor(calls * 0.5)]!);
      p99s.push(times[Math.floor(calls * 0.99)]!);
      console.log(`  round ${round + 1}: p50 ${p50s.at(-1)!.toFixed(2)} ms, p99 ${p99s.at(-1)!.toFixed(2)} ms`);
    }
    const p50 = statsOf(p50s);
    const p99 = statsOf(p99s);
    const table = [
      '# `hosted-pages` results', '',
      'GET /sign-in on a Gatehouse started for the run (PostgreSQL), each request on a new connection as a first',
      'visit makes it (`npm run bench -- hosted-pages`; `BENCH_PAGE_CALLS` sets the warm requests per round).', '',
      `## ${new Date().toISOString().slice(0, 10)}, ${machineLine().replace('machine: ', '')}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`, '',
      '| Figure | Value | Aim |', '|---|---:|---:|',
      `| first request after start, time to first byte | ${first.ttfbMs.toFixed(1)} ms | |`,
      `| warm, time to first byte, p50 (median of ${config.rounds} rounds) | ${p50.median.toFixed(2)} ms | ≤ ${AIMS.warmP50Ms} ms |`,
      `| warm, time to first byte, p99 | ${p99.median.toFixed(2)} ms | |`,
      `| requests for the page | ${weight.requests} (${['/sign-in', ...subresources(first.body)].join(', ')}) | ≤ ${AIMS.requests} |`,
      `| bytes for the page (uncompressed) | ${weight.bytes.toLocaleString('en-US')} | ≤ ${AIMS.bytes.toLocaleString('en-US')} |`, '',
    ].join('\n');
    await writeFile(RESULTS_FILE, table);
    console.log(`\n${table}\nwrote bench/results/hosted-pages.md`);
    return [
      entryFromStats('sign-in page, warm time to first byte p50', p50, 'ms', { op: '<=', value: AIMS.warmP50Ms }),
      { name: 'sign-in page weight', value: weight.bytes, unit: 'bytes', aim: { op: '<=', value: AIMS.bytes }, spread: null, note: `${weight.requests} requests` },
    ];
  } catch (err) {
    if (gatehouse) console.error(`--- last output of gatehouse ---\n${gatehouse.output()}`);
    throw err;
  } finally {
    await gatehouse?.stop();
  }
}

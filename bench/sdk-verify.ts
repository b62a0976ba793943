/**
 * `npm run bench -- sdk-verify` (issue 27): what the SDK's session verifier costs a customer's backend per
 * call, measured the way a backend calls it (one request after another, on one thread):
 * - offline: `createSessionVerifier({ frontendUrl })`, the signature checked against the cached JWKS;
 * - online: with a Server API client and `cacheSeconds: 0`, so every call is a `POST /sessions/verify`.
 * Writes bench/results/sdk-verify.md (the dated table) and the raw figures as JSON.
 */
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { randomBytes } from 'node:crypto';
import { createClientPlane, createServerClient, createSessionVerifier, type SessionVerifier } from '@gatehouse/sdk';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus, loadConfig } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { machineInfo, machineLine, writeResults } from './lib/report.js';
import { statsOf } from './lib/rounds.js';
import { startServer, type RunningServer } from './lib/server.js';
import type { SummaryEntry } from './lib/summary.js';

export const description = "The SDK's session verifier per call: offline (cached JWKS) and online (a Server API check per call, cache off)";

const RESULTS_FILE = new URL('results/sdk-verify.md', import.meta.url);
const PASSWORD = 'bench passphrase 42';
/** Aims per call at the median: a local signature check, and one round trip to Gatehouse on the same machine. */
const AIMS = { offlineMs: 0.5, onlineMs: 5 } as const;

interface PerCall { calls: number; perSecond: number; p50Ms: number; p99Ms: number }

/** `calls` sequential verifications after a warm-up: their latency percentiles and the rate on one thread. */
async function measure(verifier: SessionVerifier, token: string, calls: number): Promise<PerCall> {
  for (let i = 0; i < Math.min(500, calls); i++) await verifier.verifyToken(token);
  const times: number[] = [];
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    const t0 = process.hrtime.bigint();
    if (!(await verifier.verifyToken(token))) throw new Error('the bench token did not verify');
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const totalS = Number(process.hrtime.bigint() - started) / 1e9;
  times.sort((a, b) => a - b);
  return { calls, perSecond: calls / totalS, p50Ms: times[Math.floor(calls * 0.5)]!, p99Ms: times[Math.floor(calls * 0.99)]! };
}

/** A signed-in user's session JWT, valid an hour so it outlives the run. */
async function sessionJwt(url: string, adminToken: string) {
  const env = expectStatus<{ id: string; secretKey: string }>('create environment', await http(`${url}/api/admin/v1/environments`, {
    method: 'POST', headers: { authorization: `Bearer ${adminToken}` },
    body: { name: 'sdk-verify-bench', frontendHost: new URL(url).host, settings: { session: { jwtLifetimeSeconds: 3600 } } },
  }), 201);
  const server = createServerClient({ baseUrl: url, secretKey: env.secretKey });
  await server.createUser({ email: 'bench@example.com', password: PASSWORD });
  const client = createClientPlane({ frontendUrl: url, native: true });
  await client.signIn({ email: 'bench@example.com', password: PASSWORD });
  return { server, token: (await client.createSessionToken()).token };
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(n >= 10 ? 1 : 3));

function markdown(started: Date, rows: [string, PerCall][], statsRounds: number) {
  return [
    '# `sdk-verify` results', '',
    "What the SDK's `createSessionVerifier` costs a backend per call, calls made one after another on one thread",
    '(`npm run bench -- sdk-verify`; `BENCH_VERIFY_CALLS` sets the calls per mode). Offline: the signature against',
    'the cached JWKS. Online: `server` given and `cacheSeconds: 0`, so each call is a `POST /api/server/v1/sessions/verify`',
    'to a Gatehouse on the same machine (PostgreSQL). Both run on the same busy machine as everything else here;',
    'compare with the `tokens` bench\'s bare ES256 ceiling of the same day.', '',
    `## ${started.toISOString().slice(0, 10)}, ${machineLine().replace('machine: ', '')}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`, '',
    '| Mode | Calls | Verifications/s | p50 ms | p99 ms | Aim (p50) | |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...rows.map(([name, r]) => {
      const aim = name.startsWith('offline') ? AIMS.offlineMs : AIMS.onlineMs;
      return `| ${name} | ${r.calls.toLocaleString('en-US')} | ${fmt(r.perSecond)} | ${fmt(r.p50Ms)} | ${fmt(r.p99Ms)} | ≤ ${aim} | ${r.p50Ms <= aim ? 'met' : '**not met**'} |`;
    }),
    '', `Median of ${statsRounds} runs per mode.`, '',
  ].join('\n');
}

export async function run(): Promise<SummaryEntry[]> {
  const config = loadConfig({ rounds: 3 });
  const calls = Math.floor(envNumber('BENCH_VERIFY_CALLS', 5000, 100));
  const started = new Date();
  console.log(`sdk-verify bench: ${calls} calls per mode, ${config.rounds} rounds, database ${redact(config.databaseUrl)}`);
  console.log(machineLine());
  const adminToken = randomBytes(24).toString('hex');
  let gatehouse: RunningServer | undefined;
  try {
    await recreateDatabase(config.databaseUrl);
    gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts',
      env: { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY } });
    const { server, token } = await sessionJwt(gatehouse.url, adminToken);
    const modes = {
      'offline (cached JWKS)': createSessionVerifier({ frontendUrl: gatehouse.url }),
      'online (Server API check per call, cache off)': createSessionVerifier({ frontendUrl: gatehouse.url, server, cacheSeconds: 0 }),
    };
    const runs: Record<string, PerCall[]> = {};
    for (let round = 0; round < config.rounds; round++) {
      for (const [name, verifier] of Object.entries(modes)) {
        const result = await measure(verifier, token, name.startsWith('offline') ? calls : Math.ceil(calls / 5));
        console.log(`  ${name}, round ${round + 1}: ${fmt(result.perSecond)}/s, p50 ${fmt(result.p50Ms)} ms, p99 ${fmt(result.p99Ms)} ms`);
        (runs[name] ??= []).push(result);
      }
    }
    const medianRun = (list: PerCall[]) => [...list].sort((a, b) => a.p50Ms - b.p50Ms)[Math.floor(list.length / 2)]!;
    const rows = Object.entries(runs).map(([name, list]) => [name, medianRun(list)] as [string, PerCall]);
    const table = markdown(started, rows, config.rounds);
    await writeFile(RESULTS_FILE, table);
    const file = await writeResults('sdk-verify', { bench: 'sdk-verify', startedAt: started.toISOString(), machine: machineInfo(), runs });
    console.log(`\n${table}\nwrote bench/results/sdk-verify.md; raw figures: ${file}`);
    return Object.entries(runs).map(([name, list]) => {
      const stats = statsOf(list.map((r) => r.p50Ms));
      return { name: `${name}, p50 per call`, value: stats.median, unit: 'ms', aim: { op: '<=', value: name.startsWith('offline') ? AIMS.offlineMs : AIMS.onlineMs },
        spread: { min: stats.min, max: stats.max }, rounds: list.length };
    });
  } catch (err) {
    if (gatehouse) console.error(`--- last output of gatehouse ---\n${gatehouse.output()}`);
    throw err;
  } finally {
    await gatehouse?.stop();
  }
}

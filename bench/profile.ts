/**
 * `npm run bench -- profile`: where a Server API GET spends its CPU, next to the bare Fastify + pg
 * baseline doing the same read. Both servers run under `node --cpu-prof` while the users bench's GET
 * load hits them one after the other; each profile's self time over the measured seconds is grouped by
 * where the code comes from (bench/lib/cpu-profile.ts) and divided by the requests answered.
 * No aim: it explains the `users` bench's GET ratio. See bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuProbe } from './lib/cpu.js';
import { monotonicMicros, readProfile, selfTimeByCategory, type Window } from './lib/cpu-profile.js';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import type { LoadSpec } from './lib/load.js';
import { machineLine, writeResults } from './lib/report.js';
import { seedUsers } from './lib/seed.js';
import { startServer, type RunningServer } from './lib/server.js';
import { runTimedLoad } from './lib/timed-load.js';
import { getUserLoad, rotation, USERS_ENVIRONMENT_SETTINGS, USERS_PASSWORD } from './lib/user-loads.js';

export const description = 'CPU profile of GET user next to the bare Fastify + pg baseline: microseconds per request by package';

function readConfig() {
  return {
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench',
    durationSeconds: envNumber('BENCH_DURATION', 10, 1),
    warmupSeconds: envNumber('BENCH_WARMUP', 3),
    connections: Math.floor(envNumber('BENCH_CONNECTIONS', 32, 1)),
    users: Math.floor(envNumber('BENCH_USERS', 100_000, 1)),
    /** Microseconds between samples (node's --cpu-prof-interval). */
    intervalMicros: Math.floor(envNumber('BENCH_PROFILE_INTERVAL', 250, 50)),
  };
}

interface Profiled {
  name: string;
  requests: number;
  requestsPerSecond: number;
  serverCpuMsPerRequest: number | null;
  postgresCpuMsPerRequest: number | null;
  window: Window;
  profileDir: string;
}

const OWN_CODE = /\/(dist|src|bench)\//;

export async function run(): Promise<[]> {
  const config = readConfig();
  console.log(`profile bench: GET user vs the baseline under --cpu-prof (${config.intervalMicros} µs sampling), ${config.users.toLocaleString('en-US')} users, `
    + `${config.durationSeconds}s per load (+${config.warmupSeconds}s warm-up), ${config.connections} connections, database ${redact(config.databaseUrl)}`);
  console.log(machineLine());

  const profileRoot = await mkdtemp(join(tmpdir(), 'gatehouse-profile-'));
  const profiling = (name: string) => ['--cpu-prof', `--cpu-prof-dir=${join(profileRoot, name)}`, `--cpu-prof-interval=${config.intervalMicros}`];
  const servers: RunningServer[] = [];
  try {
    await recreateDatabase(config.databaseUrl);
    const adminToken = randomBytes(24).toString('hex');
    const gatehouse = await startServer({
      name: 'gatehouse', script: 'src/main.ts', nodeArgs: profiling('gatehouse'),
      env: { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY },
    });
    servers.push(gatehouse);
    const env = expectStatus<{ id: string; secretKey: string }>('create environment', await http(`${gatehouse.url}/api/admin/v1/environments`, {
      method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name: 'profile-bench', settings: USERS_ENVIRONMENT_SETTINGS },
    }), 201);
    const { ids } = await seedUsers({ databaseUrl: config.databaseUrl, environmentId: env.id, count: config.users, password: USERS_PASSWORD });
    const baseline = await startServer({
      name: 'baseline', script: 'bench/baseline-server.ts', nodeArgs: profiling('baseline'),
      // The same prepared statement as GET user: what differs is then the server's own work.
      env: { DATABASE_URL: config.databaseUrl, BASELINE_ENVIRONMENT_ID: env.id, BASELINE_PREPARED: '1' },
    });
    servers.push(baseline);
    const nextUser = rotation(ids.length);
    const loads: [RunningServer, LoadSpec][] = [
      [gatehouse, getUserLoad(env.secretKey, ids)],
      [baseline, { name: 'baseline: bare Fastify + pg, GET by id, prepared statement', method: 'GET', next: () => ({ path: `/users/${ids[nextUser()]}` }) }],
    ];
    expectStatus('GET user', await http(`${gatehouse.url}/api/server/v1/users/${ids[0]}`, { headers: { authorization: `Bearer ${env.secretKey}` } }), 200);
    expectStatus('baseline GET', await http(`${baseline.url}/users/${ids[0]}`), 200);

    const measured: Profiled[] = [];
    for (const [target, spec] of loads) {
      process.stdout.write(`profiling ${spec.name} ... `);
      const cpu = cpuProbe(target.child.pid, config.databaseUrl);
      let fromMicros = 0;
      const load = await runTimedLoad({
        ...spec, url: target.url, connections: config.connections, durationSeconds: config.durationSeconds, warmupSeconds: config.warmupSeconds,
        beforeMeasure: async () => { await cpu.start(); fromMicros = monotonicMicros(); },
      });
      const window = { fromMicros, toMicros: monotonicMicros() };
      const used = await cpu.stop();
      const per = (ms: number | null) => (ms === null || !load.totalRequests ? null : ms / load.totalRequests);
      measured.push({
        name: spec.name, requests: load.totalRequests, requestsPerSecond: load.requestsPerSecond, window, profileDir: join(profileRoot, target.name),
        serverCpuMsPerRequest: per(used.serverMs), postgresCpuMsPerRequest: per(used.postgresMs),
      });
      console.log(`${Math.round(load.requestsPerSecond).toLocaleString('en-US')} req/s under the profiler, ${load.non2xx + load.errors} non-2xx/errors`);
    }
    // The profiles are written when the processes exit.
    for (const s of servers.splice(0)) await s.stop();

    const [subject, reference] = await Promise.all(measured.map(async (m) => {
      const byCategory = selfTimeByCategory(await readProfile(m.profileDir), m.window, OWN_CODE);
      return { ...m, microsPerRequest: new Map([...byCategory].map(([k, ms]) => [k, (ms * 1000) / m.requests])) };
    }));
    const categories = [...new Set([...subject.microsPerRequest.keys(), ...reference.microsPerRequest.keys()])]
      .sort((a, b) => (subject.microsPerRequest.get(b) ?? 0) - (subject.microsPerRequest.get(a) ?? 0));
    const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    const us = (v: number | undefined) => (v ?? 0).toFixed(1);
    const share = (v: number | undefined, m: Map<string, number>) => `${(((v ?? 0) / total(m)) * 100).toFixed(1)}%`;

    console.log('\n## Main-thread CPU per GET, by where the code comes from (µs per request, profile self time over the measured seconds)\n');
    console.log('| Where | GET user | share | baseline | share | difference |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const c of categories) {
      const a = subject.microsPerRequest.get(c);
      const b = reference.microsPerRequest.get(c);
      console.log(`| ${c} | ${us(a)} | ${share(a, subject.microsPerRequest)} | ${us(b)} | ${share(b, reference.microsPerRequest)} | ${((a ?? 0) - (b ?? 0)) >= 0 ? '+' : ''}${us((a ?? 0) - (b ?? 0))} |`);
    }
    const [ta, tb] = [total(subject.microsPerRequest), total(reference.microsPerRequest)];
    console.log(`| **busy main thread** | **${us(ta)}** | | **${us(tb)}** | | **+${us(ta - tb)}** |`);
    const cpuLine = (m: Profiled) => `${m.name}: ${Math.round(m.requestsPerSecond).toLocaleString('en-US')} req/s under the profiler; CPU per request from /proc `
      + `${m.serverCpuMsPerRequest?.toFixed(3) ?? '–'} ms server (every thread) + ${m.postgresCpuMsPerRequest?.toFixed(3) ?? '–'} ms PostgreSQL`;
    console.log(`\n${cpuLine(subject)}\n${cpuLine(reference)}`);
    const file = await writeResults('profile', {
      config: { ...config, databaseUrl: redact(config.databaseUrl) },
      loads: [subject, reference].map((m) => ({ ...m, microsPerRequest: Object.fromEntries(m.microsPerRequest) })),
      profiles: profileRoot,
    });
    console.log(`\nProfiles (open in Chrome DevTools, Performance): ${profileRoot}\nJSON: ${file}`);
    return [];
  } catch (err) {
    for (const s of servers) console.error(`--- last output of ${s.name} ---\n${s.output()}`);
    throw err;
  }
}

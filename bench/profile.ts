/**
 * `npm run bench -- profile`: where a Server API GET spends its CPU, next to the bare Fastify + pg
 * baseline doing the same read (a prepared statement, as GET user), and where a sign-in's goes, next to
 * the raw argon2id hash. Both servers run under `node --cpu-prof` while the users bench's loads hit them
 * one after the other; each profile's self time over the measured seconds is grouped by where the code
 * comes from (bench/lib/cpu-profile.ts) and divided by the requests answered, and the server's CPU is
 * split by thread from /proc. No aim: it explains the `users` bench's ratios. See bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuProbe, threadCpuMs } from './lib/cpu.js';
import { monotonicMicros, readProfile, selfTimeByCategory, type Window } from './lib/cpu-profile.js';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus, loadConfig } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { measureHashRate } from './lib/hashrate.js';
import { http } from './lib/http.js';
import type { LoadSpec } from './lib/load.js';
import { machineLine, writeResults } from './lib/report.js';
import { seedUsers } from './lib/seed.js';
import { startServer, type RunningServer } from './lib/server.js';
import { runTimedLoad } from './lib/timed-load.js';
import { getUserLoad, rotation, signInLoad, USERS_ENVIRONMENT_SETTINGS, USERS_PASSWORD } from './lib/user-loads.js';

export const description = 'CPU profiles: GET user next to the bare Fastify + pg baseline (µs per request by package), and a sign-in by thread next to the raw hash';

function readConfig() {
  return {
    ...loadConfig({ durationSeconds: 10, warmupSeconds: 3 }),
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
  mainThreadMsPerRequest: number | null;
  otherThreadsMsPerRequest: number | null;
  window: Window;
  profileDir: string;
}

const OWN_CODE = /\/(dist|src|bench)\//;

export async function run(): Promise<[]> {
  const config = readConfig();
  console.log(`profile bench: GET user vs the baseline under --cpu-prof (${config.intervalMicros} µs sampling), then sign-in by thread, ${config.users.toLocaleString('en-US')} users, `
    + `${config.durationSeconds}s per load (+${config.warmupSeconds}s warm-up), ${config.connections} connections, database ${redact(config.databaseUrl)}`);
  console.log(machineLine());

  const profileRoot = await mkdtemp(join(tmpdir(), 'gatehouse-profile-'));
  const profiling = (name: string) => ['--cpu-prof', `--cpu-prof-dir=${join(profileRoot, name)}`, `--cpu-prof-interval=${config.intervalMicros}`];
  const servers: RunningServer[] = [];
  try {
    await recreateDatabase(config.databaseUrl);
    const adminToken = randomBytes(24).toString('hex');
    const gatehouseEnv = { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY };
    const gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts', nodeArgs: profiling('gatehouse'), env: gatehouseEnv });
    servers.push(gatehouse);
    const env = expectStatus<{ id: string; secretKey: string; frontendHost: string }>('create environment', await http(`${gatehouse.url}/api/admin/v1/environments`, {
      method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name: 'profile-bench', settings: USERS_ENVIRONMENT_SETTINGS },
    }), 201);
    const { ids, emails } = await seedUsers({ databaseUrl: config.databaseUrl, environmentId: env.id, count: config.users, password: USERS_PASSWORD });
    const baseline = await startServer({
      name: 'baseline', script: 'bench/baseline-server.ts', nodeArgs: profiling('baseline'),
      // The same prepared statement as GET user: what differs is then the server's own work.
      env: { DATABASE_URL: config.databaseUrl, BASELINE_ENVIRONMENT_ID: env.id, BASELINE_PREPARED: '1' },
    });
    servers.push(baseline);
    const nextUser = rotation(ids.length);
    const bareLoad: LoadSpec = { name: 'baseline: bare Fastify + pg, GET by id, prepared statement', method: 'GET', next: () => ({ path: `/users/${ids[nextUser()]}` }) };
    expectStatus('GET user', await http(`${gatehouse.url}/api/server/v1/users/${ids[0]}`, { headers: { authorization: `Bearer ${env.secretKey}` } }), 200);
    expectStatus('baseline GET', await http(`${baseline.url}/users/${ids[0]}`), 200);

    const measureLoad = async (target: RunningServer, spec: LoadSpec): Promise<Profiled> => {
      process.stdout.write(`measuring ${spec.name} ... `);
      const pid = target.child.pid!;
      const cpu = cpuProbe(pid, config.databaseUrl);
      let fromMicros = 0;
      let threadsBefore: Awaited<ReturnType<typeof threadCpuMs>>;
      const load = await runTimedLoad({
        ...spec, url: target.url, connections: config.connections, durationSeconds: config.durationSeconds, warmupSeconds: config.warmupSeconds,
        beforeMeasure: async () => { await cpu.start(); threadsBefore = await threadCpuMs(pid); fromMicros = monotonicMicros(); },
      });
      const window = { fromMicros, toMicros: monotonicMicros() };
      const [threadsAfter, used] = [await threadCpuMs(pid), await cpu.stop()];
      const per = (ms: number | null | undefined) => (ms === null || ms === undefined || !load.totalRequests ? null : ms / load.totalRequests);
      console.log(`${Math.round(load.requestsPerSecond).toLocaleString('en-US')} req/s, ${load.non2xx + load.errors} non-2xx/errors`);
      return {
        name: spec.name, requests: load.totalRequests, requestsPerSecond: load.requestsPerSecond, window, profileDir: join(profileRoot, target.name),
        serverCpuMsPerRequest: per(used.serverMs), postgresCpuMsPerRequest: per(used.postgresMs),
        mainThreadMsPerRequest: per(threadsAfter && threadsBefore && threadsAfter.main - threadsBefore.main),
        otherThreadsMsPerRequest: per(threadsAfter && threadsBefore && threadsAfter.others - threadsBefore.others),
      };
    };
    const [get, bare] = [await measureLoad(gatehouse, getUserLoad(env.secretKey, ids)), await measureLoad(baseline, bareLoad)];
    // The profiles are written when the processes exit.
    for (const s of servers.splice(0)) await s.stop();
    // Sign-in on a server without the profiler, whose own threads would count among the server's other threads.
    const plain = await startServer({ name: 'gatehouse-plain', script: 'src/main.ts', env: gatehouseEnv });
    servers.push(plain);
    const signIn = await measureLoad(plain, signInLoad(env.frontendHost, emails));
    for (const s of servers.splice(0)) await s.stop();
    process.stdout.write('measuring the raw argon2id hash (4 in flight, no server running) ... ');
    const hash = await measureHashRate({ seconds: config.durationSeconds, concurrency: 4 });
    console.log(`${hash.hashesPerSecond.toFixed(0)} hashes/s, CPU ${hash.cpuMsPerHash.toFixed(2)} ms/hash`);

    const perRequest = async (m: Profiled) => {
      const byCategory = selfTimeByCategory(await readProfile(m.profileDir), m.window, OWN_CODE);
      return new Map([...byCategory].map(([k, ms]) => [k, (ms * 1000) / m.requests]));
    };
    const [getMicros, bareMicros] = [await perRequest(get), await perRequest(bare)];

    console.log('\n## Main thread per GET, by where the code comes from (µs per request: the profile\'s samples over the measured seconds)\n');
    console.log(categoryTable([['GET user', getMicros], ['baseline', bareMicros]]));
    console.log(`\n${cpuLine(get)}\n${cpuLine(bare)}`);

    const serverParts = (signIn.mainThreadMsPerRequest ?? 0) + (signIn.otherThreadsMsPerRequest ?? 0);
    const signInTotal = serverParts + (signIn.postgresCpuMsPerRequest ?? 0);
    console.log('\n## CPU per sign-in, by thread (ms per sign-in, from /proc over the measured seconds)\n');
    console.log('| Part | ms per sign-in |\n|---|---:|');
    console.log(`| server, threads other than the main one (argon2id verification on the libuv pool, V8's helpers) | ${ms(signIn.otherThreadsMsPerRequest)} |`);
    console.log(`| server, main thread (HTTP, JSON, validation, the two statements, the answer) | ${ms(signIn.mainThreadMsPerRequest)} |`);
    console.log(`| PostgreSQL backends (the two statements and their commits) | ${ms(signIn.postgresCpuMsPerRequest)} |`);
    console.log(`| **sign-in, all** | **${ms(signInTotal)}** |`);
    console.log(`| raw argon2id hash in the bench process, no server running (per hash) | ${ms(hash.cpuMsPerHash)} |`);
    console.log(`\nCPU bound of sign-in / raw hash rate: ${(hash.cpuMsPerHash / signInTotal).toFixed(2)}; with PostgreSQL's part on another machine: ${(hash.cpuMsPerHash / serverParts).toFixed(2)}; `
      + `if the verification cost no more in the server than in the bench process: ${(hash.cpuMsPerHash / (signInTotal - (signIn.otherThreadsMsPerRequest ?? 0) + hash.cpuMsPerHash)).toFixed(2)}.`);

    const file = await writeResults('profile', {
      config: { ...config, databaseUrl: redact(config.databaseUrl) },
      loads: [{ ...get, microsPerRequest: Object.fromEntries(getMicros) }, { ...bare, microsPerRequest: Object.fromEntries(bareMicros) },
        signIn],
      hash, profiles: profileRoot,
    });
    console.log(`\nProfiles (open in Chrome DevTools, Performance): ${profileRoot}\nJSON: ${file}`);
    return [];
  } catch (err) {
    for (const s of servers) console.error(`--- last output of ${s.name} ---\n${s.output()}`);
    throw err;
  }
}

const ms = (v: number | null | undefined, digits = 2) => (v === null || v === undefined ? '–' : v.toFixed(digits));
const us = (v: number | undefined) => (v ?? 0).toFixed(1);
const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

const cpuLine = (m: Profiled) => `${m.name}: ${Math.round(m.requestsPerSecond).toLocaleString('en-US')} req/s under the profiler; CPU per request from /proc `
  + `${ms(m.serverCpuMsPerRequest, 3)} ms server (main thread ${ms(m.mainThreadMsPerRequest, 3)}, other threads ${ms(m.otherThreadsMsPerRequest, 3)}) + ${ms(m.postgresCpuMsPerRequest, 3)} ms PostgreSQL`;

/** µs per request by category for one load or more (the first sorts the rows); with two, their difference. */
function categoryTable(columns: [string, Map<string, number>][]): string {
  const [first, second] = columns;
  const categories = [...new Set(columns.flatMap(([, m]) => [...m.keys()]))].sort((a, b) => (first[1].get(b) ?? 0) - (first[1].get(a) ?? 0));
  const share = (v: number | undefined, m: Map<string, number>) => `${(((v ?? 0) / total(m)) * 100).toFixed(1)}%`;
  const signed = (v: number) => `${v >= 0 ? '+' : ''}${us(v)}`;
  const lines = [
    `| Where | ${columns.map(([name]) => `${name} | share`).join(' | ')}${second ? ' | difference' : ''} |`,
    `|---|${columns.map(() => '---:|---:').join('|')}|${second ? '---:|' : ''}`,
    ...categories.map((c) => `| ${c} | ${columns.map(([, m]) => `${us(m.get(c))} | ${share(m.get(c), m)}`).join(' | ')}`
      + `${second ? ` | ${signed((first[1].get(c) ?? 0) - (second[1].get(c) ?? 0))}` : ''} |`),
    `| **busy main thread** | ${columns.map(([, m]) => `**${us(total(m))}** | `).join('| ')}${second ? `| **${signed(total(first[1]) - total(second[1]))}** ` : ''}|`,
  ];
  return lines.join('\n');
}

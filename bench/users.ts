/**
 * `npm run bench -- users`: the users Server API, client sign-in and the machine's ceilings
 * (a bare Fastify + pg server, the raw argon2id rate), over real PostgreSQL with 100k seeded users.
 * GET user and its ceiling, and sign-in and its ceiling, run in interleaved rounds (bench/lib/rounds.ts).
 * See bench/README.md for the method.
 */
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import pg from 'pg';
import { recreateDatabase, redact } from './lib/db.js';
import { measureHashRate, type HashRateResult } from './lib/hashrate.js';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus, loadConfig } from './lib/config.js';
import { http } from './lib/http.js';
import { loadLine, medianOfRounds, timedWithCpu, type Latency } from './lib/latency.js';
import type { LoadSpec } from './lib/load.js';
import { machineInfo, machineLine, markdownTable, writeResults, type Row } from './lib/report.js';
import { compare, cpuOf, interleaved, markdownComparisons, median, MIN_ROUNDS, type RoundFigures } from './lib/rounds.js';
import { seedUsers } from './lib/seed.js';
import { startServer, type RunningServer } from './lib/server.js';
import { entryFromComparison, type SummaryEntry } from './lib/summary.js';
import { getUserLoad, rotation, signInLoad, USERS_ENVIRONMENT_SETTINGS, USERS_PASSWORD } from './lib/user-loads.js';

export const description = 'Users Server API (get, create, metadata PATCH), client sign-in, vs a bare Fastify+pg server and raw argon2id';

/** The aims (issue 13): what the framework may cost on a primary-key read, and sign-in next to its hash. */
const AIMS = { getUser: { op: '>=', value: 0.80 }, signIn: { op: '>=', value: 0.88 } } as const;

function readConfig() {
  return {
    ...loadConfig({ durationSeconds: 10, rounds: MIN_ROUNDS }),
    users: Math.floor(envNumber('BENCH_USERS', 100_000, 1)),
    hashSeconds: envNumber('BENCH_HASH_SECONDS', 5, 1),
    hashConcurrency: Math.floor(envNumber('BENCH_HASH_CONCURRENCY', 4, 1)),
  };
}

function progress(done: number, total: number) {
  const step = Math.max(1, Math.floor(total / 10));
  if (done === total || Math.floor(done / step) !== Math.floor((done - 1) / step)) {
    process.stdout.write(`  seeded ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}\n`);
  }
}

const toRow = (l: Latency): Row => ({
  name: l.name, rate: l.requestsPerSecond, p50Ms: l.p50Ms, p99Ms: l.p99Ms, non2xx: l.non2xx + l.errors + l.timeouts,
  serverCpuMs: l.serverCpuMsPerRequest, postgresCpuMs: l.postgresCpuMsPerRequest,
});

/** The hash rounds as one row: each figure the median of the rounds. */
const hashRow = (rounds: HashRateResult[]): Row => ({
  name: `raw argon2id hash, ${rounds[0].concurrency} in flight (hashes/s)`, rate: median(rounds.map((h) => h.hashesPerSecond)),
  p50Ms: median(rounds.map((h) => h.p50Ms)), p99Ms: median(rounds.map((h) => h.p99Ms)), non2xx: null,
  serverCpuMs: median(rounds.map((h) => h.cpuMsPerHash)), postgresCpuMs: null,
});

const figures = (l: Latency): RoundFigures => ({ rate: l.requestsPerSecond, cpuMs: cpuOf(l) });

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  const started = new Date();
  console.log(`users bench: ${config.users.toLocaleString('en-US')} users, ${config.durationSeconds}s per load (+${config.warmupSeconds}s warm-up), `
    + `${config.connections} connections, ${config.rounds} rounds, database ${redact(config.databaseUrl)}`);
  console.log(machineLine());

  const servers: RunningServer[] = [];
  try {
    // 1. A fresh database, the service on it, one environment.
    await recreateDatabase(config.databaseUrl);
    const adminToken = randomBytes(24).toString('hex');
    const gatehouse = await startServer({
      name: 'gatehouse', script: 'src/main.ts',
      env: { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY },
    });
    servers.push(gatehouse);
    console.log(`gatehouse ready on ${gatehouse.url}`);

    const envRes = await http(`${gatehouse.url}/api/admin/v1/environments`, {
      method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name: 'users-bench', settings: USERS_ENVIRONMENT_SETTINGS },
    });
    const env = expectStatus<{ id: string; secretKey: string; frontendHost: string }>('create environment', envRes, 201);
    console.log(`environment ${env.id} (${env.frontendHost})`);

    // 2. Seed.
    console.log(`seeding ${config.users.toLocaleString('en-US')} users (one argon2id hash shared by all rows)`);
    const seeded = await seedUsers({
      databaseUrl: config.databaseUrl, environmentId: env.id, count: config.users, password: USERS_PASSWORD, onProgress: progress,
    });
    console.log(`  done in ${seeded.seconds.toFixed(1)} s (incl. VACUUM ANALYZE and CHECKPOINT)`);
    const { ids, emails } = seeded;
    const nextUser = rotation(ids.length);
    const nextId = () => ids[nextUser()];

    const server = { authorization: `Bearer ${env.secretKey}` };
    const client = { host: env.frontendHost };
    const runTag = Date.now().toString(36);
    let created = 0;
    let patches = 0;

    // 3. Probe every request once, so a broken setup fails loudly instead of benchmarking 4xx answers.
    const api = (path: string, options: { method?: string; body?: unknown } = {}, headers: Record<string, string> = server) =>
      http(gatehouse.url + path, { ...options, headers });
    expectStatus('GET user', await api(`/api/server/v1/users/${ids[0]}`), 200);
    expectStatus('PATCH metadata', await api(`/api/server/v1/users/${ids[0]}/metadata`,
      { method: 'PATCH', body: { publicMetadata: { probe: true } } }), 200);
    expectStatus('create user', await api('/api/server/v1/users',
      { method: 'POST', body: { email: `probe-${runTag}@bench.example.com`, password: USERS_PASSWORD } }), 201);
    expectStatus('sign-in', await api('/_svc/auth/sign-in?_is_native=true',
      { method: 'POST', body: { email: emails[0], password: USERS_PASSWORD } }, client), 200);

    const measure = async (target: RunningServer, spec: LoadSpec, label = spec.name) => {
      process.stdout.write(`measuring ${label} ... `);
      const result = await timedWithCpu(target.child.pid, config.databaseUrl, {
        ...spec, url: target.url, connections: config.connections, durationSeconds: config.durationSeconds, warmupSeconds: config.warmupSeconds,
      });
      process.stdout.write(`${loadLine(result)}\n`);
      return result;
    };
    const roundLabel = (name: string, round: number) => `${name}, round ${round + 1}/${config.rounds}`;

    // 4. GET user and its two ceilings in interleaved rounds; the baselines stay up (idle) during the other loads.
    //    The baseline sends the unnamed statement a bare server writes; the prepared one reads as GET user
    //    does, so the ratio to it is what the rest of the service costs.
    const baselines = await Promise.all(([['baseline', '0'], ['baseline-prepared', '1']] as const).map(([name, prepared]) => startServer({
      name, script: 'bench/baseline-server.ts', env: { DATABASE_URL: config.databaseUrl, BASELINE_ENVIRONMENT_ID: env.id, BASELINE_PREPARED: prepared },
    })));
    servers.push(...baselines);
    for (const b of baselines) expectStatus(`${b.name} GET`, await http(`${b.url}/users/${ids[0]}`), 200);
    const baselineSpec = (name: string): LoadSpec => ({ name, method: 'GET', next: () => ({ path: `/users/${nextId()}` }) });
    const loads = {
      get: { target: gatehouse, spec: getUserLoad(env.secretKey, ids) },
      baseline: { target: baselines[0], spec: baselineSpec('baseline: bare Fastify + pg, GET by id') },
      prepared: { target: baselines[1], spec: baselineSpec('baseline: bare Fastify + pg, GET by id, prepared statement') },
    };
    const reads = await interleaved(['get', 'baseline', 'prepared'] as const, config.rounds, (k, r) => measure(loads[k].target, loads[k].spec, roundLabel(loads[k].spec.name, r)));
    for (const b of baselines) await b.stop();

    // 5. Loads that are not compared: measured once.
    const patch = await measure(gatehouse, {
      name: 'PATCH user metadata', method: 'PATCH', headers: server,
      next: () => ({ path: `/api/server/v1/users/${nextId()}/metadata`, body: JSON.stringify({ publicMetadata: { bench: { n: ++patches } } }) }),
    });
    const createWith = await measure(gatehouse, {
      name: 'create user (with password)', method: 'POST', headers: server,
      next: () => ({ path: '/api/server/v1/users', body: JSON.stringify({ email: `new-${runTag}-${++created}@bench.example.com`, password: USERS_PASSWORD }) }),
    });
    const createWithout = await measure(gatehouse, {
      name: 'create user (no password)', method: 'POST', headers: server,
      next: () => ({ path: '/api/server/v1/users', body: JSON.stringify({ email: `new-${runTag}-${++created}@bench.example.com` }) }),
    });

    // 6. Sign-in and the raw hash rate (in this process, the servers idle) in interleaved rounds.
    const signInSpec = signInLoad(env.frontendHost, emails);
    const hashes: HashRateResult[] = [];
    const signIns: Latency[] = [];
    const measureHash = async (round: number) => {
      process.stdout.write(`measuring raw argon2id hash rate (${config.hashConcurrency} in flight, ${config.hashSeconds} s), round ${round + 1}/${config.rounds} ... `);
      const hash = await measureHashRate({ seconds: config.hashSeconds, concurrency: config.hashConcurrency });
      process.stdout.write(`${hash.hashesPerSecond.toFixed(0)} hashes/s, CPU ${hash.cpuMsPerHash.toFixed(2)} ms/hash\n`);
      return hash;
    };
    await interleaved(['hash', 'signIn'] as const, config.rounds, async (k, r) => {
      if (k === 'signIn') signIns.push(await measure(gatehouse, signInSpec, roundLabel(signInSpec.name, r)));
      else hashes.push(await measureHash(r));
    });

    // 7. Report: the compared loads' rows are the medians of their rounds; the ratios are taken per round.
    const rows: Row[] = [
      toRow(medianOfRounds(reads.get)), toRow(medianOfRounds(reads.baseline)), toRow(medianOfRounds(reads.prepared)), toRow(patch), toRow(createWith), toRow(createWithout),
      toRow(medianOfRounds(signIns)), hashRow(hashes),
    ];
    const comparisons = [
      { comparison: compare('GET user / baseline', reads.get.map(figures), reads.baseline.map(figures)), aim: AIMS.getUser },
      { comparison: compare('GET user / baseline with a prepared statement', reads.get.map(figures), reads.prepared.map(figures)), aim: AIMS.getUser },
      { comparison: compare('sign-in / raw hash rate', signIns.map(figures), hashes.map((h) => ({ rate: h.hashesPerSecond, cpuMs: h.cpuMsPerHash }))), aim: AIMS.signIn },
    ];
    const pgVersion = await serverVersion(config.databaseUrl);
    const file = await writeResults('users', {
      bench: 'users', startedAt: started.toISOString(), finishedAt: new Date().toISOString(),
      config: { ...config, databaseUrl: redact(config.databaseUrl) },
      machine: { ...machineInfo(), postgres: pgVersion },
      seeding: { users: ids.length, seconds: seeded.seconds },
      rounds: { get: reads.get, baseline: reads.baseline, prepared: reads.prepared, signIn: signIns, hash: hashes }, loads: [patch, createWith, createWithout],
      rows, comparisons,
    });

    console.log('');
    console.log(`## users bench, ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`);
    console.log('');
    console.log(`${ids.length.toLocaleString('en-US')} seeded users; ${config.durationSeconds} s per load after ${config.warmupSeconds} s warm-up; `
      + `${config.connections} connections; ${config.rounds} interleaved rounds of the compared loads (their rows: medians of the rounds); `
      + `${cpus().length} cores; Node ${process.version}; ${pgVersion}.`);
    console.log('');
    console.log(markdownTable(rows));
    console.log('');
    console.log(markdownComparisons(comparisons));
    for (const l of [...reads.get, ...reads.baseline, ...reads.prepared, patch, createWith, createWithout, ...signIns].filter((x) => x.non2xx + x.errors + x.timeouts > 0)) {
      console.log(`\nnote: ${l.name}: statuses ${JSON.stringify(l.statuses)}, socket errors ${l.errors}, timeouts ${l.timeouts}`);
    }
    console.log(`\nJSON: ${file}`);
    return comparisons.map(({ comparison, aim }) => entryFromComparison(comparison, aim));
  } catch (err) {
    for (const s of servers) console.error(`--- last output of ${s.name} ---\n${s.output()}`);
    throw err;
  } finally {
    for (const s of servers.reverse()) await s.stop();
  }
}

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ v: string }>("select current_setting('server_version') as v");
    return `PostgreSQL ${rows[0].v.split(' ')[0]}`;
  } finally {
    await client.end();
  }
}

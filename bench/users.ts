/**
 * `npm run bench -- users`: the users Server API, client sign-in and the machine's ceilings
 * (a bare Fastify + pg server, the raw argon2id rate), over real PostgreSQL with 100k seeded users.
 * See bench/README.md for the method.
 */
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import pg from 'pg';
import { cpuProbe } from './lib/cpu.js';
import { recreateDatabase, redact } from './lib/db.js';
import { measureHashRate, type HashRateResult } from './lib/hashrate.js';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus } from './lib/config.js';
import { http } from './lib/http.js';
import { runLoad, type LoadOptions, type LoadResult } from './lib/load.js';
import { machineInfo, machineLine, markdownRatios, markdownTable, writeResults, type Ratio, type Row } from './lib/report.js';
import { seedUsers } from './lib/seed.js';
import { startServer, type RunningServer } from './lib/server.js';

export const description = 'Users Server API (get, create, metadata PATCH), client sign-in, vs a bare Fastify+pg server and raw argon2id';

const PASSWORD = 'bench-Password-42!';


function readConfig() {
  const config = {
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench',
    durationSeconds: envNumber('BENCH_DURATION', 10),
    warmupSeconds: envNumber('BENCH_WARMUP', 2),
    connections: envNumber('BENCH_CONNECTIONS', 32),
    users: envNumber('BENCH_USERS', 100_000),
    hashSeconds: envNumber('BENCH_HASH_SECONDS', 5),
    hashConcurrency: envNumber('BENCH_HASH_CONCURRENCY', 4),
  };
  for (const [name, value] of [['BENCH_DURATION', config.durationSeconds], ['BENCH_CONNECTIONS', config.connections], ['BENCH_USERS', config.users],
    ['BENCH_HASH_SECONDS', config.hashSeconds], ['BENCH_HASH_CONCURRENCY', config.hashConcurrency]] as const) {
    if (value < 1 && !(name === 'BENCH_DURATION' && value > 0)) throw new Error(`${name} must be at least 1 (got ${value})`);
  }
  return config;
}

/** A shuffled endless walk over the seeded users, so consecutive requests hit unrelated rows. */
function rotation(count: number) {
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  let k = 0;
  return () => order[k++ % count];
}


function progress(done: number, total: number) {
  const step = Math.max(1, Math.floor(total / 10));
  if (done === total || Math.floor(done / step) !== Math.floor((done - 1) / step)) {
    process.stdout.write(`  seeded ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}\n`);
  }
}

export async function run(): Promise<void> {
  const config = readConfig();
  const started = new Date();
  console.log(`users bench: ${config.users.toLocaleString('en-US')} users, ${config.durationSeconds}s per load (+${config.warmupSeconds}s warm-up), `
    + `${config.connections} connections, database ${redact(config.databaseUrl)}`);
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
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}` },
      body: { name: 'users-bench', settings: { emailVerificationRequired: false, lockout: { ipMaxFailures: 1_000_000 } } },
    });
    const env = expectStatus<{ id: string; secretKey: string; frontendHost: string }>('create environment', envRes, 201);
    console.log(`environment ${env.id} (${env.frontendHost})`);

    // 2. Seed.
    console.log(`seeding ${config.users.toLocaleString('en-US')} users (one argon2id hash shared by all rows)`);
    const seeded = await seedUsers({
      databaseUrl: config.databaseUrl, environmentId: env.id, count: config.users, password: PASSWORD, onProgress: progress,
    });
    console.log(`  done in ${seeded.seconds.toFixed(1)} s (incl. VACUUM ANALYZE and CHECKPOINT)`);
    const { ids, emails } = seeded;
    const nextUser = rotation(ids.length);

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
      { method: 'POST', body: { email: `probe-${runTag}@bench.example.com`, password: PASSWORD } }), 201);
    expectStatus('sign-in', await api('/_svc/auth/sign-in?_is_native=true',
      { method: 'POST', body: { email: emails[0], password: PASSWORD } }, client), 200);

    const common = { connections: config.connections, durationSeconds: config.durationSeconds, warmupSeconds: config.warmupSeconds };
    const loads: Measured[] = [];
    const measure = async (target: RunningServer, options: Omit<LoadOptions, keyof typeof common | 'url' | 'beforeMeasure'>) => {
      process.stdout.write(`measuring ${options.name} ... `);
      const cpu = cpuProbe(target.child.pid, config.databaseUrl);
      const load = await runLoad({ ...common, ...options, url: target.url, beforeMeasure: () => cpu.start() });
      const used = await cpu.stop();
      const perRequest = (ms: number | null) => (ms === null || load.totalRequests === 0 ? null : ms / load.totalRequests);
      const result: Measured = { ...load, serverCpuMsPerRequest: perRequest(used.serverMs), postgresCpuMsPerRequest: perRequest(used.postgresMs) };
      process.stdout.write(`${Math.round(result.requestsPerSecond)} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, non-2xx ${result.non2xx}, `
        + `CPU/req ${fmtCpu(result.serverCpuMsPerRequest)} ms server + ${fmtCpu(result.postgresCpuMsPerRequest)} ms PostgreSQL\n`);
      loads.push(result);
      return result;
    };

    // 4. Loads. GET and its baseline run back to back so they see the same machine.
    const getUser = await measure(gatehouse, {
      name: 'GET user by id', method: 'GET', headers: server,
      next: () => ({ path: `/api/server/v1/users/${ids[nextUser()]}` }),
    });

    const baseline = await startServer({
      name: 'baseline', script: 'bench/baseline-server.ts',
      env: { DATABASE_URL: config.databaseUrl, BASELINE_ENVIRONMENT_ID: env.id },
    });
    servers.push(baseline);
    expectStatus('baseline GET', await http(`${baseline.url}/users/${ids[0]}`), 200);
    let baselineResult: Measured;
    try {
      baselineResult = await measure(baseline, {
        name: 'baseline: bare Fastify + pg, GET by id', method: 'GET',
        next: () => ({ path: `/users/${ids[nextUser()]}` }),
      });
    } finally {
      await baseline.stop();
    }

    await measure(gatehouse, {
      name: 'PATCH user metadata', method: 'PATCH', headers: server,
      next: () => ({
        path: `/api/server/v1/users/${ids[nextUser()]}/metadata`,
        body: JSON.stringify({ publicMetadata: { bench: { n: ++patches } } }),
      }),
    });
    await measure(gatehouse, {
      name: 'create user (with password)', method: 'POST', headers: server,
      next: () => ({ path: '/api/server/v1/users', body: JSON.stringify({ email: `new-${runTag}-${++created}@bench.example.com`, password: PASSWORD }) }),
    });
    await measure(gatehouse, {
      name: 'create user (no password)', method: 'POST', headers: server,
      next: () => ({ path: '/api/server/v1/users', body: JSON.stringify({ email: `new-${runTag}-${++created}@bench.example.com` }) }),
    });

    // 5. The hash ceiling, measured right before sign-in so both see the same machine.
    process.stdout.write(`measuring raw argon2id hash rate (${config.hashConcurrency} in flight, ${config.hashSeconds} s) ... `);
    const hash: HashRateResult = await measureHashRate({ seconds: config.hashSeconds, concurrency: config.hashConcurrency });
    process.stdout.write(`${hash.hashesPerSecond.toFixed(0)} hashes/s, CPU ${fmtCpu(hash.cpuMsPerHash)} ms/hash\n`);

    const signIn = await measure(gatehouse, {
      name: 'client sign-in (password)', method: 'POST', headers: client,
      next: () => ({ path: '/_svc/auth/sign-in?_is_native=true', body: JSON.stringify({ email: emails[nextUser()], password: PASSWORD }) }),
    });

    // 6. Report.
    const rows: Row[] = [
      ...loads.map((l) => ({
        name: l.name, rate: l.requestsPerSecond, p50Ms: l.p50Ms, p99Ms: l.p99Ms, non2xx: l.non2xx + l.errors + l.timeouts,
        serverCpuMs: l.serverCpuMsPerRequest, postgresCpuMs: l.postgresCpuMsPerRequest,
      })),
      {
        name: `raw argon2id hash, ${hash.concurrency} in flight (hashes/s)`, rate: hash.hashesPerSecond, p50Ms: hash.p50Ms, p99Ms: hash.p99Ms,
        non2xx: null, serverCpuMs: hash.cpuMsPerHash, postgresCpuMs: null,
      },
    ];
    const cpuOf = (m: Measured) =>
      m.serverCpuMsPerRequest === null ? null : m.serverCpuMsPerRequest + (m.postgresCpuMsPerRequest ?? 0);
    const cpuRatio = (cheap: number | null, costly: number | null) => (cheap === null || costly === null || costly === 0 ? null : cheap / costly);
    const ratios: Ratio[] = [
      {
        name: 'GET user / baseline', value: getUser.requestsPerSecond / baselineResult.requestsPerSecond, aim: 0.75,
        cpuValue: cpuRatio(cpuOf(baselineResult), cpuOf(getUser)),
      },
      {
        name: 'sign-in / raw hash rate', value: signIn.requestsPerSecond / hash.hashesPerSecond, aim: 0.85,
        cpuValue: cpuRatio(hash.cpuMsPerHash, cpuOf(signIn)),
      },
    ];
    const pgVersion = await serverVersion(config.databaseUrl);
    const file = await writeResults('users', {
      bench: 'users', startedAt: started.toISOString(), finishedAt: new Date().toISOString(),
      config: { ...config, databaseUrl: redact(config.databaseUrl) },
      machine: { ...machineInfo(), postgres: pgVersion },
      seeding: { users: ids.length, seconds: seeded.seconds },
      loads, hash, ratios,
    });

    console.log('');
    console.log(`## users bench, ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`);
    console.log('');
    console.log(`${ids.length.toLocaleString('en-US')} seeded users; ${config.durationSeconds} s per load after ${config.warmupSeconds} s warm-up; `
      + `${config.connections} connections; ${cpus().length} cores; Node ${process.version}; ${pgVersion}.`);
    console.log('');
    console.log(markdownTable(rows));
    console.log('');
    console.log(markdownRatios(ratios));
    const odd = loads.filter((l) => l.non2xx + l.errors + l.timeouts > 0);
    for (const l of odd) {
      console.log(`\nnote: ${l.name}: statuses ${JSON.stringify(l.statuses)}, socket errors ${l.errors}, timeouts ${l.timeouts}`);
    }
    console.log(`\nJSON: ${file}`);
  } catch (err) {
    for (const s of servers) console.error(`--- last output of ${s.name} ---\n${s.output()}`);
    throw err;
  } finally {
    for (const s of servers.reverse()) await s.stop();
  }
}

type Measured = LoadResult & {
  /** CPU of the server process (all threads) per completed request; null where /proc is not readable. */
  serverCpuMsPerRequest: number | null;
  /** CPU of the PostgreSQL backends serving the bench database per request; null when PostgreSQL is remote. */
  postgresCpuMsPerRequest: number | null;
};

const fmtCpu = (ms: number | null) => (ms === null ? '?' : ms.toFixed(2));

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

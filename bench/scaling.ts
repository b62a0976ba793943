/**
 * `npm run bench -- scaling` (issue 32): 1, 2 and 4 service processes on one PostgreSQL, through PgBouncer
 * in transaction mode, behind one port (Node's cluster as the load balancer). For GET user, sign-in,
 * session check and audit append: requests/s at each count, and where the time went (the service's
 * processes, PostgreSQL, PgBouncer, the load generator; lock waits), so the ceiling can be named.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus, loadConfig } from './lib/config.js';
import { cpuProbe, processCpuMs } from './lib/cpu.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import type { LoadSpec } from './lib/load.js';
import { minuteBudget } from './lib/minute-budget.js';
import { machineLine } from './lib/report.js';
import { median, orderOfRound, statsOf } from './lib/rounds.js';
import { seedUsers } from './lib/seed.js';
import { startCluster, startServer } from './lib/server.js';
import { entryFromStats, type SummaryEntry } from './lib/summary.js';
import { runTimedLoad, type TimedLoadResult } from './lib/timed-load.js';
import { startPgBouncer } from '../test/helpers/pgbouncer.js';
import { getUserLoad, signInLoad, USERS_ENVIRONMENT_SETTINGS, USERS_PASSWORD } from './lib/user-loads.js';

export const description = 'Throughput at 1, 2 and 4 service processes through PgBouncer (GET user, sign-in, session check, audit append), and where the ceiling is';

const ADMIN_TOKEN = randomBytes(24).toString('hex');
const AUDIT_ENVIRONMENTS = 200;
const AUDIT_LIMIT_PER_MINUTE = 600;
const LOADS = ['get user', 'sign-in', 'session check', 'audit append'] as const;
type LoadName = typeof LOADS[number];

function readConfig() {
  return {
    // Each process warms its own JIT on its share of the warm-up's requests: at 4 processes a 2 s warm-up
    // left them cold enough to spend half again the CPU per request.
    ...loadConfig({ durationSeconds: 8, warmupSeconds: 8, rounds: 3 }),
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench_scaling',
    users: Math.floor(envNumber('BENCH_USERS', 10_000, 100)),
    /** Ascending: every ratio is to the first count. */
    processes: [...new Set((process.env.BENCH_PROCESSES ?? '1,2,4').split(',').map(Number))].sort((a, b) => a - b),
    pgbouncer: process.env.BENCH_PGBOUNCER !== 'off',
    poolSize: Math.floor(envNumber('BENCH_PGBOUNCER_POOL', 20, 1)),
  };
}
type Config = ReturnType<typeof readConfig>;

interface Env { id: string; secretKey: string; frontendHost: string }

const admin = (url: string, body: unknown) =>
  http(`${url}/api/admin/v1/environments`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body })
    .then((res) => expectStatus<Env>('create environment', res, 201));

/** One live session per user, inserted with SQL (a sign-in per user would spend the run on argon2); answers their tokens. */
async function seedSessions(databaseUrl: string, environmentId: string, userIds: string[]) {
  const tokens = userIds.map(() => `sess_${randomBytes(32).toString('base64url')}`);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`insert into sessions (environment_id, id, user_id, token_hash, created_at, last_active_at, idle_timeout_seconds, expires_at)
      select $1, gen_random_uuid(), u, h, now(), now(), 604800, now() + interval '1 day' from unnest($2::uuid[], $3::bytea[]) as t(u, h)`,
    [environmentId, userIds, tokens.map((t) => createHash('sha256').update(t).digest())]);
    await client.query('vacuum analyze sessions');
  } finally {
    await client.end();
  }
  return tokens;
}

/** The environments and rows every count is measured on, made once through a single process on the direct URL. */
async function seed(config: Config) {
  const setup = await startServer({
    name: 'setup', script: 'src/main.ts',
    env: { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY },
  });
  try {
    const env = await admin(setup.url, { name: 'scaling', settings: { ...USERS_ENVIRONMENT_SETTINGS, session: { jwtLifetimeSeconds: 3600 } } });
    console.log(`seeding ${config.users.toLocaleString('en-US')} users, a session each, and ${AUDIT_ENVIRONMENTS} environments for audit appends`);
    const users = await seedUsers({ databaseUrl: config.databaseUrl, environmentId: env.id, count: config.users, password: USERS_PASSWORD });
    const sessions = await seedSessions(config.databaseUrl, env.id, users.ids);
    const jwts = await Promise.all(sessions.slice(0, 200).map(async (session) => expectStatus<{ token: string }>('mint', await http(`${setup.url}/_svc/sessions/current/token`,
      { method: 'POST', headers: { host: env.frontendHost, authorization: `Bearer ${session}` } }), 200).token));
    const auditEnvs: Env[] = [];
    for (let i = 0; i < AUDIT_ENVIRONMENTS; i++) auditEnvs.push(await admin(setup.url, { name: `scaling-audit-${i}` }));
    return { env, users, jwts, auditEnvs };
  } finally {
    await setup.stop();
  }
}
type Seeded = Awaited<ReturnType<typeof seed>>;

function loadSpecs({ env, users, jwts, auditEnvs }: Seeded, budget: ReturnType<typeof minuteBudget>): Record<LoadName, LoadSpec> {
  let verified = 0;
  let appended = 0;
  const runTag = Date.now().toString(36);
  return {
    'get user': getUserLoad(env.secretKey, users.ids),
    'sign-in': signInLoad(env.frontendHost, users.emails),
    'session check': {
      name: 'session check (POST /api/server/v1/sessions/verify)', method: 'POST', headers: { authorization: `Bearer ${env.secretKey}` },
      next: () => ({ path: '/api/server/v1/sessions/verify', body: JSON.stringify({ token: jwts[verified++ % jwts.length] }) }),
    },
    'audit append': {
      name: 'audit append', method: 'POST',
      next: () => {
        budget.count();
        const n = ++appended;
        const target = auditEnvs[n % auditEnvs.length]!;
        return {
          path: '/api/server/v1/audit-events', headers: { authorization: `Bearer ${target.secretKey}`, 'idempotency-key': `${runTag}-${n}` },
          body: JSON.stringify({
            action: 'document.shared', result: 'success', schemaVersion: 1, occurredAt: new Date().toISOString(), actor: { type: 'service', id: null },
            targets: [{ type: 'document', id: `doc_${n % 1000}` }], context: { ipAddress: '203.0.113.7', userAgent: 'bench/1.0' }, metadata: { n },
          }),
        };
      },
    },
  };
}

/** Busy and total jiffies of the whole machine, from /proc/stat. */
async function machineTicks() {
  const [, ...fields] = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).map(Number);
  const idle = fields[3]! + fields[4]!;
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** Backends of the bench database waiting on a lock (heavyweight or lightweight), sampled every 250 ms. */
function lockWaitSampler(directUrl: string) {
  const client = new pg.Client({ connectionString: directUrl });
  const samples: number[] = [];
  let timer: NodeJS.Timeout | undefined;
  return {
    async start() {
      await client.connect();
      timer = setInterval(() => {
        client.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type in ('Lock', 'LWLock')`)
          .then(({ rows }) => samples.push(rows[0]!.n), () => {});
      }, 250);
    },
    async stop() {
      clearInterval(timer);
      await client.end();
      return samples.length ? samples.reduce((a, b) => a + b, 0) / samples.length : 0;
    },
  };
}

interface Measured extends TimedLoadResult {
  /** Cores used during the measured load, by whom. */
  cores: { service: number; postgres: number; pgbouncer: number; bench: number; machine: number };
  lockWaiters: number;
}

async function measure(spec: LoadSpec, url: string, pids: number[], bouncerPid: number | undefined, config: Config, before?: () => Promise<void>): Promise<Measured> {
  const postgres = cpuProbe(undefined, config.databaseUrl);
  const locks = lockWaitSampler(config.databaseUrl);
  const sum = async (ids: number[]) => (await Promise.all(ids.map(processCpuMs))).reduce((a: number, ms) => a + (ms ?? 0), 0);
  let start: { service: number; bouncer: number; bench: NodeJS.CpuUsage; machine: { busy: number; total: number }; at: number } | undefined;
  const load = await runTimedLoad({
    ...spec, url, connections: config.connections, durationSeconds: config.durationSeconds, warmupSeconds: config.warmupSeconds,
    beforeMeasure: async () => {
      await before?.();
      await Promise.all([postgres.start(), locks.start()]);
      start = { service: await sum(pids), bouncer: bouncerPid ? await sum([bouncerPid]) : 0, bench: process.cpuUsage(), machine: await machineTicks(), at: performance.now() };
    },
  });
  const seconds = (performance.now() - start!.at) / 1000;
  const [pgUsed, lockWaiters, service, bouncer, machine] = await Promise.all([
    postgres.stop(), locks.stop(), sum(pids), bouncerPid ? sum([bouncerPid]) : Promise.resolve(0), machineTicks(),
  ]);
  const bench = process.cpuUsage(start!.bench);
  const cores = (ms: number) => ms / 1000 / seconds;
  return {
    ...load, lockWaiters,
    cores: {
      service: cores(service - start!.service), postgres: cores(pgUsed.postgresMs ?? 0), pgbouncer: cores(bouncer - start!.bouncer),
      bench: cores((bench.user + bench.system) / 1000), machine: ((machine.busy - start!.machine.busy) / (machine.total - start!.machine.total)) * cpus().length,
    },
  };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const f2 = (n: number) => n.toFixed(2);

function printTables(results: Record<number, Record<LoadName, Measured[]>>, config: Config) {
  const counts = config.processes;
  console.log(`\n| Load | ${counts.map((n) => `${n} process${n > 1 ? 'es' : ''} (req/s)`).join(' | ')} | ${counts.slice(1).map((n) => `${n} / ${counts[0]}`).join(' | ')} |`);
  console.log(`|---|${counts.map(() => '---:').join('|')}|${counts.slice(1).map(() => '---:').join('|')}|`);
  for (const load of LOADS) {
    const rate = (n: number) => median(results[n]![load].map((m) => m.requestsPerSecond));
    console.log(`| ${load} | ${counts.map((n) => fmt(rate(n))).join(' | ')} | ${counts.slice(1).map((n) => f2(rate(n) / rate(counts[0]!))).join(' | ')} |`);
  }
  console.log(`\nWhere the cores went (medians; the machine has ${cpus().length}), and the backends waiting on a lock (mean of samples):\n`);
  console.log('| Load | Processes | p99 ms | service | PostgreSQL | PgBouncer | load generator | machine busy | lock waiters | non-2xx |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const load of LOADS) {
    for (const n of counts) {
      const ms = results[n]![load];
      const m = (pick: (x: Measured) => number) => median(ms.map(pick));
      console.log(`| ${load} | ${n} | ${m((x) => x.p99Ms).toFixed(1)} | ${f2(m((x) => x.cores.service))} | ${f2(m((x) => x.cores.postgres))} | ${f2(m((x) => x.cores.pgbouncer))} `
        + `| ${f2(m((x) => x.cores.bench))} | ${f2(m((x) => x.cores.machine))} | ${m((x) => x.lockWaiters).toFixed(2)} | ${ms.reduce((a, x) => a + x.non2xx + x.errors + x.timeouts, 0)} |`);
    }
  }
}

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  console.log(`scaling bench: ${config.processes.join(', ')} processes, ${config.users.toLocaleString('en-US')} users, ${config.durationSeconds}s per load `
    + `(+${config.warmupSeconds}s warm-up), ${config.connections} connections, ${config.rounds} rounds, database ${redact(config.databaseUrl)}, `
    + `${config.pgbouncer ? `through PgBouncer (transaction mode, pool ${config.poolSize})` : 'direct'}`);
  console.log(`${machineLine()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await recreateDatabase(config.databaseUrl);
  const seeded = await seed(config);
  // The pooler gives each server connection the service's statement limits (connect_query), as docs/operations.md asks of an operator.
  const bouncer = config.pgbouncer ? await startPgBouncer(config.databaseUrl, { poolSize: config.poolSize }) : undefined;
  const pooledUrl = bouncer?.pooled(config.databaseUrl);
  const budget = minuteBudget(AUDIT_ENVIRONMENTS * AUDIT_LIMIT_PER_MINUTE, 8_000);
  const specs = loadSpecs(seeded, budget);
  const results = Object.fromEntries(config.processes.map((n) => [n, Object.fromEntries(LOADS.map((l) => [l, [] as Measured[]]))])) as Record<number, Record<LoadName, Measured[]>>;
  try {
    for (let round = 0; round < config.rounds; round++) {
      for (const n of orderOfRound(config.processes, round)) {
        const cluster = await startCluster(n, {
          DATABASE_URL: pooledUrl ?? config.databaseUrl, DATABASE_DIRECT_URL: config.databaseUrl,
          GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY,
        });
        try {
          for (const load of LOADS) {
            const before = load === 'audit append' ? () => budget.ensure(config.durationSeconds) : undefined;
            const m = await measure(specs[load], cluster.url, cluster.pids, bouncer?.pid, config, before);
            results[n]![load].push(m);
            console.log(`  round ${round + 1}, ${n} process(es), ${load}: ${fmt(m.requestsPerSecond)} req/s, p99 ${m.p99Ms.toFixed(1)} ms; cores: service ${f2(m.cores.service)}, `
              + `PostgreSQL ${f2(m.cores.postgres)}, PgBouncer ${f2(m.cores.pgbouncer)}, load ${f2(m.cores.bench)}, machine ${f2(m.cores.machine)}; lock waiters ${m.lockWaiters.toFixed(2)}`
              + (m.non2xx + m.errors + m.timeouts ? `; NON-2xx/errors ${m.non2xx + m.errors + m.timeouts} ${JSON.stringify(m.statuses)}` : ''));
          }
        } finally {
          await cluster.stop();
        }
      }
    }
    printTables(results, config);
    const [fewest, ...more] = config.processes;
    const oversubscribed = (n: number) => (n > cpus().length ? `${n} processes on ${cpus().length} cores` : undefined);
    return more.flatMap((n) => LOADS.map((load) => entryFromStats(`${load}: requests/s at ${n} processes / at ${fewest}`,
      statsOf(results[n]![load].map((m, r) => m.requestsPerSecond / results[fewest!]![load][r]!.requestsPerSecond)), 'ratio', { op: '>=', value: 1 }, oversubscribed(n))));
  } finally {
    await bouncer?.stop();
  }
}

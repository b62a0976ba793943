/**
 * `npm run bench -- users-list`: GET /users and POST /users/search over 1,000,000 users in one environment
 * (plus 200,000 in another) on real PostgreSQL. For every filter the API offers, alone and combined, the
 * latency of page 1 and of a page deep in the cursor walk, through the real server on one connection,
 * and the exact statement the store sends under EXPLAIN (ANALYZE, BUFFERS). See bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { medianOfRounds, timedWithCpu, type Latency } from './lib/latency.js';
import { machineInfo, machineLine, writeResults } from './lib/report.js';
import { fmtSpread, interleaved, roundsFromEnv, statsOf, type Stats } from './lib/rounds.js';
import { seedUserList } from './lib/seed-user-list.js';
import { startServer, type RunningServer } from './lib/server.js';
import { entryFromStats, type SummaryEntry } from './lib/summary.js';
import { countMatches, explainList, planCensus, type Census, type ListPlan } from './lib/user-list-plans.js';
import { requestOf, userListScenarios, type Samples, type UserListScenario } from './lib/user-list-scenarios.js';

export const description = 'Users list and search over 1M users: every filter, page 1 vs a deep cursor page, p95 against 20 ms, with EXPLAIN plans';

const AIM_MS = 20;
/** Deep pages no slower than page 1: the deep page's p95 at most 10% over page 1's. */
const DEEP_PAGE_AIM = { op: '<=', value: 1.1 } as const;

function readConfig() {
  const config = {
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench',
    durationSeconds: envNumber('BENCH_DURATION', 5, 1),
    warmupSeconds: envNumber('BENCH_WARMUP', 1),
    users: Math.floor(envNumber('BENCH_USERS', 1_000_000, 10_000)),
    noiseUsers: Math.floor(envNumber('BENCH_NOISE_USERS', 200_000)),
    pageSize: Math.floor(envNumber('BENCH_PAGE_SIZE', 100, 1)),
    /** The deep page starts after the user at this fraction of the environment. */
    deepFraction: 0.9,
    censusSize: Math.floor(envNumber('BENCH_PLAN_CENSUS', 50)),
    rounds: roundsFromEnv(),
    /** SQL run after seeding, before VACUUM ANALYZE: try an index or a statistics target without a migration. */
    setupSql: process.env.BENCH_SETUP_SQL || '',
    /** Comma-separated scenario keys to measure (all when empty). */
    only: (process.env.BENCH_ONLY || '').split(',').map((s) => s.trim()).filter(Boolean),
  };
  if (config.pageSize > 100) throw new Error('BENCH_PAGE_SIZE must be at most 100 (the API limit)');
  return config;
}

type Config = ReturnType<typeof readConfig>;

interface Result {
  scenario: UserListScenario;
  matches: number;
  deepMatches: number;
  /** Medians of the rounds. */
  first: Latency;
  deep: Latency;
  /** Deep page's p95 over page 1's, per round. */
  deepRatio: Stats;
  rounds: Record<'first' | 'deep', Latency[]>;
  plans: { first: ListPlan; deep: ListPlan };
  census: Census | null;
}

const fmtMs = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtCpu = (n: number | null) => (n === null ? '–' : n.toFixed(2));

/** Real users' emails and customer ids, and those the planner's statistics sample holds (the values that fooled it before). */
async function takeSamples(pool: pg.Pool, environmentId: string): Promise<Samples> {
  const some = await pool.query<{ email: string; customer: string }>(`
    select email, private_metadata->>'stripeCustomerId' as customer from users tablesample bernoulli (0.1) repeatable (42)
    where environment_id = $1 and status <> 'deleted' limit 200`, [environmentId]);
  const sampledEmails = await pool.query<{ email: string }>(`
    select u.email from pg_stats s cross join unnest(s.histogram_bounds::text::text[]) as h(email)
    join users u on u.environment_id = $1 and u.email = h.email
    where s.tablename = 'users' and s.attname = 'email' limit 200`, [environmentId]);
  const sampledCustomers = await pool.query<{ customer: string }>(`
    select h.doc->>'stripeCustomerId' as customer from pg_stats s cross join unnest(s.histogram_bounds::text::jsonb[]) as h(doc)
    join users u on u.environment_id = $1 and u.private_metadata @> jsonb_build_object('stripeCustomerId', h.doc->'stripeCustomerId')
    where s.tablename = 'users' and s.attname = 'private_metadata' limit 200`, [environmentId]);
  const samples = {
    emails: some.rows.map((r) => r.email), customerIds: some.rows.map((r) => r.customer),
    sampledEmails: sampledEmails.rows.map((r) => r.email), sampledCustomerIds: sampledCustomers.rows.map((r) => r.customer),
  };
  for (const [name, values] of Object.entries(samples)) if (values.length === 0) throw new Error(`no ${name} to search for`);
  return samples;
}

async function setUp(config: Config, pool: pg.Pool) {
  const adminToken = randomBytes(24).toString('hex');
  const serverEnv = { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY };
  await recreateDatabase(config.databaseUrl);
  // The server runs the migrations and creates the environments, then stops so the seeding has the CPU.
  let gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts', env: serverEnv });
  const createEnv = async (name: string) => expectStatus<{ id: string; secretKey: string }>(`create environment ${name}`,
    await http(`${gatehouse.url}/api/admin/v1/environments`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name } }), 201);
  const target = await createEnv('users-list-bench');
  const noise = await createEnv('users-list-noise');
  await gatehouse.stop();

  console.log(`seeding ${fmtInt(config.users)} + ${fmtInt(config.noiseUsers)} users (INSERT … SELECT FROM generate_series, secondary indexes rebuilt after)`);
  const seeded = await seedUserList({
    databaseUrl: config.databaseUrl, targetEnvironmentId: target.id, noiseEnvironmentId: noise.id, count: config.users,
    noiseCount: config.noiseUsers, setupSql: config.setupSql,
    onProgress: (done, total) => { if (done === total || done % 400_000 === 0) console.log(`  ${fmtInt(done)} / ${fmtInt(total)}`); },
  });
  console.log(`  done in ${seeded.seconds.toFixed(1)} s (insert ${seeded.insertSeconds.toFixed(1)}, indexes ${seeded.indexSeconds.toFixed(1)}, `
    + `VACUUM ANALYZE + CHECKPOINT ${seeded.vacuumSeconds.toFixed(1)}); table ${(seeded.tableBytes / 2 ** 20).toFixed(0)} MiB; indexes `
    + Object.entries(seeded.indexBytes).map(([n, b]) => `${n} ${(b / 2 ** 20).toFixed(0)} MiB`).join(', '));

  const disorder = await pool.query<{ n: string }>(`select count(*) as n from (select created_at < lag(created_at) over (order by id) as bad
    from users where environment_id = $1) q where bad`, [target.id]);
  if (Number(disorder.rows[0].n) !== 0) throw new Error('seeded ids are not in creation order');
  const deepAt = Math.floor(config.users * config.deepFraction);
  const cursor = (await pool.query<{ id: string }>('select id from users where environment_id = $1 order by id offset $2 limit 1', [target.id, deepAt - 1])).rows[0].id;
  gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts', env: serverEnv });
  return { gatehouse, target, seeded, deepAt, cursor, samples: await takeSamples(pool, target.id) };
}

async function measure(config: Config, pool: pg.Pool, gatehouse: RunningServer, target: { id: string; secretKey: string }, cursor: string, s: UserListScenario): Promise<Result> {
  const headers = { authorization: `Bearer ${target.secretKey}` };
  for (const c of [undefined, cursor]) {
    const { path, body } = requestOf(s, s.filter(0), config.pageSize, c);
    expectStatus(`${s.name}${c ? ', deep page' : ''}`, await http(gatehouse.url + path, { method: s.method, headers, body: body && JSON.parse(body) }), 200);
  }
  const load = (c: string | undefined) => {
    let i = 1;
    return timedWithCpu(gatehouse.child.pid, config.databaseUrl, {
      name: `${s.name}${c ? ' (deep)' : ''}`, url: gatehouse.url, method: s.method, headers, connections: 1,
      durationSeconds: config.durationSeconds, warmupSeconds: config.warmupSeconds,
      next: () => requestOf(s, s.filter(s.rotates ? i++ : 0), config.pageSize, c),
    });
  };
  process.stdout.write(`${s.name}: `);
  // Page 1 and the deep page in interleaved rounds; each round's deep/page-1 ratio compares the same moment of the machine.
  const rounds = await interleaved(['first', 'deep'] as const, config.rounds, (page) => load(page === 'deep' ? cursor : undefined));
  const [first, deep] = [medianOfRounds(rounds.first), medianOfRounds(rounds.deep)];
  const deepRatio = statsOf(rounds.deep.map((d, r) => d.p95Ms / rounds.first[r].p95Ms));
  const plans = { first: await explainList(pool, target.id, s.filter(0), config.pageSize), deep: await explainList(pool, target.id, s.filter(0), config.pageSize, cursor) };
  const census = s.rotates && config.censusSize > 0 ? await planCensus(pool, target.id, s.filter, config.censusSize, config.pageSize) : null;
  const [matches, deepMatches] = [await countMatches(pool, target.id, s.filter(0)), await countMatches(pool, target.id, s.filter(0), cursor)];
  console.log(`p95 ${fmtMs(first.p95Ms)} / deep ${fmtMs(deep.p95Ms)} ms (medians of ${config.rounds} rounds; deep/page 1 ${deepRatio.median.toFixed(2)}, ${fmtSpread(deepRatio)});`
    + ` ${plans.first.summary} (${fmtInt(plans.first.rowsExamined)} rows, ${fmtMs(plans.first.executionMs)} ms)`
    + `${first.non2xx + deep.non2xx ? `; NON-2xx ${first.non2xx + deep.non2xx}` : ''}`);
  return { scenario: s, matches, deepMatches, first, deep, deepRatio, rounds, plans, census };
}

/** Issue 13 item 7 asks it of every filter, so the summary gives the worst filter of each aim (the table above has them all). */
function summaryOf(results: Result[]): SummaryEntry[] {
  const worse = (r: Result) => (r.deep.p95Ms > r.first.p95Ms ? { page: 'deep page', rounds: r.rounds.deep } : { page: 'page 1', rounds: r.rounds.first });
  const slowest = results.reduce((a, b) => (Math.max(b.first.p95Ms, b.deep.p95Ms) > Math.max(a.first.p95Ms, a.deep.p95Ms) ? b : a));
  const steepest = results.reduce((a, b) => (b.deepRatio.median > a.deepRatio.median ? b : a));
  return [
    entryFromStats('slowest filter: p95 (page 1 or deep, 1 connection)', statsOf(worse(slowest).rounds.map((l) => l.p95Ms)), 'ms', { op: '<=', value: AIM_MS },
      `${slowest.scenario.name}, ${worse(slowest).page}`),
    entryFromStats('deep page / page 1: p95, the filter with the highest ratio', steepest.deepRatio, 'ratio', DEEP_PAGE_AIM, steepest.scenario.name),
  ];
}

function report(config: Config, results: Result[], deepAt: number, header: string) {
  const met = (ms: number) => (ms < AIM_MS ? 'met' : '**not met**');
  console.log(`\n## users-list bench, ${header}\n`);
  console.log(`| Filter | Request | Matches (after cursor) | Page 1 p50 / p95 / p99 ms | Deep page p50 / p95 / p99 ms | Deep / page 1 (p95, per round: median, spread) | CPU ms/req server + PostgreSQL (page 1) | p95 < ${AIM_MS} ms |`);
  console.log('|---|---|---:|---:|---:|---:|---:|---|');
  for (const r of results) {
    const { first: f, deep: d } = r;
    console.log(`| ${r.scenario.name} | ${r.scenario.request} | ${fmtInt(r.matches)} (${fmtInt(r.deepMatches)}) | ${fmtMs(f.p50Ms)} / ${fmtMs(f.p95Ms)} / ${fmtMs(f.p99Ms)} `
      + `| ${fmtMs(d.p50Ms)} / ${fmtMs(d.p95Ms)} / ${fmtMs(d.p99Ms)} | ${r.deepRatio.median.toFixed(2)} (${fmtSpread(r.deepRatio)}) | ${fmtCpu(f.serverCpuMsPerRequest)} + ${fmtCpu(f.postgresCpuMsPerRequest)} `
      + `| ${met(f.p95Ms)}${d.p95Ms >= AIM_MS ? `; deep ${met(d.p95Ms)}` : ''} |`);
  }
  console.log(`\nDeep page: \`cursor\` = the id of user ${fmtInt(deepAt)} of ${fmtInt(config.users)} (${config.deepFraction * 100}% of the id range). `
    + `Latencies: medians of ${config.rounds} interleaved rounds of page 1 and the deep page.`);
  console.log('\n### Plans (EXPLAIN (ANALYZE, BUFFERS), second run, representative value)\n');
  console.log('| Filter | Page | Plan | Rows examined | Buffers | Planning ms | Execution ms |');
  console.log('|---|---|---|---:|---:|---:|---:|');
  for (const r of results) {
    for (const [page, p] of [['1', r.plans.first], ['deep', r.plans.deep]] as const) {
      console.log(`| ${r.scenario.name} | ${page} | ${p.summary} | ${fmtInt(p.rowsExamined)} | ${fmtInt(p.sharedBuffers)} | ${fmtMs(p.planningMs)} | ${fmtMs(p.executionMs)} |`);
    }
  }
  const censused = results.filter((r) => r.census);
  if (censused.length) {
    console.log(`\n### Plan census (page 1, ${config.censusSize} rotated values each, EXPLAIN ANALYZE)\n`);
    console.log('| Filter | Plan | Values | p50 ms | p95 ms | Slowest ms | Most rows examined |');
    console.log('|---|---|---:|---:|---:|---:|---:|');
    for (const r of censused) {
      for (const e of r.census!.shapes) {
        console.log(`| ${r.scenario.name} | ${e.shape} | ${e.count} | ${fmtMs(e.p50Ms)} | ${fmtMs(e.p95Ms)} | ${fmtMs(e.slowest.ms)} | ${fmtInt(e.maxRowsExamined)} |`);
      }
    }
  }
  console.log('\n### Full plans\n');
  for (const r of results) {
    for (const [page, p] of [['page 1', r.plans.first], ['deep page', r.plans.deep]] as const) {
      console.log(`#### ${r.scenario.name}, ${page}: ${fmtMs(p.executionMs)} ms\n\n\`\`\`\n${p.sql}\n-- ${JSON.stringify(p.parameters)}\n${p.plan}\n\`\`\`\n`);
    }
  }
}

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  const started = new Date();
  console.log(`users-list bench: ${fmtInt(config.users)} users + ${fmtInt(config.noiseUsers)} in another environment, pages of ${config.pageSize}, `
    + `${config.durationSeconds} s per load (+${config.warmupSeconds} s warm-up) on 1 connection, database ${redact(config.databaseUrl)}`);
  console.log(`${machineLine()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 2 });
  let gatehouse: RunningServer | undefined;
  try {
    const setup = await setUp(config, pool);
    gatehouse = setup.gatehouse;
    const all = userListScenarios(setup.samples);
    const unknown = config.only.filter((k) => !all.some((s) => s.key === k));
    if (unknown.length) throw new Error(`unknown BENCH_ONLY keys: ${unknown.join(', ')} (known: ${all.map((s) => s.key).join(', ')})`);
    const results: Result[] = [];
    for (const s of all.filter((x) => config.only.length === 0 || config.only.includes(x.key))) {
      results.push(await measure(config, pool, gatehouse, setup.target, setup.cursor, s));
    }
    const loadAtEnd = loadavg();
    const pgVersion = (await pool.query<{ v: string }>("select current_setting('server_version') as v")).rows[0].v.split(' ')[0];
    const file = await writeResults('users-list', {
      bench: 'users-list', startedAt: started.toISOString(), finishedAt: new Date().toISOString(),
      config: { ...config, databaseUrl: redact(config.databaseUrl) }, machine: { ...machineInfo(), postgres: pgVersion, loadAtEnd },
      seeding: setup.seeded, deepAt: setup.deepAt, cursor: setup.cursor,
      results: results.map((r) => ({ ...r, scenario: { key: r.scenario.key, name: r.scenario.name, request: r.scenario.request } })),
    });
    report(config, results, setup.deepAt, `${started.toISOString().slice(0, 16).replace('T', ' ')} UTC; Node ${process.version}, PostgreSQL ${pgVersion}, `
      + `load average ${loadAtEnd[0].toFixed(2)} at the end`);
    console.log(`JSON: ${file}`);
    return summaryOf(results);
  } catch (err) {
    if (gatehouse) console.error(`--- last output of gatehouse ---\n${gatehouse.output()}`);
    throw err;
  } finally {
    await pool.end();
    await gatehouse?.stop();
  }
}

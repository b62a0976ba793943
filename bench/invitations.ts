/**
 * `npm run bench -- invitations`: invitation search at scale. 1,000,000 invitations in one environment
 * (plus noise in four others) on real PostgreSQL; search by metadata containment, email substring and
 * status, and page 1 against a page deep in the cursor walk. Latency aims are judged on one connection;
 * a second pass under BENCH_CONNECTIONS gives the throughput. Each measured statement is also run under
 * EXPLAIN (ANALYZE, BUFFERS). See bench/README.md for the method.
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import type { InvitationFilter } from '../src/invitations/schemas.js';
import { cpuProbe } from './lib/cpu.js';
import { recreateDatabase, redact } from './lib/db.js';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus } from './lib/config.js';
import { http } from './lib/http.js';
import { compileList, explain, planCensus, type Census, type Explained } from './lib/invitation-plans.js';
import type { LoadOptions } from './lib/load.js';
import { machineInfo, machineLine, writeResults } from './lib/report.js';
import { COMPANIES, PLANS, TEAMS, seedInvitations, type SeededInvitations } from './lib/seed-invitations.js';
import { startServer, type RunningServer } from './lib/server.js';
import { percentile, runTimedLoad, type TimedLoadResult } from './lib/timed-load.js';
import { medianOfRounds, type Latency } from './lib/latency.js';
import { fmtSpread, interleaved, roundsFromEnv, statsOf, type Stats } from './lib/rounds.js';
import { entryFromStats, type SummaryEntry } from './lib/summary.js';

export const description = 'Invitation search over 1M rows: metadata containment, email substring, status, page 1 vs a deep cursor page, with EXPLAIN plans';


function readConfig() {
  const indexes = process.env.BENCH_SEED_INDEXES || 'rebuild';
  if (indexes !== 'rebuild' && indexes !== 'live') throw new Error(`BENCH_SEED_INDEXES must be "rebuild" or "live" (got "${indexes}")`);
  const config = {
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench',
    durationSeconds: envNumber('BENCH_DURATION', 10),
    warmupSeconds: envNumber('BENCH_WARMUP', 2),
    /** The throughput pass; 0 skips it. The latency pass always uses one connection. */
    connections: envNumber('BENCH_CONNECTIONS', 32),
    invitations: Math.floor(envNumber('BENCH_INVITATIONS', 1_000_000)),
    noise: Math.floor(envNumber('BENCH_NOISE_INVITATIONS', 200_000)),
    noiseEnvironments: Math.floor(envNumber('BENCH_NOISE_ENVIRONMENTS', 4)),
    pageSize: 100,
    deepFraction: 0.9,
    seedIndexes: indexes as 'rebuild' | 'live',
    /** SQL run after seeding, before VACUUM ANALYZE (try an index or statistics target without a migration). */
    setupSql: process.env.BENCH_SETUP_SQL || '',
    /** Rotated values per scenario whose plans are censused after the loads. */
    censusSize: Math.floor(envNumber('BENCH_PLAN_CENSUS', 200)),
    rounds: roundsFromEnv(),
  };
  if (config.durationSeconds <= 0) throw new Error('BENCH_DURATION must be positive');
  if (config.invitations < 1000) throw new Error('BENCH_INVITATIONS must be at least 1000');
  if (config.noise > 0 && config.noiseEnvironments < 1) throw new Error('BENCH_NOISE_ENVIRONMENTS must be at least 1 when there is noise');
  return config;
}

type Group = 'containment' | 'substring' | 'status' | 'page 1' | 'deep page';

interface Scenario {
  key: string;
  group: Group;
  name: string;
  /** The request as documented (representative values). */
  request: string;
  method: 'GET' | 'POST';
  /** i = 0 is the representative filter, used for EXPLAIN and the match count; later ones rotate. */
  filter: (i: number) => InvitationFilter;
  /** The filter's values change from request to request (so the plan can too). */
  rotates: boolean;
  cursor?: string;
  /** p95 (one connection) must stay under this; null: judged otherwise (deep page) or not at all. */
  aimMs: number | null;
}

interface Measured {
  scenario: string;
  latency: Latency;
  throughput: TimedLoadResult | null;
  /** Page 1 and the deep page: every round; `latency` is their median, figure by figure. */
  rounds?: Measured['latency'][];
}

/** A page deep in the cursor walk is no slower than page 1: its p95 over page 1's, per round. */
const DEEP_PAGE_AIM = { op: '<=', value: 1.1 } as const;


const rand = (n: number) => Math.floor(Math.random() * n);


function progress(done: number, total: number) {
  process.stdout.write(`  seeded ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}\n`);
}

const fmtMs = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const fmtCpu = (n: number | null) => (n === null ? '–' : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  const started = new Date();
  const loadAtStart = loadavg();
  console.log(`invitations bench: ${fmtInt(config.invitations)} invitations + ${fmtInt(config.noise)} noise over ${config.noiseEnvironments} environments, `
    + `${config.durationSeconds}s per load (+${config.warmupSeconds}s warm-up), latency on 1 connection, throughput on ${config.connections || 'no'} connections, `
    + `database ${redact(config.databaseUrl)}`);
  console.log(`${machineLine()}, `
    + `load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`);

  const adminToken = randomBytes(24).toString('hex');
  const serverEnv = { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY };
  let gatehouse: RunningServer | undefined;
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 2 });
  try {
    // 1. A fresh database, the service on it (runs the migrations), the environments.
    await recreateDatabase(config.databaseUrl);
    gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts', env: serverEnv });
    console.log(`gatehouse ready on ${gatehouse.url}`);
    const createEnv = async (name: string) => expectStatus<{ id: string; secretKey: string }>(`create environment ${name}`,
      await http(`${gatehouse!.url}/api/admin/v1/environments`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name } }), 201);
    const target = await createEnv('invitations-bench');
    const noiseEnvs = [];
    for (let i = 0; i < (config.noise > 0 ? config.noiseEnvironments : 0); i++) noiseEnvs.push(await createEnv(`invitations-noise-${i + 1}`));
    console.log(`environment ${target.id}, ${noiseEnvs.length} noise environments`);
    // Seeding runs with the server stopped: it does not compete for the CPU, and the restart afterwards
    // re-arms the 10-minute maintenance timer, so the invitation sweep cannot run during the measurements.
    await gatehouse.stop();
    gatehouse = undefined;

    // 2. Seed with SQL.
    if (config.setupSql) console.log(`setup SQL after seeding: ${config.setupSql}`);
    console.log(`seeding ${fmtInt(config.invitations + config.noise)} invitations (INSERT … SELECT FROM generate_series, 100,000 rows a statement, 2 in parallel, indexes: ${config.seedIndexes})`);
    const seeded: SeededInvitations = await seedInvitations({
      databaseUrl: config.databaseUrl, targetEnvironmentId: target.id, noiseEnvironmentIds: noiseEnvs.map((e) => e.id),
      count: config.invitations, noiseCount: config.noise, indexes: config.seedIndexes, setupSql: config.setupSql, onProgress: progress,
    });
    console.log(`  done in ${seeded.seconds.toFixed(1)} s (insert ${seeded.insertSeconds.toFixed(1)} s, indexes ${seeded.indexSeconds.toFixed(1)} s, `
      + `VACUUM ANALYZE + CHECKPOINT ${seeded.vacuumSeconds.toFixed(1)} s); table ${(seeded.tableBytes / 2 ** 20).toFixed(0)} MiB, indexes `
      + Object.entries(seeded.indexBytes).map(([n, b]) => `${n} ${(b / 2 ** 20).toFixed(0)} MiB`).join(', '));

    // The data as the benches assume it: ids in creation order, statuses spread as designed.
    const check = await pool.query<{ disorder: string; total: string; accepted: string; expired: string; pending_overdue: string }>(`
      select (select count(*) from (select created_at < lag(created_at) over (order by id) as bad from invitations where environment_id = $1) q where bad) as disorder,
             count(*) as total,
             count(*) filter (where status = 'ACCEPTED') as accepted,
             count(*) filter (where status = 'EXPIRED' or (status = 'PENDING' and expires_at <= now())) as expired,
             count(*) filter (where status = 'PENDING' and expires_at <= now()) as pending_overdue
      from invitations where environment_id = $1`, [target.id]);
    const facts = check.rows[0];
    if (Number(facts.disorder) !== 0) throw new Error(`${facts.disorder} ids out of creation order`);
    if (Number(facts.total) !== config.invitations) throw new Error(`expected ${config.invitations} invitations, found ${facts.total}`);
    console.log(`  target environment: ${fmtInt(Number(facts.total))} rows, ids in creation order; ACCEPTED ${fmtInt(Number(facts.accepted))}, `
      + `effectively EXPIRED ${fmtInt(Number(facts.expired))} (of which stored PENDING past expiry ${fmtInt(Number(facts.pending_overdue))})`);

    gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts', env: serverEnv });
    console.log(`gatehouse restarted on ${gatehouse.url}`);
    const url = gatehouse.url;
    const auth = { authorization: `Bearer ${target.secretKey}` };

    // 3. The cursor walk: the plain list, 100 a page, to ~90% of the rows, once.
    const deepAt = Math.floor(config.invitations * config.deepFraction);
    process.stdout.write(`walking the cursor to row ${fmtInt(deepAt)} (${Math.ceil(deepAt / config.pageSize)} pages of ${config.pageSize}) ... `);
    const walkStarted = performance.now();
    const pageTimes: number[] = [];
    let cursor: string | undefined;
    let seen = 0;
    let previousLast = '';
    while (seen < deepAt) {
      const t = performance.now();
      const res = await http(`${url}/api/server/v1/invitations?limit=${config.pageSize}${cursor ? `&cursor=${cursor}` : ''}`, { headers: auth });
      pageTimes.push(performance.now() - t);
      const page = expectStatus<{ items: { id: string }[]; nextCursor: string | null }>('list page', res, 200);
      if (page.items.length !== config.pageSize || !page.nextCursor) throw new Error(`short page at row ${seen}`);
      if (page.items[0].id <= previousLast) throw new Error(`page at row ${seen} does not continue after the previous one`);
      previousLast = page.items[page.items.length - 1].id;
      seen += page.items.length;
      cursor = page.nextCursor;
    }
    const walkSeconds = (performance.now() - walkStarted) / 1000;
    const expectedCursor = await pool.query<{ id: string }>('select id from invitations where environment_id = $1 order by id offset $2 limit 1', [target.id, seen - 1]);
    if (expectedCursor.rows[0]?.id !== cursor) throw new Error(`the walk ended on ${cursor}, SQL says row ${seen} is ${expectedCursor.rows[0]?.id}`);
    const tenth = Math.max(1, Math.floor(pageTimes.length / 10));
    const firstPages = [...pageTimes.slice(0, tenth)].sort((a, b) => a - b);
    const lastPages = [...pageTimes.slice(-tenth)].sort((a, b) => a - b);
    const walk = {
      pages: pageTimes.length, rows: seen, seconds: walkSeconds, cursor: cursor!,
      firstTenthP50Ms: percentile(firstPages, 50), firstTenthP95Ms: percentile(firstPages, 95),
      lastTenthP50Ms: percentile(lastPages, 50), lastTenthP95Ms: percentile(lastPages, 95),
    };
    console.log(`${walkSeconds.toFixed(1)} s; first tenth of the pages p50 ${fmtMs(walk.firstTenthP50Ms)} / p95 ${fmtMs(walk.firstTenthP95Ms)} ms, `
      + `last tenth p50 ${fmtMs(walk.lastTenthP50Ms)} / p95 ${fmtMs(walk.lastTenthP95Ms)} ms`);

    // 4. The scenarios. Rotating values keep consecutive requests from hitting the same rows.
    const emailNumber = (i: number) => (i === 0 ? 12345 : config.invitations > 100_000 ? 10_000 + rand(90_000) : 1000 + rand(Math.min(9000, config.invitations - 1000)));
    const scenarios: Scenario[] = [
      {
        key: 'containment-team', rotates: true, group: 'containment', name: 'containment, selective: public team', aimMs: 20, method: 'POST',
        request: '`publicMetadata: {"team":"team-42"}` (team rotates over 2,000)',
        filter: (i) => ({ publicMetadata: { team: `team-${i === 0 ? 42 : rand(TEAMS)}` } }),
      },
      {
        key: 'containment-plan', rotates: true, group: 'containment', name: 'containment, broad: public plan', aimMs: 20, method: 'POST',
        request: '`publicMetadata: {"plan":"pro"}` (plan rotates over 5)',
        filter: (i) => ({ publicMetadata: { plan: i === 0 ? 'pro' : PLANS[rand(PLANS.length)] } }),
      },
      {
        key: 'containment-private', rotates: true, group: 'containment', name: 'containment, private CRM id', aimMs: 20, method: 'POST',
        request: '`privateMetadata: {"crm":{"id":"4242"}}` (id rotates over all)',
        filter: (i) => ({ privateMetadata: { crm: { id: String(i === 0 ? 4242 : rand(config.invitations)) } } }),
      },
      {
        key: 'substring-selective', rotates: true, group: 'substring', name: 'email substring, selective', aimMs: 50, method: 'POST',
        request: '`emailSearch: "user12345"` (rotates over 5-digit numbers)',
        filter: (i) => ({ emailSearch: `user${emailNumber(i)}` }),
      },
      {
        key: 'substring-broad', rotates: true, group: 'substring', name: 'email substring, broad: company', aimMs: 50, method: 'POST',
        request: '`emailSearch: "acme"` (rotates over 10 company names, each in 5 of the 50 domains)',
        filter: (i) => ({ emailSearch: i === 0 ? 'acme' : COMPANIES[rand(COMPANIES.length)] }),
      },
      {
        key: 'status-accepted', rotates: false, group: 'status', name: 'status ACCEPTED', aimMs: 20, method: 'POST',
        request: '`statuses: ["ACCEPTED"]`', filter: () => ({ statuses: ['ACCEPTED'] }),
      },
      {
        key: 'status-expired', rotates: false, group: 'status', name: 'status EXPIRED (effective)', aimMs: 20, method: 'POST',
        request: '`statuses: ["EXPIRED"]` (stored EXPIRED, or PENDING past expires_at)', filter: () => ({ statuses: ['EXPIRED'] }),
      },
      {
        key: 'page-1', rotates: false, group: 'page 1', name: 'plain list, page 1', aimMs: null, method: 'GET',
        request: '`GET /invitations?limit=100`', filter: () => ({}),
      },
      {
        key: 'page-deep', rotates: false, group: 'deep page', name: `plain list, page ${walk.pages + 1} (row ${fmtInt(seen + 1)})`, aimMs: null, method: 'GET',
        request: `\`GET /invitations?limit=100&cursor=<id of row ${fmtInt(seen)}>\``, filter: () => ({}), cursor: walk.cursor,
      },
    ];

    const requestOf = (s: Scenario, i: number) => {
      if (s.method === 'GET') return { path: `/api/server/v1/invitations?limit=${config.pageSize}${s.cursor ? `&cursor=${s.cursor}` : ''}` };
      return { path: `/api/server/v1/invitations/search?limit=${config.pageSize}`, body: JSON.stringify(s.filter(i)) };
    };

    // 5. Probe every scenario once: 200 and a full page, before any load.
    for (const s of scenarios) {
      const { path, body } = requestOf(s, 0);
      const res = await http(url + path, { method: s.method, headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.parse(body) : undefined });
      const page = expectStatus<{ items: unknown[] }>(s.name, res, 200);
      if (page.items.length === 0) throw new Error(`Probe "${s.name}" found nothing`);
    }

    // 6. Loads: per scenario, latency on one connection, then throughput on BENCH_CONNECTIONS. Page 1 and the
    // deep page are compared in interleaved rounds (bench/lib/rounds.ts): the p95 ratio is taken per round,
    // as one round each is within the noise of a shared machine.
    const measured: Measured[] = [];
    let deepRatio: Stats | undefined;
    const baseOf = (s: Scenario): Omit<LoadOptions, 'connections' | 'beforeMeasure'> => {
      let i = 1;
      return {
        name: s.name, url, method: s.method, headers: auth, durationSeconds: config.durationSeconds, warmupSeconds: config.warmupSeconds,
        next: () => requestOf(s, i++),
      };
    };
    const latencyPass = async (s: Scenario): Promise<Measured['latency']> => {
      const cpu = cpuProbe(gatehouse!.child.pid, config.databaseUrl);
      const lat = await runTimedLoad({ ...baseOf(s), connections: 1, beforeMeasure: () => cpu.start() });
      const used = await cpu.stop();
      const per = (ms: number | null) => (ms === null || lat.totalRequests === 0 ? null : ms / lat.totalRequests);
      return { ...lat, serverCpuMsPerRequest: per(used.serverMs), postgresCpuMsPerRequest: per(used.postgresMs) };
    };
    const throughputPass = (s: Scenario) => (config.connections > 0 ? runTimedLoad({ ...baseOf(s), connections: config.connections }) : Promise.resolve(null));
    const line = (latency: Measured['latency'], throughput: TimedLoadResult | null) => {
      const bad = latency.non2xx + latency.errors + latency.timeouts + (throughput ? throughput.non2xx + throughput.errors + throughput.timeouts : 0);
      return `1 conn: ${fmtInt(latency.requestsPerSecond)} req/s, p50 ${fmtMs(latency.p50Ms)}, p95 ${fmtMs(latency.p95Ms)}, p99 ${fmtMs(latency.p99Ms)} ms, `
        + `CPU/req ${fmtCpu(latency.serverCpuMsPerRequest)} + ${fmtCpu(latency.postgresCpuMsPerRequest)} ms`
        + (throughput ? `; ${config.connections} conn: ${fmtInt(throughput.requestsPerSecond)} req/s, p95 ${fmtMs(throughput.p95Ms)} ms` : '')
        + (bad ? `; NON-2xx/errors ${bad}` : '');
    };
    for (const s of scenarios) {
      if (s.group === 'deep page') continue; // measured with page 1
      if (s.group === 'page 1') {
        const deep = scenarios.find((x) => x.group === 'deep page')!;
        const pair: Record<string, Scenario> = { [s.key]: s, [deep.key]: deep };
        const rounds = await interleaved([s.key, deep.key], config.rounds, async (key, r) => {
          process.stdout.write(`measuring ${pair[key].name}, round ${r + 1}/${config.rounds} ... `);
          const lat = await latencyPass(pair[key]);
          process.stdout.write(`${line(lat, null)}\n`);
          return lat;
        });
        deepRatio = statsOf(rounds[deep.key].map((l, r) => l.p95Ms / rounds[s.key][r].p95Ms));
        for (const x of [s, deep]) {
          process.stdout.write(`measuring ${x.name}, throughput ... `);
          const throughput = await throughputPass(x);
          const latency = medianOfRounds(rounds[x.key]);
          process.stdout.write(`median of rounds: ${line(latency, throughput)}\n`);
          measured.push({ scenario: x.key, latency, throughput, rounds: rounds[x.key] });
        }
        continue;
      }
      process.stdout.write(`measuring ${s.name} ... `);
      const latency = await latencyPass(s);
      const throughput = await throughputPass(s);
      process.stdout.write(`${line(latency, throughput)}\n`);
      measured.push({ scenario: s.key, latency, throughput });
    }
    const loadAtEnd = loadavg();

    // 7. EXPLAIN (ANALYZE, BUFFERS) of the exact statement each request runs, with the representative values.
    const explained: Record<string, Explained> = {};
    for (const s of scenarios) {
      const now = new Date();
      const q = await compileList(target.id, s.filter(0), config.pageSize, s.cursor, now);
      const all = await compileList(target.id, s.filter(0), 1_000_000_000, s.cursor, now);
      explained[s.key] = await explain(pool, q, all);
    }

    // 7b. Plan census: the plans differ with the values, so EXPLAIN ANALYZE a sample of the rotated ones,
    // count the plan shapes and keep the slowest plan of each shape.
    const census: Record<string, Census> = {};
    for (const s of scenarios.filter((x) => x.rotates && config.censusSize > 0)) {
      process.stdout.write(`plan census: ${s.name} (${config.censusSize} rotated values) ... `);
      census[s.key] = await planCensus(pool, { environmentId: target.id, filter: s.filter, cursor: s.cursor, pageSize: config.pageSize, size: config.censusSize });
      console.log(census[s.key].shapes.map((e) => `${e.count} × ${e.shape} (p50 ${fmtMs(e.p50Ms)}, max ${fmtMs(e.slowest.ms)} ms)`).join('; '));
    }

    // 8. Aims and report.
    const byKey = (key: string) => measured.find((m) => m.scenario === key)!;
    const aims = scenarios.map((s) => {
      const m = byKey(s.key).latency;
      if (s.group === 'deep page') {
        const ratio = deepRatio!;
        return { scenario: s.key, aim: `p95 ≤ page 1's × ${DEEP_PAGE_AIM.value} (per round: median ${ratio.median.toFixed(2)}, ${fmtSpread(ratio)})`, met: ratio.median <= DEEP_PAGE_AIM.value };
      }
      if (s.aimMs === null) return { scenario: s.key, aim: '–', met: null };
      return { scenario: s.key, aim: `< ${s.aimMs} ms`, met: m.p95Ms < s.aimMs };
    });

    const pgVersion = (await pool.query<{ v: string }>("select current_setting('server_version') as v")).rows[0].v.split(' ')[0];
    const file = await writeResults('invitations', {
      bench: 'invitations', startedAt: started.toISOString(), finishedAt: new Date().toISOString(),
      config: { ...config, databaseUrl: redact(config.databaseUrl) },
      machine: { ...machineInfo(), postgres: `PostgreSQL ${pgVersion}`, loadAtStart, loadAtEnd },
      seeding: { ...seeded, target: facts },
      walk, deepPageRatio: deepRatio,
      scenarios: scenarios.map((s) => ({
        key: s.key, group: s.group, name: s.name, request: s.request,
        latency: byKey(s.key).latency, rounds: byKey(s.key).rounds ?? null, throughput: byKey(s.key).throughput, aim: aims.find((a) => a.scenario === s.key), explain: explained[s.key],
        census: census[s.key] ?? null,
      })),
    });

    const conn = config.connections;
    const lines = [
      `| Scenario | Request | Matches | 1 conn: req/s | p50 ms | p95 ms | p99 ms | CPU ms/req server | CPU ms/req PostgreSQL | ${conn ? `${conn} conn: req/s | p95 ms | ` : ''}Aim (p95, 1 conn) | |`,
      `|---|---|---:|---:|---:|---:|---:|---:|---:|${conn ? '---:|---:|' : ''}---|---|`,
      ...scenarios.map((s) => {
        const m = byKey(s.key);
        const a = aims.find((x) => x.scenario === s.key)!;
        const l = m.latency;
        const t = m.throughput;
        return `| ${s.name} | ${s.request} | ${fmtInt(explained[s.key].matches)} | ${fmtInt(l.requestsPerSecond)} | ${fmtMs(l.p50Ms)} | ${fmtMs(l.p95Ms)} | ${fmtMs(l.p99Ms)} `
          + `| ${fmtCpu(l.serverCpuMsPerRequest)} | ${fmtCpu(l.postgresCpuMsPerRequest)} | ${t ? `${fmtInt(t.requestsPerSecond)} | ${fmtMs(t.p95Ms)} | ` : ''}`
          + `${a.aim} | ${a.met === null ? '' : a.met ? 'met' : '**not met**'} |`;
      }),
    ];
    console.log('');
    console.log(`## invitations bench, ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`);
    console.log('');
    console.log(`${fmtInt(config.invitations)} invitations in the searched environment + ${fmtInt(config.noise)} in ${noiseEnvs.length} others; `
      + `${config.durationSeconds} s per load after ${config.warmupSeconds} s warm-up; pages of ${config.pageSize}; ${cpus().length} cores; Node ${process.version}; `
      + `PostgreSQL ${pgVersion}; load average ${loadAtStart[0].toFixed(2)} at start, ${loadAtEnd[0].toFixed(2)} at end.`);
    if (config.setupSql) console.log(`\nSetup SQL after seeding: \`${config.setupSql}\``);
    console.log('');
    console.log(lines.join('\n'));
    console.log('');
    console.log(`Cursor walk: ${walk.pages} pages in ${walk.seconds.toFixed(1)} s; first tenth p50 ${fmtMs(walk.firstTenthP50Ms)} / p95 ${fmtMs(walk.firstTenthP95Ms)} ms, `
      + `last tenth p50 ${fmtMs(walk.lastTenthP50Ms)} / p95 ${fmtMs(walk.lastTenthP95Ms)} ms.`);
    for (const m of measured.filter((x) => x.rounds)) {
      console.log(`${scenarios.find((x) => x.key === m.scenario)!.name}: p95 by round ${m.rounds!.map((r) => fmtMs(r.p95Ms)).join(', ')} ms (median in the table).`);
    }
    for (const m of measured) {
      for (const r of [m.latency, m.throughput]) {
        if (r && r.non2xx + r.errors + r.timeouts > 0) {
          console.log(`note: ${r.name} (${r.connections} conn): statuses ${JSON.stringify(r.statuses)}, socket errors ${r.errors}, timeouts ${r.timeouts}`);
        }
      }
    }
    if (Object.keys(census).length) {
      console.log('\n### Plan census (EXPLAIN ANALYZE over rotated values)\n');
      console.log('| Scenario | Plan | Values | p50 ms | p95 ms | Slowest ms |');
      console.log('|---|---|---:|---:|---:|---:|');
      for (const s of scenarios) {
        for (const e of census[s.key]?.shapes ?? []) {
          console.log(`| ${s.name} | ${e.shape} | ${e.count} / ${census[s.key].size} | ${fmtMs(e.p50Ms)} | ${fmtMs(e.p95Ms)} | ${fmtMs(e.slowest.ms)} |`);
        }
      }
    }
    console.log('\n### Plans (EXPLAIN (ANALYZE, BUFFERS), representative values)\n');
    for (const s of scenarios) {
      const e = explained[s.key];
      console.log(`#### ${s.name}: ${e.executionMs.toFixed(2)} ms\n`);
      console.log(`${e.summary}\n`);
      console.log('```');
      console.log(e.sql);
      console.log(`-- ${JSON.stringify(e.parameters)}`);
      console.log(e.plan);
      console.log('```\n');
    }
    for (const s of scenarios) {
      const shapes = census[s.key]?.shapes ?? [];
      if (shapes.length < 2) continue;
      // The rarer plan shapes: the slowest value of each, in full.
      for (const e of shapes.slice(1)) {
        console.log(`#### ${s.name}, other plan (${e.count} of ${census[s.key].size} values), slowest: ${e.slowest.ms.toFixed(2)} ms\n`);
        console.log('```');
        console.log(`-- filter ${JSON.stringify(e.slowest.filter)}`);
        console.log(e.slowest.plan);
        console.log('```\n');
      }
    }
    console.log(`JSON: ${file}`);
    return [
      ...scenarios.filter((s) => s.aimMs !== null).map((s): SummaryEntry => ({
        name: `${s.name}: p95, 1 connection`, value: byKey(s.key).latency.p95Ms, unit: 'ms', aim: { op: '<=', value: s.aimMs! }, spread: null,
      })),
      entryFromStats('deep page / page 1: p95', deepRatio!, 'ratio', DEEP_PAGE_AIM),
    ];
  } catch (err) {
    if (gatehouse) console.error(`--- last output of gatehouse ---\n${gatehouse.output()}`);
    throw err;
  } finally {
    await pool.end();
    await gatehouse?.stop();
  }
}

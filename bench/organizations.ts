/**
 * `npm run bench -- organizations`: organizations at scale (issue 9). 100,000 organizations in one
 * environment, one of them with 100,000 active members, on real PostgreSQL: the name-substring list
 * (selective to broad), the members list at page 1 and page 5,000, and create organization against
 * create user without password. Latency aims are judged on one connection; the rates on
 * BENCH_CONNECTIONS. Each list statement is also run under EXPLAIN (ANALYZE, BUFFERS). See bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { recreateDatabase, redact } from './lib/db.js';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus } from './lib/config.js';
import { http } from './lib/http.js';
import { medianOfRounds, timedWithCpu, type Latency } from './lib/latency.js';
import { compare, cpuOf, fmtSpread, interleaved, roundsFromEnv, statsOf } from './lib/rounds.js';
import { entryFromComparison, entryFromStats, type SummaryEntry } from './lib/summary.js';
import type { LoadOptions } from './lib/load.js';
import { explain, listCall, membersCall, planCensus, withUsersCursor, type Census, type Explained, type StoreCall } from './lib/organization-plans.js';
import { printReport, type Aim, type RateRow, type ScenarioResult } from './lib/organization-report.js';
import { machineInfo, machineLine, writeResults } from './lib/report.js';
import { ADJECTIVES, KINDS, NOUNS, seedOrganizations } from './lib/seed-organizations.js';
import { startServer, type RunningServer } from './lib/server.js';

export const description = 'Organizations at 100k: name-substring list, page 1 vs page 5,000 of a 100k-member organization, create organization vs create user, with EXPLAIN plans';


function readConfig() {
  const config = {
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench',
    durationSeconds: envNumber('BENCH_DURATION', 10),
    warmupSeconds: envNumber('BENCH_WARMUP', 2),
    /** The throughput pass of the lists and the create rates; the latency pass always uses one connection. */
    connections: Math.floor(envNumber('BENCH_CONNECTIONS', 32)),
    organizations: Math.floor(envNumber('BENCH_ORGANIZATIONS', 100_000)),
    members: Math.floor(envNumber('BENCH_MEMBERS', 100_000)),
    /** The server's default page size. */
    pageSize: 20,
    deepPage: Math.floor(envNumber('BENCH_MEMBERS_PAGE', 5000)),
    /** SQL run after seeding, before VACUUM ANALYZE is repeated (try an index without a migration). */
    setupSql: process.env.BENCH_SETUP_SQL || '',
    censusSize: Math.floor(envNumber('BENCH_PLAN_CENSUS', 100)),
    rounds: roundsFromEnv(),
  };
  if (config.durationSeconds <= 0) throw new Error('BENCH_DURATION must be positive');
  if (config.connections < 1) throw new Error('BENCH_CONNECTIONS must be at least 1 (the create rates need it)');
  if (config.organizations < 1000) throw new Error('BENCH_ORGANIZATIONS must be at least 1000');
  if (config.deepPage < 2 || config.members < config.deepPage * config.pageSize) {
    throw new Error(`BENCH_MEMBERS (${config.members}) must hold BENCH_MEMBERS_PAGE (${config.deepPage}, at least 2) pages of ${config.pageSize}`);
  }
  return config;
}

interface Scenario {
  key: string;
  name: string;
  /** The request as documented (representative value). */
  request: string;
  /** i = 0 is the representative request (EXPLAIN, match count); later ones rotate when `rotate` is set. */
  path: (i: number) => string;
  /** The store call behind request i, with the page's limit or unlimited (for the match count). */
  call: (i: number, limit: number) => StoreCall;
  /** The rotated value for the plan census; undefined: the statement does not change. */
  rotate?: (i: number) => string;
  censusCall?: (value: string) => StoreCall;
  aimMs: number;
  /** Judged against page 1 as well. */
  deep?: boolean;
  mayBeEmpty?: boolean;
}

/** Issue 9's aims: page 5,000 no slower than page 1 (p95 over page 1's, per round), create organization at 0.8x of create user. */
const DEEP_PAGE_AIM = { op: '<=', value: 1.1 } as const;
const CREATE_AIM = { op: '>=', value: 0.8 } as const;
const rand = (n: number) => Math.floor(Math.random() * n);
const pick = <T>(list: T[]) => list[rand(list.length)];
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');


export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  const started = new Date();
  const loadAtStart = loadavg();
  console.log(`organizations bench: ${fmtInt(config.organizations)} organizations, one with ${fmtInt(config.members)} members, `
    + `${config.durationSeconds}s per load (+${config.warmupSeconds}s warm-up), latency on 1 connection, rates on ${config.connections} connections, `
    + `database ${redact(config.databaseUrl)}`);
  console.log(`${machineLine()}, load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`);

  const adminToken = randomBytes(24).toString('hex');
  const serverEnv = { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY };
  let gatehouse: RunningServer | undefined;
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 2 });
  try {
    // 1. A fresh database, the service on it (migrations), the environment; the server is stopped for the
    // seeding (no CPU competition; the restart re-arms the maintenance timer).
    await recreateDatabase(config.databaseUrl);
    gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts', env: serverEnv });
    const env = expectStatus<{ id: string; secretKey: string }>('create environment', await http(`${gatehouse.url}/api/admin/v1/environments`,
      { method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name: 'organizations-bench', settings: { emailVerificationRequired: false } } }), 201);
    console.log(`environment ${env.id}`);
    await gatehouse.stop();
    gatehouse = undefined;

    // 2. Seed with SQL.
    console.log(`seeding ${fmtInt(config.organizations)} organizations, ${fmtInt(config.members)} users and their memberships of one organization `
      + '(INSERT … SELECT FROM generate_series)');
    const seeded = await seedOrganizations({
      databaseUrl: config.databaseUrl, environmentId: env.id, organizations: config.organizations, members: config.members,
      onProgress: (what, done, total) => console.log(`  ${what}: ${fmtInt(done)} / ${fmtInt(total)}`),
    });
    if (config.setupSql) {
      console.log(`setup SQL: ${config.setupSql}`);
      await pool.query(config.setupSql);
      for (const table of ['organizations', 'organization_memberships']) await pool.query(`VACUUM ANALYZE ${table}`);
    }
    console.log(`  done in ${seeded.seconds.toFixed(1)} s (insert ${seeded.insertSeconds.toFixed(1)} s, VACUUM ANALYZE + CHECKPOINT ${seeded.vacuumSeconds.toFixed(1)} s); `
      + Object.entries(seeded.sizes).map(([n, b]) => `${n} ${(b / 2 ** 20).toFixed(1)} MiB`).join(', '));
    const big = seeded.bigOrganizationId;

    // The data as the bench assumes it: user ids in creation order, every user an active member of the big organization.
    const facts = (await pool.query<{ disorder: string; users: string; members: string; organizations: string }>(`
      select (select count(*) from (select created_at < lag(created_at) over (order by id) as bad from users where environment_id = $1) q where bad) as disorder,
             (select count(*) from users where environment_id = $1 and status = 'active') as users,
             (select count(*) from organization_memberships where environment_id = $1 and organization_id = $2) as members,
             (select count(*) from organizations where environment_id = $1) as organizations`, [env.id, big])).rows[0];
    if (Number(facts.disorder) !== 0) throw new Error(`${facts.disorder} user ids out of creation order`);
    if (Number(facts.members) !== config.members || Number(facts.organizations) !== config.organizations) throw new Error(`unexpected counts: ${JSON.stringify(facts)}`);
    // The cursor of page N is the user id of row (N - 1) × page size, in the order the members list uses.
    const deepRow = (config.deepPage - 1) * config.pageSize;
    const deepCursor = (await pool.query<{ user_id: string }>(`select m.user_id from organization_memberships m join users u on u.environment_id = m.environment_id and u.id = m.user_id
      where m.environment_id = $1 and m.organization_id = $2 and u.status = 'active' order by m.user_id offset $3 limit 1`, [env.id, big, deepRow - 1])).rows[0].user_id;
    const firstOfDeep = (await pool.query<{ user_id: string }>(`select user_id from organization_memberships where environment_id = $1 and organization_id = $2
      order by user_id offset $3 limit 1`, [env.id, big, deepRow])).rows[0].user_id;
    console.log(`  ${fmtInt(Number(facts.users))} active users, ids in creation order; cursor of members page ${fmtInt(config.deepPage)}: ${deepCursor} (row ${fmtInt(deepRow)})`);

    gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts', env: serverEnv });
    console.log(`gatehouse restarted on ${gatehouse.url}`);
    const url = gatehouse.url;
    const auth = { authorization: `Bearer ${env.secretKey}` };
    const server = gatehouse;

    // 3. The scenarios. Names are "<Adjective> <Noun> <Kind> <n>": a number is one organization, an adjective
    // and noun pair 1/400 of them, a kind 1/5; a word found in no name matches none.
    const digits = String(config.organizations - 1).length;
    const number = (i: number) => (i === 0 ? 12345 % config.organizations : 10 ** (digits - 1) + rand(config.organizations - 10 ** (digits - 1)));
    const nameScenario = (key: string, name: string, request: string, value: (i: number) => string, mayBeEmpty = false): Scenario => ({
      key, name, request, aimMs: 20, mayBeEmpty, rotate: value,
      path: (i) => `/api/server/v1/organizations?name=${encodeURIComponent(value(i))}&limit=${config.pageSize}`,
      call: (i, limit) => listCall(env.id, value(i), limit),
      censusCall: (v) => listCall(env.id, v, config.pageSize),
    });
    const membersPath = (cursor?: string) => `/api/server/v1/organizations/${big}/members?limit=${config.pageSize}${cursor ? `&cursor=${cursor}` : ''}`;
    const scenarios: Scenario[] = [
      nameScenario('name-selective', 'name, selective: a number', `\`name=${number(0)}\` (rotates over ${digits}-digit numbers)`, (i) => String(number(i))),
      nameScenario('name-pair', 'name, medium: two words', '`name=crimson falcon` (rotates over the 400 pairs)',
        (i) => (i === 0 ? 'crimson falcon' : `${pick(ADJECTIVES)} ${pick(NOUNS)}`.toLowerCase())),
      nameScenario('name-broad', 'name, broad: a kind', '`name=labs` (rotates over the 5 kinds)', (i) => (i === 0 ? 'labs' : pick(KINDS).toLowerCase())),
      nameScenario('name-absent', 'name, no match', '`name=zeppelin` (rotates: `zeppelin <n>`)', (i) => (i === 0 ? 'zeppelin' : `zeppelin ${rand(1_000_000)}`), true),
      {
        key: 'members-1', name: 'members, page 1', request: `\`GET /organizations/{id}/members?limit=${config.pageSize}\``, aimMs: 10,
        path: () => membersPath(), call: (_i, limit) => membersCall(env.id, big, limit),
      },
      {
        key: 'members-deep', name: `members, page ${fmtInt(config.deepPage)}`, deep: true, aimMs: 10,
        request: `the same with \`cursor=\` the user id of row ${fmtInt(deepRow)}`,
        path: () => membersPath(deepCursor), call: (_i, limit) => membersCall(env.id, big, limit, deepCursor),
      },
    ];

    // 4. Probe: 200, and a page (the deep page must start right after its cursor).
    for (const s of scenarios) {
      const page = expectStatus<{ items: { id?: string; userId?: string }[] }>(s.name, await http(url + s.path(0), { headers: auth }), 200);
      if (page.items.length === 0 && !s.mayBeEmpty) throw new Error(`Probe "${s.name}" found nothing`);
      if (s.deep && page.items[0].userId !== firstOfDeep) throw new Error(`page ${config.deepPage} starts at ${page.items[0].userId}, SQL says ${firstOfDeep}`);
    }

    // 5. Loads: latency on one connection, then throughput. Page 1 and the deep page run in interleaved rounds
    // (bench/lib/rounds.ts) and their p95 ratio is taken per round, as one round each is within the noise of a shared machine.
    const base = (s: Scenario, connections: number): Omit<LoadOptions, 'beforeMeasure'> => {
      let i = 1;
      return {
        name: s.name, url, method: 'GET', headers: auth, connections, durationSeconds: config.durationSeconds, warmupSeconds: config.warmupSeconds,
        next: () => ({ path: s.path(s.rotate ? i++ : 0) }),
      };
    };
    const pass = (s: Scenario, connections: number) => timedWithCpu(server.child.pid, config.databaseUrl, base(s, connections));
    const say = (what: string, l: Latency) => console.log(`  ${what}: ${fmtInt(l.requestsPerSecond)} req/s, p50 ${l.p50Ms.toFixed(2)}, p95 ${l.p95Ms.toFixed(2)} ms`
      + `${l.non2xx + l.errors + l.timeouts ? `, NON-2xx/errors ${l.non2xx + l.errors + l.timeouts}` : ''}`);
    const results: ScenarioResult[] = [];
    for (const s of scenarios.filter((x) => !x.key.startsWith('members'))) {
      console.log(`measuring ${s.name}`);
      const latency = await pass(s, 1);
      say('1 conn', latency);
      const throughput = await pass(s, config.connections);
      say(`${config.connections} conn`, throughput);
      results.push({ key: s.key, name: s.name, request: s.request, latency, throughput, rounds: null });
    }
    const pair = scenarios.filter((x) => x.key.startsWith('members'));
    const byPairKey = Object.fromEntries(pair.map((x) => [x.key, x]));
    const rounds = await interleaved(pair.map((x) => x.key), config.rounds, async (key, r) => {
      console.log(`measuring ${byPairKey[key].name}, round ${r + 1}/${config.rounds}`);
      const l = await pass(byPairKey[key], 1);
      say('1 conn', l);
      return l;
    });
    const deepRatio = statsOf(rounds['members-deep'].map((l, r) => l.p95Ms / rounds['members-1'][r].p95Ms));
    for (const s of pair) {
      console.log(`measuring ${s.name}, throughput`);
      const throughput = await pass(s, config.connections);
      say(`${config.connections} conn`, throughput);
      results.push({ key: s.key, name: s.name, request: s.request, latency: medianOfRounds(rounds[s.key]), throughput, rounds: rounds[s.key] });
    }

    // 6. EXPLAIN (ANALYZE, BUFFERS) of each statement with the representative value; a census of the plans of
    // rotated names. Before the create loads, so the tables are as seeded.
    const explained: Record<string, Explained> = {};
    for (const s of scenarios) explained[s.key] = await explain(pool, s.call(0, config.pageSize), s.call(0, 1_000_000_000));
    // Not what the store sends: the deep page with its cursor repeated on users.id, to show what the join order costs.
    const hinted = await explain(pool, membersCall(env.id, big, config.pageSize, deepCursor), membersCall(env.id, big, 1_000_000_000, deepCursor), withUsersCursor);
    const census: Record<string, Census> = {};
    for (const s of scenarios.filter((x) => x.rotate && x.censusCall && config.censusSize > 0)) {
      census[s.key] = await planCensus(pool, config.censusSize, s.rotate!, s.censusCall!);
      console.log(`plan census, ${s.name}: ${census[s.key].shapes.map((e) => `${e.count} × ${e.shape} (max ${e.slowest.ms.toFixed(2)} ms)`).join('; ')}`);
    }

    // 7. Create organization against create user without password, on the same connections, in interleaved
    // rounds; the rows are the medians of the rounds, the ratio is taken per round.
    const tag = Date.now().toString(36);
    let made = 0;
    const creates = {
      user: { name: 'create user (no password)', path: '/api/server/v1/users', body: () => ({ email: `new-${tag}-${++made}@bench.example.com` }) },
      organization: { name: 'create organization', path: '/api/server/v1/organizations', body: () => ({ name: `New Org ${tag} ${++made}` }) },
    };
    for (const c of Object.values(creates)) expectStatus(c.name, await http(url + c.path, { method: 'POST', headers: auth, body: c.body() }), 201);
    const rateRounds = await interleaved(['user', 'organization'] as const, config.rounds, async (k, r) => {
      const c = creates[k];
      console.log(`measuring ${c.name}, round ${r + 1}/${config.rounds}`);
      const l = await timedWithCpu(server.child.pid, config.databaseUrl, {
        name: c.name, url, method: 'POST', headers: auth, connections: config.connections, durationSeconds: config.durationSeconds,
        warmupSeconds: config.warmupSeconds, next: () => ({ path: c.path, body: JSON.stringify(c.body()) }),
      });
      say(`${config.connections} conn`, l);
      return l;
    });
    const loadAtEnd = loadavg();
    const rateOf = (k: keyof typeof creates): RateRow => {
      const l = medianOfRounds(rateRounds[k]);
      return {
        name: creates[k].name, requestsPerSecond: l.requestsPerSecond, p95Ms: l.p95Ms, byRound: rateRounds[k].map((r) => r.requestsPerSecond),
        serverCpuMsPerRequest: l.serverCpuMsPerRequest, postgresCpuMsPerRequest: l.postgresCpuMsPerRequest, failed: l.non2xx + l.errors + l.timeouts,
      };
    };
    const rates = { user: rateOf('user'), organization: rateOf('organization') };
    const figures = (l: Latency) => ({ rate: l.requestsPerSecond, cpuMs: cpuOf(l) });
    const createRatio = compare('create organization / create user (no password)', rateRounds.organization.map(figures), rateRounds.user.map(figures));

    // 8. Aims and report.
    const byKey = (key: string) => results.find((r) => r.key === key)!;
    const aims: Aim[] = scenarios.map((s) => {
      const p95 = byKey(s.key).latency.p95Ms;
      if (!s.deep) return { key: s.key, aim: `< ${s.aimMs} ms`, met: p95 < s.aimMs };
      return {
        key: s.key, aim: `< ${s.aimMs} ms and ≤ page 1's × ${DEEP_PAGE_AIM.value} (per round: median ${deepRatio.median.toFixed(2)}, ${fmtSpread(deepRatio)})`,
        met: p95 < s.aimMs && deepRatio.median <= DEEP_PAGE_AIM.value,
      };
    });

    const pgVersion = (await pool.query<{ v: string }>("select current_setting('server_version') as v")).rows[0].v.split(' ')[0];
    const file = await writeResults('organizations', {
      bench: 'organizations', startedAt: started.toISOString(), finishedAt: new Date().toISOString(),
      config: { ...config, databaseUrl: redact(config.databaseUrl) },
      machine: { ...machineInfo(), postgres: `PostgreSQL ${pgVersion}`, loadAtStart, loadAtEnd },
      seeding: { ...seeded, facts, deepCursor },
      scenarios: results.map((r) => ({ ...r, aim: aims.find((a) => a.key === r.key), explain: explained[r.key], census: census[r.key] ?? null })),
      membersDeepWithUsersCursor: hinted,
      rates: { ...rates, ratio: createRatio, aim: CREATE_AIM.value }, deepPageRatio: deepRatio,
    });
    printReport({
      started, config, pgVersion, loadAtStart, loadAtEnd, results, aims, explained, hinted, census, rates, ratio: createRatio, createAim: CREATE_AIM, file,
    });
    return [
      ...scenarios.map((s): SummaryEntry => ({ name: `${s.name}: p95, 1 connection`, value: byKey(s.key).latency.p95Ms, unit: 'ms', aim: { op: '<=', value: s.aimMs }, spread: null })),
      entryFromStats(`members page ${fmtInt(config.deepPage)} / page 1: p95`, deepRatio, 'ratio', DEEP_PAGE_AIM),
      entryFromComparison(createRatio, CREATE_AIM),
    ];
  } catch (err) {
    if (gatehouse) console.error(`--- last output of gatehouse ---\n${gatehouse.output()}`);
    throw err;
  } finally {
    await pool.end();
    await gatehouse?.stop();
  }
}

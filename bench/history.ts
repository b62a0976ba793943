/**
 * `npm run bench -- history` (issue 13, item 6): do GET user, sign-in and invitation search cost the same
 * once the database carries ten times more history (ended sessions, old audit events, spent rate-limit
 * windows, delivered mail, used codes, past invitations) than live rows? Two databases get the same live
 * data; one of them also gets the history. Two servers run side by side, and every request is measured
 * on both in interleaved rounds, so each round's cost ratio compares the same moment of the machine.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { loadLine, medianOfRounds, timedWithCpu, type Latency } from './lib/latency.js';
import type { LoadSpec } from './lib/load.js';
import { machineInfo, machineLine, markdownTable, writeResults, type Row } from './lib/report.js';
import { compare, cpuOf, fmtRatio, fmtSpread, interleaved, roundsFromEnv, type Comparison } from './lib/rounds.js';
import { seedHistory, seedLiveRows, settle, tableSizes } from './lib/seed-history.js';
import { seedInvitations, TEAMS } from './lib/seed-invitations.js';
import { seedUsers } from './lib/seed.js';
import { startServer, type RunningServer } from './lib/server.js';
import { entryFromComparison, type SummaryEntry } from './lib/summary.js';
import { getUserLoad, signInLoad, USERS_ENVIRONMENT_SETTINGS, USERS_PASSWORD } from './lib/user-loads.js';

export const description = 'GET user, sign-in and invitation search with and without 10x historical rows (two databases, interleaved rounds)';

/** "About the same": at most 10% dearer with the history. */
const COST_AIM = { op: '<=', value: 1.1 } as const;

const withDatabaseName = (url: string, suffix: string) => {
  const u = new URL(url);
  u.pathname = `${u.pathname}${suffix}`;
  return u.toString();
};

function readConfig() {
  const databaseUrl = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench';
  return {
    databaseUrl,
    historyDatabaseUrl: process.env.BENCH_HISTORY_DATABASE_URL || withDatabaseName(databaseUrl, '_history'),
    durationSeconds: envNumber('BENCH_DURATION', 6, 1),
    warmupSeconds: envNumber('BENCH_WARMUP', 2),
    connections: Math.floor(envNumber('BENCH_CONNECTIONS', 32, 1)),
    rounds: roundsFromEnv(),
    users: Math.floor(envNumber('BENCH_USERS', 100_000, 1000)),
    invitations: Math.floor(envNumber('BENCH_INVITATIONS', 100_000, 1000)),
    factor: envNumber('BENCH_HISTORY_FACTOR', 10, 1),
  };
}
type Config = ReturnType<typeof readConfig>;

type SideName = 'before' | 'after';
interface Side {
  name: SideName;
  url: string;
  server: RunningServer;
  env: { id: string; secretKey: string; frontendHost: string };
  ids: string[];
  emails: string[];
}

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const rand = (n: number) => Math.floor(Math.random() * n);

/** One database with the live data (and, for 'after', the history), its server, and its environment. */
async function prepare(name: SideName, url: string, config: Config): Promise<Side> {
  await recreateDatabase(url);
  const adminToken = randomBytes(24).toString('hex');
  const server = await startServer({
    name: `gatehouse-${name}`, script: 'src/main.ts',
    env: {
      DATABASE_URL: url, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY,
      // Housekeeping would sweep during one side's rounds and not the other's; the bench measures requests, not the sweep.
      GATEHOUSE_HOUSEKEEPING_INTERVAL_SECONDS: '86400',
    },
  });
  const env = expectStatus<Side['env']>('create environment', await http(`${server.url}/api/admin/v1/environments`, {
    method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name: `history-bench-${name}`, settings: USERS_ENVIRONMENT_SETTINGS },
  }), 201);
  const started = performance.now();
  const users = await seedUsers({ databaseUrl: url, environmentId: env.id, count: config.users, password: USERS_PASSWORD });
  await seedInvitations({ databaseUrl: url, targetEnvironmentId: env.id, noiseEnvironmentIds: [], count: config.invitations, noiseCount: 0 });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    const historyRows = Math.round(config.users * config.factor);
    const { firstFreeSequence } = await seedLiveRows(pool, env.id, config.users, historyRows);
    console.log(`  ${name}: live rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    if (name === 'after') {
      await seedHistory(pool, {
        environmentId: env.id, rows: historyRows, invitations: Math.round(config.invitations * config.factor), firstFreeSequence,
        onProgress: (table, seconds) => console.log(`  after: history in ${table} in ${seconds.toFixed(1)} s`),
      });
    }
  } finally {
    await pool.end();
  }
  return { name, url, server, env, ids: users.ids, emails: users.emails };
}

/** The searches of the invitations bench that read through the GIN, trigram and status indexes. */
function invitationSearch(name: string, side: Side, filter: () => Record<string, unknown>): LoadSpec {
  return {
    name, method: 'POST', headers: { authorization: `Bearer ${side.env.secretKey}` },
    next: () => ({ path: '/api/server/v1/invitations/search?limit=100', body: JSON.stringify(filter()) }),
  };
}

const KINDS = ['get', 'signIn', 'team', 'email', 'accepted'] as const;
type Kind = (typeof KINDS)[number];

function loadsOf(side: Side, config: Config): Record<Kind, LoadSpec> {
  // As the invitations bench: "user<n>" with 4 digits below 100,000 invitations, 5 above.
  const emailNumber = () => (config.invitations > 100_000 ? 10_000 + rand(90_000) : 1000 + rand(Math.min(9000, config.invitations - 1000)));
  return {
    get: getUserLoad(side.env.secretKey, side.ids),
    signIn: signInLoad(side.env.frontendHost, side.emails),
    team: invitationSearch('invitation search: containment, public team', side, () => ({ publicMetadata: { team: `team-${rand(TEAMS)}` } })),
    email: invitationSearch('invitation search: email substring, selective', side, () => ({ emailSearch: `user${emailNumber()}` })),
    accepted: invitationSearch('invitation search: status ACCEPTED', side, () => ({ statuses: ['ACCEPTED'] })),
  };
}

/** Every request once on both sides: 2xx, before any load. */
async function probe(sides: Side[], loads: Record<SideName, Record<Kind, LoadSpec>>) {
  for (const side of sides) {
    for (const kind of KINDS) {
      const spec = loads[side.name][kind];
      const { path, body, headers } = spec.next();
      const res = await http(side.server.url + path, { method: spec.method, headers: { ...spec.headers, ...headers }, body: body && JSON.parse(body) });
      expectStatus(`${spec.name} (${side.name})`, res, 200);
    }
  }
}

const toRow = (name: string, l: Latency): Row => ({
  name, rate: l.requestsPerSecond, p50Ms: l.p50Ms, p99Ms: l.p99Ms, non2xx: l.non2xx + l.errors + l.timeouts,
  serverCpuMs: l.serverCpuMsPerRequest, postgresCpuMs: l.postgresCpuMsPerRequest,
});

function printReport(config: Config, started: Date, sizes: Record<SideName, Awaited<ReturnType<typeof tableSizes>>>, rows: Row[], costs: Comparison[], file: string) {
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  const out = [
    '', `## history bench, ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`, '',
    `${fmtInt(config.users)} users and ${fmtInt(config.invitations)} invitations in both databases; the "after" one also holds ${config.factor}× history; `
      + `${config.durationSeconds} s per load after ${config.warmupSeconds} s warm-up; ${config.connections} connections; ${config.rounds} interleaved rounds `
      + `(rows: medians of the rounds); Node ${process.version}; load average ${loadavg()[0].toFixed(2)} at the end.`,
    '', '| Table | Rows before | Rows after | Size before | Size after |', '|---|---:|---:|---:|---:|',
    ...Object.keys(sizes.before).map((t) => `| ${t} | ${fmtInt(sizes.before[t].rows)} | ${fmtInt(sizes.after[t].rows)} | ${mib(sizes.before[t].bytes)} | ${mib(sizes.after[t].bytes)} |`),
    '', markdownTable(rows), '',
    '| Request | Rounds | Cost after / before, from requests/s: median | spread | from CPU/req: median | spread | Aim | |',
    '|---|---:|---:|---|---:|---|---|---|',
    ...costs.map((c) => `| ${c.name} | ${c.rate.values.length} | ${fmtRatio(c.rate.median)} | ${fmtSpread(c.rate)} | ${c.cpu ? fmtRatio(c.cpu.median) : '–'} `
      + `| ${c.cpu ? fmtSpread(c.cpu) : '–'} | ≤ ${fmtRatio(COST_AIM.value)} | ${c.rate.median <= COST_AIM.value ? 'met' : '**not met**'} |`),
    '', `JSON: ${file}`,
  ];
  console.log(out.join('\n'));
}

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  const started = new Date();
  console.log(`history bench: ${fmtInt(config.users)} users, ${fmtInt(config.invitations)} invitations, ${config.factor}× history; `
    + `${config.durationSeconds}s per load (+${config.warmupSeconds}s warm-up), ${config.connections} connections, ${config.rounds} rounds; `
    + `databases ${redact(config.databaseUrl)} (before) and ${redact(config.historyDatabaseUrl)} (after)`);
  console.log(`${machineLine()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const sides: Side[] = [];
  try {
    console.log('seeding both databases');
    sides.push(await prepare('before', config.databaseUrl, config));
    sides.push(await prepare('after', config.historyDatabaseUrl, config));
    const [before, after] = sides;
    const sizes = { before: {}, after: {} } as Record<SideName, Awaited<ReturnType<typeof tableSizes>>>;
    for (const side of sides) {
      const pool = new pg.Pool({ connectionString: side.url, max: 1 });
      try {
        await settle(pool);
        sizes[side.name] = await tableSizes(pool);
      } finally {
        await pool.end();
      }
    }
    console.log('VACUUM ANALYZE and CHECKPOINT done in both');

    const loads = { before: loadsOf(before, config), after: loadsOf(after, config) };
    await probe(sides, loads);
    const bySide = { before, after };
    const rounds = {} as Record<Kind, Record<SideName, Latency[]>>;
    for (const kind of KINDS) {
      rounds[kind] = await interleaved(['before', 'after'] as const, config.rounds, async (name, r) => {
        const side = bySide[name];
        process.stdout.write(`measuring ${loads[name][kind].name}, ${name}, round ${r + 1}/${config.rounds} ... `);
        const l = await timedWithCpu(side.server.child.pid, side.url, {
          ...loads[name][kind], url: side.server.url, connections: config.connections, durationSeconds: config.durationSeconds, warmupSeconds: config.warmupSeconds,
        });
        console.log(loadLine(l));
        return l;
      });
    }

    const figures = (l: Latency) => ({ rate: l.requestsPerSecond, cpuMs: cpuOf(l) });
    // compare(before, after): requests/s before over after, CPU after over before: both the cost the history adds.
    const costs = KINDS.map((kind) => compare(loads.before[kind].name, rounds[kind].before.map(figures), rounds[kind].after.map(figures)));
    const rows = KINDS.flatMap((kind) => (['before', 'after'] as const).map((name) => toRow(`${loads[name][kind].name}, ${name}`, medianOfRounds(rounds[kind][name]))));
    const file = await writeResults('history', {
      bench: 'history', startedAt: started.toISOString(), finishedAt: new Date().toISOString(),
      config: { ...config, databaseUrl: redact(config.databaseUrl), historyDatabaseUrl: redact(config.historyDatabaseUrl) },
      machine: { ...machineInfo(), loadAtEnd: loadavg() }, sizes, rounds, rows, costs,
    });
    printReport(config, started, sizes, rows, costs, file);
    return costs.map((c) => entryFromComparison({ ...c, name: `${c.name}: cost with ${config.factor}× history` }, COST_AIM));
  } catch (err) {
    for (const side of sides) console.error(`--- last output of ${side.server.name} ---\n${side.server.output()}`);
    throw err;
  } finally {
    for (const side of sides) await side.server.stop();
  }
}

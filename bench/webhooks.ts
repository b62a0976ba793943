/**
 * `npm run bench -- webhooks`: changes (users created through the Server API) to delivered receipts at a
 * real HTTP receiver on loopback, on real PostgreSQL: deliveries per second and the latency from the
 * change's answer to the receipt (p50, p99), with BENCH_ENDPOINTS endpoints (each event goes to each).
 * Then the cost of writing events: sign-ins and user creations with and without an endpoint that wants
 * them (the job worker off, so only the write is measured), as a ratio of throughput.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { uuidv7 } from 'uuidv7';
import { buildApp } from '../src/app.js';
import { systemClock } from '../src/platform/clock.js';
import { createSealer } from '../src/platform/crypto/encryption.js';
import { openDatabase, type Database } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import { BENCH_ENCRYPTION_KEY, envNumber } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { machineLine } from './lib/report.js';
import { median, statsOf } from './lib/rounds.js';
import { entryFromStats, type SummaryEntry } from './lib/summary.js';

export const description = 'Webhook deliveries per second from change to receipt (p50, p99 latency), and the cost of writing events to sign-ins and user creations';

const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
const PASSWORD = 'correct horse battery staple';

function readConfig() {
  return {
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench_webhooks',
    events: Math.floor(envNumber('BENCH_EVENTS', 2_000, 10)),
    endpoints: Math.floor(envNumber('BENCH_ENDPOINTS', 2, 1)),
    environments: Math.floor(envNumber('BENCH_ENVIRONMENTS', 8, 1)),
    concurrency: Math.floor(envNumber('BENCH_CONCURRENCY', 16, 1)),
    rounds: Math.floor(envNumber('BENCH_ROUNDS', 3, 1)),
    signIns: Math.floor(envNumber('BENCH_SIGN_INS', 200, 10)),
  };
}

/** The receiver: answers 204 at once and notes when each (event, endpoint) arrived. */
async function startReceiver() {
  const receipts = new Map<string, number>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const { data } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { id: string } };
      receipts.set(`${data.id} ${request.url}`, performance.now());
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, receipts, close: () => new Promise((r) => server.close(r)) };
}

async function appOn(database: Database, jobsInBackground: boolean) {
  return buildApp({
    db: database.db, notifications: database.notifications, clock: systemClock, publicPort: 3000, adminToken: ADMIN_TOKEN,
    logLevel: 'silent', encryptionKey: Buffer.from(BENCH_ENCRYPTION_KEY, 'base64'), jobsInBackground,
    webhooks: { sender: { privateTargets: 'allow' } }, jobs: { pollIntervalMs: 1000, batchSize: Math.floor(envNumber('BENCH_JOB_BATCH', 200, 1)) },
  });
}

type App = Awaited<ReturnType<typeof appOn>>;

async function environment(app: App) {
  const res = await app.inject({ method: 'POST', url: '/api/admin/v1/environments', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: `bench-${uuidv7()}` } });
  return res.json() as { id: string; secretKey: string; frontendHost: string };
}

async function addEndpoint(database: Database, environmentId: string, url: string, eventTypes: string[] | null = null) {
  const sealed = createSealer(Buffer.from(BENCH_ENCRYPTION_KEY, 'base64')).seal(Buffer.from(`whsec_${Buffer.alloc(24, 1).toString('base64')}`));
  await database.db.insertInto('webhook_endpoints').values({
    environment_id: environmentId, id: uuidv7(), url, description: null, event_types: eventTypes, enabled: true, disabled_reason: null,
    secret_sealed: sealed, previous_secret_sealed: null, previous_secret_expires_at: null, failing_since: null, created_at: new Date(), updated_at: new Date(),
  }).execute();
}

/** Runs `count` calls, `concurrency` at a time; answers what each answered with the moment it did. */
async function pool<T>(count: number, concurrency: number, call: (i: number) => Promise<T>): Promise<{ value: T; at: number }[]> {
  const results: { value: T; at: number }[] = new Array(count);
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const i = next++;
      results[i] = { value: await call(i), at: performance.now() };
    }
  }));
  return results;
}

const createUser = (app: App, env: { secretKey: string }, email: string, password?: string) =>
  app.inject({ method: 'POST', url: '/api/server/v1/users', headers: { authorization: `Bearer ${env.secretKey}` }, payload: { email, ...(password && { password }) } })
    .then((res) => { if (res.statusCode !== 201) throw new Error(`create user: ${res.statusCode} ${res.body}`); return (res.json() as { id: string }).id; });

/**
 * One round of deliveries: E changes spread over the environments (a change's audit event serializes the
 * changes of one environment until commit), each delivered to every endpoint of its environment; the
 * figures from change to receipt.
 */
async function deliveryRound(app: App, database: Database, receiver: Awaited<ReturnType<typeof startReceiver>>, config: ReturnType<typeof readConfig>, round: number) {
  const envs: { id: string; secretKey: string }[] = [];
  for (let n = 0; n < config.environments; n++) {
    const env = await environment(app);
    for (let e = 0; e < config.endpoints; e++) await addEndpoint(database, env.id, `${receiver.url}/r${round}e${e}`);
    envs.push(env);
  }
  const started = performance.now();
  const changes = await pool(config.events, config.concurrency, (i) => createUser(app, envs[i % envs.length]!, `r${round}-u${i}@example.com`));
  const madeMs = performance.now() - started;
  const expected = config.events * config.endpoints;
  const deadline = Date.now() + 300_000;
  const ours = () => [...receiver.receipts.keys()].filter((k) => k.includes(`/r${round}e`)).length;
  while (ours() < expected) {
    if (Date.now() > deadline) throw new Error(`only ${ours()} of ${expected} deliveries arrived within 5 minutes`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const latencies: number[] = [];
  let last = 0;
  for (const { value: userId, at } of changes) {
    for (let e = 0; e < config.endpoints; e++) {
      const receivedAt = receiver.receipts.get(`${userId} /r${round}e${e}`)!;
      latencies.push(receivedAt - at);
      last = Math.max(last, receivedAt);
    }
  }
  latencies.sort((a, b) => a - b);
  const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { perSecond: expected / ((last - started) / 1000), p50: p(0.5), p99: p(0.99), changesPerSecond: config.events / (madeMs / 1000), drainMs: last - started - madeMs };
}

/**
 * The queue's capacity alone: E changes made with no worker running (so every delivery waits), then a
 * worker started; deliveries per second from its start to the last receipt.
 */
async function drainRound(database: Database, receiver: Awaited<ReturnType<typeof startReceiver>>, config: ReturnType<typeof readConfig>, round: number) {
  const writing = await appOn(database, false);
  const envs: { id: string; secretKey: string }[] = [];
  for (let n = 0; n < config.environments; n++) {
    const env = await environment(writing);
    for (let e = 0; e < config.endpoints; e++) await addEndpoint(database, env.id, `${receiver.url}/d${round}e${e}`);
    envs.push(env);
  }
  await pool(config.events, config.concurrency, (i) => createUser(writing, envs[i % envs.length]!, `d${round}-u${i}@example.com`));
  await writing.close();
  const expected = config.events * config.endpoints;
  const ours = () => [...receiver.receipts.keys()].filter((k) => k.includes(`/d${round}e`)).length;
  const started = performance.now();
  const delivering = await appOn(database, true);
  await delivering.ready();
  while (ours() < expected) await new Promise((r) => setTimeout(r, 20));
  const perSecond = expected / ((performance.now() - started) / 1000);
  await delivering.close();
  return perSecond;
}

/** Throughput of a change with and without an endpoint that wants its event (no worker: the write alone). */
async function costRound(app: App, database: Database, kind: 'sign-in' | 'user', withEndpoint: boolean, config: ReturnType<typeof readConfig>) {
  const env = await environment(app);
  if (withEndpoint) await addEndpoint(database, env.id, 'http://127.0.0.1:9/never', kind === 'sign-in' ? ['session.created'] : ['user.created']);
  if (kind === 'user') {
    const started = performance.now();
    await pool(config.events, config.concurrency, (i) => createUser(app, env, `cost-${i}-${uuidv7()}@example.com`));
    return config.events / ((performance.now() - started) / 1000);
  }
  const email = `signer-${uuidv7()}@example.com`;
  await createUser(app, env, email, PASSWORD);
  const started = performance.now();
  await pool(config.signIns, 4, () => app.inject({
    method: 'POST', url: '/_svc/auth/sign-in?_is_native=true', headers: { host: env.frontendHost }, payload: { email, password: PASSWORD },
  }).then((res) => { if (res.statusCode !== 200) throw new Error(`sign-in: ${res.statusCode} ${res.body}`); }));
  return config.signIns / ((performance.now() - started) / 1000);
}

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  console.log(machineLine());
  console.log(`database ${redact(config.databaseUrl)}; ${config.events} changes in ${config.environments} environments x ${config.endpoints} endpoints each per round, ${config.rounds} rounds`);
  await recreateDatabase(config.databaseUrl);
  const database = await openDatabase({ url: config.databaseUrl, poolSize: 20 });
  await migrate(database.db);
  const receiver = await startReceiver();
  try {
    const delivering = await appOn(database, true);
    await delivering.ready();
    const rounds = [];
    for (let r = 0; r < config.rounds; r++) {
      const figures = await deliveryRound(delivering, database, receiver, config, r);
      console.log(`  round ${r + 1}: ${figures.perSecond.toFixed(0)} deliveries/s, p50 ${figures.p50.toFixed(0)} ms, p99 ${figures.p99.toFixed(0)} ms `
        + `(changes made at ${figures.changesPerSecond.toFixed(0)}/s; the last delivery ${figures.drainMs.toFixed(0)} ms after the last change)`);
      rounds.push(figures);
    }
    await delivering.close();

    const drained: number[] = [];
    for (let r = 0; r < config.rounds; r++) {
      drained.push(await drainRound(database, receiver, config, r));
      console.log(`  drain round ${r + 1}: ${drained.at(-1)!.toFixed(0)} deliveries/s from a queue of ${config.events * config.endpoints}`);
    }

    const writing = await appOn(database, false);
    const ratios: Record<'sign-in' | 'user', number[]> = { 'sign-in': [], user: [] };
    for (let r = 0; r < config.rounds; r++) {
      for (const kind of ['sign-in', 'user'] as const) {
        // Alternating which goes first, so a warming cache favours neither.
        const measured: Record<string, number> = {};
        for (const withEndpoint of r % 2 ? [false, true] : [true, false]) measured[String(withEndpoint)] = await costRound(writing, database, kind, withEndpoint, config);
        const ratio = measured.true! / measured.false!;
        ratios[kind].push(ratio);
        console.log(`  cost round ${r + 1}, ${kind}: throughput with an endpoint / without = ${ratio.toFixed(3)}`);
      }
    }
    await writing.close();

    const perSecond = statsOf(rounds.map((f) => f.perSecond));
    const p99 = statsOf(rounds.map((f) => f.p99));
    console.log(`\n| figure | median | rounds |\n|---|---|---|`);
    console.log(`| deliveries/s | ${perSecond.median.toFixed(0)} | ${rounds.map((f) => f.perSecond.toFixed(0)).join(', ')} |`);
    console.log(`| deliveries/s draining a queued backlog | ${median(drained).toFixed(0)} | ${drained.map((x) => x.toFixed(0)).join(', ')} |`);
    console.log(`| p50 latency (ms) | ${median(rounds.map((f) => f.p50)).toFixed(0)} | ${rounds.map((f) => f.p50.toFixed(0)).join(', ')} |`);
    console.log(`| p99 latency (ms) | ${p99.median.toFixed(0)} | ${rounds.map((f) => f.p99.toFixed(0)).join(', ')} |`);
    console.log(`| sign-ins/s with an endpoint / without | ${median(ratios['sign-in']).toFixed(3)} | ${ratios['sign-in'].map((x) => x.toFixed(3)).join(', ')} |`);
    console.log(`| user creations/s with an endpoint / without | ${median(ratios.user).toFixed(3)} | ${ratios.user.map((x) => x.toFixed(3)).join(', ')} |`);
    return [
      entryFromStats('webhook deliveries per second', perSecond, '/s', { op: '>=', value: 1000 }),
      entryFromStats('webhook deliveries per second draining a backlog', statsOf(drained), '/s', { op: '>=', value: 1000 }),
      entryFromStats('webhook p99 change-to-receipt latency', p99, 'ms', { op: '<=', value: 1000 }),
      entryFromStats('sign-in throughput with an endpoint / without', statsOf(ratios['sign-in']), 'ratio', { op: '>=', value: 0.95 }),
    ];
  } finally {
    await receiver.close();
    await database.close();
  }
}

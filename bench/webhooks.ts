/**
 * `npm run bench -- webhooks`: changes (users created through the Server API) to delivered receipts at a
 * real HTTP receiver on loopback, on real PostgreSQL: deliveries per second and the latency from the
 * change's answer to the receipt (p50, p99), with BENCH_ENDPOINTS endpoints (each event goes to each).
 * Then the cost of writing events: sign-ins and user creations with and without an endpoint that wants
 * them (the job worker off, so only the write is measured), as a ratio of throughput.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { uuidv7 } from 'uuidv7';
import { buildApp } from '../src/app.js';
import { systemClock } from '../src/platform/clock.js';
import { createSealer } from '../src/platform/crypto/encryption.js';
import { openDatabase, type Database } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus } from './lib/config.js';
import { processCpuMs } from './lib/cpu.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { startLoad } from './lib/load.js';
import { machineLine } from './lib/report.js';
import { median, orderOfRound, statsOf } from './lib/rounds.js';
import { startServer } from './lib/server.js';
import { entryFromStats, type SummaryEntry } from './lib/summary.js';
import { getUserLoad, signInLoad, USERS_ENVIRONMENT_SETTINGS, USERS_PASSWORD } from './lib/user-loads.js';

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
    besideGets: Math.floor(envNumber('BENCH_BESIDE_GETS', 1_000, 0)),
    besideSignIns: Math.floor(envNumber('BENCH_BESIDE_SIGN_INS', 20, 0)),
  };
}

/** The receiver: answers 204 at once and notes when each (event, endpoint) arrived. */
async function startReceiver() {
  const receipts = new Map<string, number>();
  const server = createServer((request, response) => {
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

async function appOn(database: Database) {
  return buildApp({
    db: database.db, notifications: database.notifications, clock: systemClock, publicPort: 3000, adminToken: ADMIN_TOKEN,
    logLevel: 'silent', encryptionKey: Buffer.from(BENCH_ENCRYPTION_KEY, 'base64'), jobsInBackground: false,
  });
}

type App = Awaited<ReturnType<typeof appOn>>;
type Receiver = Awaited<ReturnType<typeof startReceiver>>;
type Config = ReturnType<typeof readConfig>;

/** Where the job worker runs: in the API process (the default, `on`), or in a process of its own (`off` + `only`). */
type Topology = 'one' | 'split';
const TOPOLOGIES: Record<Topology, string> = { one: 'one process (API + job worker)', split: 'API process + worker process' };

/** The service as `npm start` runs it, in one or two processes on the bench database. */
async function startService(config: Config, topology: Topology | 'api only') {
  const env = {
    DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN, GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY,
    LOG_LEVEL: 'warn', GATEHOUSE_WEBHOOK_PRIVATE_TARGETS: 'allow',
  };
  const api = await startServer({ name: 'api', script: 'src/main.ts', env: { ...env, GATEHOUSE_JOB_WORKER: topology === 'one' ? 'on' : 'off' } });
  const worker = topology === 'split' ? await startWorker(env) : undefined;
  const processes = worker ? [api, worker] : [api];
  return { url: api.url, processes, stop: () => Promise.all(processes.map((p) => p.stop())).then(() => undefined) };
}

const startWorker = (env: Record<string, string>) =>
  startServer({ name: 'worker', script: 'src/main.ts', env: { ...env, GATEHOUSE_JOB_WORKER: 'only' }, readyLine: /job worker running/ });

type Service = Awaited<ReturnType<typeof startService>>;

const admin = (url: string, path: string, body: unknown) =>
  http(`${url}/api/admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body });

async function environment(url: string, settings?: unknown) {
  const res = await admin(url, '/environments', { name: `bench-${uuidv7()}`, ...(settings !== undefined && { settings }) });
  return expectStatus<{ id: string; secretKey: string; frontendHost: string }>('create environment', res, 201);
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

/** Creates a user through the Server API over HTTP; answers its id. */
const createUser = (url: string, env: { secretKey: string }, email: string, password?: string) =>
  http(`${url}/api/server/v1/users`, { method: 'POST', headers: { authorization: `Bearer ${env.secretKey}` }, body: { email, ...(password && { password }) } })
    .then((res) => expectStatus<{ id: string }>('create user', res, 201).id);

/** The same, in process (the cost rounds measure the write, not HTTP). */
const createUserIn = (app: App, env: { secretKey: string }, email: string, password?: string) =>
  app.inject({ method: 'POST', url: '/api/server/v1/users', headers: { authorization: `Bearer ${env.secretKey}` }, payload: { email, ...(password && { password }) } })
    .then((res) => { if (res.statusCode !== 201) throw new Error(`create user: ${res.statusCode} ${res.body}`); return (res.json() as { id: string }).id; });

/** Environments with `endpoints` endpoints each, named after the round so its receipts can be told apart. */
async function environmentsWithEndpoints(url: string, database: Database, receiver: Receiver, config: Config, tag: string) {
  const envs: { id: string; secretKey: string }[] = [];
  for (let n = 0; n < config.environments; n++) {
    const env = await environment(url);
    for (let e = 0; e < config.endpoints; e++) await addEndpoint(database, env.id, `${receiver.url}/${tag}e${e}`);
    envs.push(env);
  }
  return envs;
}

async function allArrived(receiver: Receiver, tag: string, expected: number) {
  const deadline = Date.now() + 300_000;
  const ours = () => [...receiver.receipts.keys()].filter((k) => k.includes(`/${tag}e`)).length;
  while (ours() < expected) {
    if (Date.now() > deadline) throw new Error(`only ${ours()} of ${expected} deliveries arrived within 5 minutes`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The users bench's requests beside the deliveries, on the same API process: GET user and password
 * sign-ins over a seeded environment, each at a steady rate (0: as fast as they go).
 */
async function seedBeside(url: string) {
  const env = await environment(url, USERS_ENVIRONMENT_SETTINGS);
  const ids = (await pool(1_000, 16, (i) => createUser(url, env, `beside-${i}@example.com`))).map((r) => r.value);
  const emails = Array.from({ length: 20 }, (_, i) => `signer-${i}@example.com`);
  await pool(emails.length, 4, (i) => createUser(url, env, emails[i]!, USERS_PASSWORD));
  return { env, ids, emails };
}

type Beside = Awaited<ReturnType<typeof seedBeside>>;

function startBeside(url: string, beside: Beside, config: Config) {
  const loads = [
    { spec: getUserLoad(beside.env.secretKey, beside.ids), connections: 8, rate: config.besideGets },
    { spec: signInLoad(beside.env.frontendHost, beside.emails), connections: 4, rate: config.besideSignIns },
  ].map(({ spec, connections, rate }) => startLoad({ ...spec, url, connections, durationSeconds: 3600, overallRate: rate }));
  const started = performance.now();
  return async () => {
    loads.forEach(({ instance }) => instance.stop());
    const seconds = (performance.now() - started) / 1000;
    const [gets, signIns] = await Promise.all(loads.map(async ({ instance, statuses }) => {
      await instance;
      const answered = Object.values(statuses).reduce((sum, n) => sum + n, 0);
      const ok = Object.entries(statuses).filter(([status]) => status.startsWith('2')).reduce((sum, [, n]) => sum + n, 0);
      if (ok < answered * 0.99) throw new Error(`the load beside failed: ${JSON.stringify(statuses)}`);
      return ok / seconds;
    }));
    return { gets: gets!, signIns: signIns! };
  };
}

const cpuMsOf = async (service: Service) =>
  (await Promise.all(service.processes.map((p) => processCpuMs(p.child.pid!)))).reduce((sum: number, ms) => sum + (ms ?? 0), 0);

/**
 * One round of deliveries: E changes spread over the environments (a change's audit event serializes the
 * changes of one environment until commit), each delivered to every endpoint of its environment; the
 * figures from change to receipt, with the users bench's load beside it.
 */
async function deliveryRound(config: Config, database: Database, receiver: Receiver, topology: Topology, round: number) {
  const service = await startService(config, topology);
  try {
    const tag = `${topology}${round}`;
    const envs = await environmentsWithEndpoints(service.url, database, receiver, config, tag);
    const beside = await seedBeside(service.url);
    const stopBeside = startBeside(service.url, beside, config);
    const cpuBefore = { service: await cpuMsOf(service), bench: process.cpuUsage() };
    const started = performance.now();
    const changes = await pool(config.events, config.concurrency, (i) => createUser(service.url, envs[i % envs.length]!, `${tag}-u${i}@example.com`));
    const madeMs = performance.now() - started;
    const expected = config.events * config.endpoints;
    await allArrived(receiver, tag, expected);
    const besideRates = await stopBeside();
    const benchCpu = process.cpuUsage(cpuBefore.bench);
    const cpu = { serviceMs: (await cpuMsOf(service)) - cpuBefore.service, benchMs: (benchCpu.user + benchCpu.system) / 1000 };
    const latencies: number[] = [];
    let last = 0;
    for (const { value: userId, at } of changes) {
      for (let e = 0; e < config.endpoints; e++) {
        const receivedAt = receiver.receipts.get(`${userId} /${tag}e${e}`)!;
        latencies.push(receivedAt - at);
        last = Math.max(last, receivedAt);
      }
    }
    latencies.sort((a, b) => a - b);
    const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
    const seconds = (last - started) / 1000;
    return {
      perSecond: expected / seconds, p50: p(0.5), p99: p(0.99), changesPerSecond: config.events / (madeMs / 1000), drainMs: last - started - madeMs,
      beside: besideRates, serviceCores: cpu.serviceMs / 1000 / seconds, benchCores: cpu.benchMs / 1000 / seconds,
    };
  } finally {
    await service.stop();
  }
}

/**
 * The queue's capacity alone: E changes made with no worker running (so every delivery waits), then a
 * worker process started; deliveries per second from its start to the last receipt.
 */
async function drainRound(config: Config, database: Database, receiver: Receiver, round: number) {
  const api = await startService(config, 'api only');
  const tag = `d${round}`;
  try {
    const envs = await environmentsWithEndpoints(api.url, database, receiver, config, tag);
    await pool(config.events, config.concurrency, (i) => createUser(api.url, envs[i % envs.length]!, `${tag}-u${i}@example.com`));
  } finally {
    await api.stop();
  }
  const started = performance.now();
  const worker = await startWorker({
    DATABASE_URL: config.databaseUrl, GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY, LOG_LEVEL: 'warn', GATEHOUSE_WEBHOOK_PRIVATE_TARGETS: 'allow',
  });
  try {
    await allArrived(receiver, tag, config.events * config.endpoints);
    return config.events * config.endpoints / ((performance.now() - started) / 1000);
  } finally {
    await worker.stop();
  }
}

/** An environment made in process, for the cost rounds. */
async function environmentIn(app: App) {
  const res = await app.inject({ method: 'POST', url: '/api/admin/v1/environments', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: `bench-${uuidv7()}` } });
  return res.json() as { id: string; secretKey: string; frontendHost: string };
}

/** Throughput of a change with and without an endpoint that wants its event (no worker: the write alone). */
async function costRound(app: App, database: Database, kind: 'sign-in' | 'user', withEndpoint: boolean, config: Config) {
  const env = await environmentIn(app);
  if (withEndpoint) await addEndpoint(database, env.id, 'http://127.0.0.1:9/never', kind === 'sign-in' ? ['session.created'] : ['user.created']);
  if (kind === 'user') {
    const started = performance.now();
    await pool(config.events, config.concurrency, (i) => createUserIn(app, env, `cost-${i}-${uuidv7()}@example.com`));
    return config.events / ((performance.now() - started) / 1000);
  }
  const email = `signer-${uuidv7()}@example.com`;
  await createUserIn(app, env, email, PASSWORD);
  const started = performance.now();
  await pool(config.signIns, 4, () => app.inject({
    method: 'POST', url: '/_svc/auth/sign-in?_is_native=true', headers: { host: env.frontendHost }, payload: { email, password: PASSWORD },
  }).then((res) => { if (res.statusCode !== 200) throw new Error(`sign-in: ${res.statusCode} ${res.body}`); }));
  return config.signIns / ((performance.now() - started) / 1000);
}

type Figures = Awaited<ReturnType<typeof deliveryRound>>;

async function costRatios(database: Database, config: Config) {
  const writing = await appOn(database);
  const ratios: Record<'sign-in' | 'user', number[]> = { 'sign-in': [], user: [] };
  try {
    for (let r = 0; r < config.rounds; r++) {
      for (const kind of ['sign-in', 'user'] as const) {
        // Alternating which goes first, so a warming cache favours neither.
        const measured: Record<string, number> = {};
        for (const withEndpoint of orderOfRound([true, false], r)) measured[String(withEndpoint)] = await costRound(writing, database, kind, withEndpoint, config);
        const ratio = measured.true! / measured.false!;
        ratios[kind].push(ratio);
        console.log(`  cost round ${r + 1}, ${kind}: throughput with an endpoint / without = ${ratio.toFixed(3)}`);
      }
    }
  } finally {
    await writing.close();
  }
  return ratios;
}

const row = (name: string, values: number[], digits = 0) => `| ${name} | ${median(values).toFixed(digits)} | ${values.map((x) => x.toFixed(digits)).join(', ')} |`;

function printTable(live: Record<Topology, Figures[]>, drained: number[], ratios: Record<'sign-in' | 'user', number[]>) {
  console.log('\n| figure | median | rounds |\n|---|---:|---|');
  for (const topology of Object.keys(TOPOLOGIES) as Topology[]) {
    const f = live[topology];
    const name = TOPOLOGIES[topology];
    console.log(row(`${name}: deliveries/s`, f.map((x) => x.perSecond)));
    console.log(row(`${name}: p50 latency (ms)`, f.map((x) => x.p50)));
    console.log(row(`${name}: p99 latency (ms)`, f.map((x) => x.p99)));
    console.log(row(`${name}: users created/s (the changes)`, f.map((x) => x.changesPerSecond)));
    console.log(row(`${name}: beside, GET user/s`, f.map((x) => x.beside.gets)));
    console.log(row(`${name}: beside, sign-ins/s`, f.map((x) => x.beside.signIns)));
    console.log(row(`${name}: cores used by the service`, f.map((x) => x.serviceCores), 2));
    console.log(row(`${name}: cores used by the bench (producer, receiver, load)`, f.map((x) => x.benchCores), 2));
  }
  console.log(row('worker process draining a queued backlog: deliveries/s', drained));
  console.log(row('sign-ins/s with an endpoint / without', ratios['sign-in'], 3));
  console.log(row('user creations/s with an endpoint / without', ratios.user, 3));
}

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  console.log(machineLine());
  console.log(`database ${redact(config.databaseUrl)}; ${config.events} changes in ${config.environments} environments x ${config.endpoints} endpoints each per round, `
    + `${config.rounds} rounds per topology; beside: GET user at ${config.besideGets || 'full'}/s, sign-ins at ${config.besideSignIns || 'full'}/s`);
  await recreateDatabase(config.databaseUrl);
  const database = await openDatabase({ url: config.databaseUrl, poolSize: 20 });
  await migrate(database.db);
  const receiver = await startReceiver();
  try {
    const live: Record<Topology, Figures[]> = { one: [], split: [] };
    for (let r = 0; r < config.rounds; r++) {
      for (const topology of orderOfRound(Object.keys(TOPOLOGIES) as Topology[], r)) {
        const f = await deliveryRound(config, database, receiver, topology, r);
        live[topology].push(f);
        console.log(`  round ${r + 1}, ${TOPOLOGIES[topology]}: ${f.perSecond.toFixed(0)} deliveries/s, p50 ${f.p50.toFixed(0)} ms, p99 ${f.p99.toFixed(0)} ms `
          + `(users created at ${f.changesPerSecond.toFixed(0)}/s; the last delivery ${f.drainMs.toFixed(0)} ms after the last change; `
          + `beside ${f.beside.gets.toFixed(0)} GET user/s, ${f.beside.signIns.toFixed(1)} sign-ins/s; service ${f.serviceCores.toFixed(2)} cores, bench ${f.benchCores.toFixed(2)})`);
      }
    }
    const drained: number[] = [];
    for (let r = 0; r < config.rounds; r++) {
      drained.push(await drainRound(config, database, receiver, r));
      console.log(`  drain round ${r + 1}: ${drained.at(-1)!.toFixed(0)} deliveries/s from a queue of ${config.events * config.endpoints}`);
    }
    const ratios = await costRatios(database, config);
    printTable(live, drained, ratios);
    const best = (['one', 'split'] as const).map((t) => ({ t, perSecond: statsOf(live[t].map((f) => f.perSecond)) })).sort((a, b) => b.perSecond.median - a.perSecond.median)[0]!;
    return [
      entryFromStats(`webhook deliveries per second with the users load beside, ${TOPOLOGIES[best.t]}`, best.perSecond, '/s', { op: '>=', value: 1000 }),
      entryFromStats(`webhook p99 change-to-receipt latency, ${TOPOLOGIES[best.t]}`, statsOf(live[best.t].map((f) => f.p99)), 'ms', { op: '<=', value: 1000 }),
      entryFromStats('webhook deliveries per second draining a backlog', statsOf(drained), '/s', { op: '>=', value: 1000 }),
      entryFromStats('sign-in throughput with an endpoint / without', statsOf(ratios['sign-in']), 'ratio', { op: '>=', value: 0.95 }),
    ];
  } finally {
    await receiver.close();
    await database.close();
  }
}

/**
 * `npm run bench -- tokens` (issue 11): the session-JWT mint rate (`POST /_svc/sessions/current/token`)
 * against GET user on the same run and connections (aim: at least 0.8x), and local verification with a
 * cached JWKS, as a customer's backend does it, on one core (aim: over 20,000 verifications/s).
 */
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import { loadavg } from 'node:os';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import pg from 'pg';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus, loadConfig } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { loadLine, medianOfRounds, timedWithCpu, type Latency } from './lib/latency.js';
import { machineInfo, machineLine, markdownTable, writeResults, type Row } from './lib/report.js';
import { compare, cpuOf, interleaved, markdownComparisons } from './lib/rounds.js';
import { entryFromComparison, type SummaryEntry } from './lib/summary.js';
import { seedUsers } from './lib/seed.js';
import { startServer, type RunningServer } from './lib/server.js';

export const description = 'Session JWTs: mint rate vs GET user, and local verification with a cached JWKS on one core';

function readConfig() {
  return {
    ...loadConfig(),
    users: Math.floor(envNumber('BENCH_USERS', 10_000, 100)),
    verifySeconds: envNumber('BENCH_VERIFY_SECONDS', 5, 1),
  };
}

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

/** Issue 11's aims: minting at 0.8x of GET user, and local verification over 20,000/s on one core. */
const AIMS = { mint: { op: '>=', value: 0.8 }, verify: { op: '>=', value: 20_000 } } as const;

/** One live session per user, inserted with SQL (a sign-in per user would spend the run on argon2). */
async function seedSessions(databaseUrl: string, environmentId: string, userIds: string[]) {
  const tokens = userIds.map(() => `sess_${randomBytes(32).toString('base64url')}`);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    await pool.query(`insert into sessions (environment_id, id, user_id, token_hash, created_at, last_active_at, idle_timeout_seconds, expires_at)
      select $1, gen_random_uuid(), u, h, now(), now(), 604800, now() + interval '1 day' from unnest($2::uuid[], $3::bytea[]) as t(u, h)`,
    [environmentId, userIds, tokens.map((t) => createHash('sha256').update(t).digest())]);
    await pool.query('vacuum analyze sessions');
  } finally {
    await pool.end();
  }
  return tokens;
}

/** Calls of `check` per second on this one thread, for `seconds` after a warm-up. */
async function ratePerSecond(check: () => unknown, seconds: number) {
  for (let i = 0; i < 2000; i++) await check();
  let done = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(seconds * 1e9);
  while (process.hrtime.bigint() < end) {
    for (let i = 0; i < 500; i++) await check();
    done += 500;
  }
  return done / (Number(process.hrtime.bigint() - start) / 1e9);
}

/**
 * jose's jwtVerify with the key set in memory, as a customer's backend does it, and the machine's ceiling:
 * one bare ES256 signature check with node:crypto (OpenSSL), no JOSE around it.
 */
async function verifyRates(token: string, jwks: JSONWebKeySet, issuer: string, seconds: number) {
  const keys = createLocalJWKSet(jwks);
  const jose = await ratePerSecond(() => jwtVerify(token, keys, { issuer, algorithms: ['ES256'] }), seconds);
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const key = createPublicKey({ key: jwks.keys[0] as never, format: 'jwk' });
  const data = Buffer.from(`${header}.${payload}`);
  const sig = Buffer.from(signature, 'base64url');
  const bare = await ratePerSecond(() => verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, sig), seconds);
  return { jose, bare };
}

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  const started = new Date();
  console.log(`tokens bench: ${fmtInt(config.users)} users with a session each, ${config.durationSeconds}s per load (+${config.warmupSeconds}s warm-up), `
    + `${config.connections} connections, ${config.rounds} rounds, database ${redact(config.databaseUrl)}`);
  console.log(`${machineLine()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const adminToken = randomBytes(24).toString('hex');
  let gatehouse: RunningServer | undefined;
  try {
    await recreateDatabase(config.databaseUrl);
    gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts',
      env: { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY } });
    const url = gatehouse.url;
    const env = expectStatus<{ id: string; secretKey: string; frontendHost: string }>('create environment', await http(`${url}/api/admin/v1/environments`,
      { method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name: 'tokens-bench' } }), 201);
    console.log(`seeding ${fmtInt(config.users)} users and a session each`);
    const users = (await seedUsers({ databaseUrl: config.databaseUrl, environmentId: env.id, count: config.users, password: 'bench passphrase 42' })).ids;
    const sessions = await seedSessions(config.databaseUrl, env.id, users);

    let n = 0;
    const loads = {
      get: { name: 'GET user (Server API)', method: 'GET' as const, headers: { authorization: `Bearer ${env.secretKey}` }, next: () => ({ path: `/api/server/v1/users/${users[n++ % users.length]}` }) },
      mint: {
        name: 'mint session JWT', method: 'POST' as const, headers: { host: env.frontendHost },
        // A JSON body, as the load sends content-type: application/json with every POST.
        next: () => ({ path: '/_svc/sessions/current/token', body: '{}', headers: { authorization: `Bearer ${sessions[n++ % sessions.length]}` } }),
      },
    };
    const mintOne = async () => expectStatus<{ token: string }>('mint', await http(`${url}/_svc/sessions/current/token`,
      { method: 'POST', headers: { host: env.frontendHost, authorization: `Bearer ${sessions[0]}` } }), 200).token;
    await mintOne();
    expectStatus('get user', await http(`${url}/api/server/v1/users/${users[0]}`, { headers: loads.get.headers }), 200);

    const server = gatehouse;
    const rounds = await interleaved(['get', 'mint'] as const, config.rounds, async (k, r) => {
      const l = await timedWithCpu(server.child.pid, config.databaseUrl, {
        ...loads[k], url, connections: config.connections, durationSeconds: config.durationSeconds, warmupSeconds: config.warmupSeconds,
      });
      console.log(`  ${loads[k].name}, round ${r + 1}: ${loadLine(l)}`);
      return l;
    });
    const jwks = expectStatus<JSONWebKeySet>('jwks', await http(`${url}/_svc/.well-known/jwks.json`, { headers: { host: env.frontendHost } }), 200);
    console.log(`measuring local verification for ${config.verifySeconds}s on one core`);
    // A fresh token: the probe's expired during the loads (60 s).
    const verifications = await verifyRates(await mintOne(), jwks, `http://${env.frontendHost}`, config.verifySeconds);

    const rowOf = (k: keyof typeof loads): Row => {
      const l = medianOfRounds(rounds[k]);
      return { name: loads[k].name, rate: l.requestsPerSecond, p50Ms: l.p50Ms, p99Ms: l.p99Ms, non2xx: l.non2xx + l.errors + l.timeouts, serverCpuMs: l.serverCpuMsPerRequest, postgresCpuMs: l.postgresCpuMsPerRequest };
    };
    const rows = [rowOf('get'), rowOf('mint')];
    const figures = (l: Latency) => ({ rate: l.requestsPerSecond, cpuMs: cpuOf(l) });
    const ratio = compare('mint session JWT / GET user', rounds.mint.map(figures), rounds.get.map(figures));
    const file = await writeResults('tokens', { bench: 'tokens', startedAt: started.toISOString(), config: { ...config, databaseUrl: redact(config.databaseUrl) }, machine: machineInfo(), rounds, rows, ratio, verifications });

    console.log(`\n## Session tokens (${started.toISOString().slice(0, 10)}, ${config.connections} connections, median of ${config.rounds} rounds)\n`);
    console.log(markdownTable(rows));
    console.log(`\n${markdownComparisons([{ comparison: ratio, aim: AIMS.mint }])}\n`);
    console.log('| Local verification (jose, cached JWKS, one core) | Verifications/s | Aim | |');
    console.log('|---|---:|---:|---|');
    console.log(`| jose jwtVerify, ES256 | ${fmtInt(verifications.jose)} | > ${fmtInt(AIMS.verify.value)} | ${verifications.jose > AIMS.verify.value ? 'met' : '**below aim**'} |`);
    console.log(`| the machine's ceiling: one bare ES256 check (node:crypto) | ${fmtInt(verifications.bare)} | | |`);
    console.log(`\nresults: ${file}`);
    return [
      entryFromComparison(ratio, AIMS.mint),
      { name: 'local verification, jose jwtVerify ES256, one core', value: verifications.jose, unit: '/s', aim: AIMS.verify, spread: null },
    ];
  } catch (err) {
    if (gatehouse) console.error(`--- last output of gatehouse ---\n${gatehouse.output()}`);
    throw err;
  } finally {
    await gatehouse?.stop();
  }
}

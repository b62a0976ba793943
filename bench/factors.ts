/**
 * `npm run bench -- factors` (issue 26): what the second step adds to a password sign-in. Users with an
 * authenticator app sign in with their password (answered by a challenge) and then the TOTP code (the
 * session); users without one sign in with the password alone. Each sign-in of the first kind uses its
 * own user, since a TOTP code is accepted once per 30-second step. Interleaved rounds, CPU per sign-in of
 * the server and of PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { Secret, TOTP } from 'otpauth';
import pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { createSealer, parseEncryptionKey } from '../src/platform/crypto/encryption.js';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus, loadConfig } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { machineInfo, machineLine, markdownTable, writeResults } from './lib/report.js';
import { fmtSpread, interleaved, statsOf } from './lib/rounds.js';
import { seedUsers } from './lib/seed.js';
import { startServer, type RunningServer } from './lib/server.js';
import { rowOf, timedSignIns, type Round } from './lib/sign-in-load.js';
import { entryFromStats, type SummaryEntry } from './lib/summary.js';

export const description = 'Second factors: password + TOTP sign-ins per second against password-only sign-ins (aim: the second step adds under 10%)';

const PASSWORD = 'bench passphrase 42';
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

function readConfig() {
  return {
    ...loadConfig({ durationSeconds: 8, rounds: 3 }),
    connections: Math.floor(envNumber('BENCH_CONNECTIONS', 16, 1)),
    // Enough users with a factor that none signs in twice in a run (a code is good once per step).
    factorUsers: Math.floor(envNumber('BENCH_USERS', 12_000, 100)),
  };
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** One JSON POST; the status and the parsed body. */
function post(url: string, host: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { host, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) } }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (chunk: string) => { data += chunk; }).on('end', () => resolve({ status: res.statusCode ?? 0, json: data ? JSON.parse(data) : {} }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** One authenticator-app factor per user, all with the same secret, sealed as the service seals it. */
async function seedFactors(databaseUrl: string, environmentId: string, userIds: string[], secret: Buffer) {
  const sealed = createSealer(parseEncryptionKey(BENCH_ENCRYPTION_KEY)!).seal(secret);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (let i = 0; i < userIds.length; i += 1000) {
      const chunk = userIds.slice(i, i + 1000);
      await client.query(`insert into mfa_factors (environment_id, id, user_id, type, name, secret_sealed, created_at, confirmed_at)
        select $1, v.id, v.user_id, 'totp', 'Authenticator app', $2, now(), now() from unnest($3::uuid[], $4::uuid[]) as v(id, user_id)`,
      [environmentId, sealed, chunk.map(() => uuidv7()), chunk]);
    }
    await client.query('vacuum analyze mfa_factors');
  } finally {
    await client.end();
  }
}

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  const started = new Date();
  console.log(`factors bench: ${fmtInt(config.factorUsers)} users with a factor, ${config.durationSeconds}s per load (+${config.warmupSeconds}s warm-up), `
    + `${config.connections} concurrent sign-ins, ${config.rounds} rounds, database ${redact(config.databaseUrl)}`);
  console.log(`${machineLine()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const adminToken = randomBytes(24).toString('hex');
  let gatehouse: RunningServer | undefined;
  try {
    await recreateDatabase(config.databaseUrl);
    gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts', env: { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY } });
    const url = gatehouse.url;
    // No lockout or IP budget in the way: every sign-in of the bench comes from one address.
    const env = expectStatus<{ id: string; frontendHost: string }>('create environment', await http(`${url}/api/admin/v1/environments`,
      { method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name: 'factors-bench', settings: { lockout: { ipMaxFailures: 1_000_000 } } } }), 201);
    const host = env.frontendHost;
    const plain = await seedUsers({ databaseUrl: config.databaseUrl, environmentId: env.id, count: 2_000, password: PASSWORD, emailPrefix: 'plain' });
    const withFactor = await seedUsers({ databaseUrl: config.databaseUrl, environmentId: env.id, count: config.factorUsers, password: PASSWORD, emailPrefix: 'mfa' });
    const secret = randomBytes(20);
    await seedFactors(config.databaseUrl, env.id, withFactor.ids, secret);
    const totp = new TOTP({ secret: new Secret({ buffer: new Uint8Array(secret).buffer }), algorithm: 'SHA1', digits: 6, period: 30 });

    let nextFactorUser = 0;
    const loads = {
      password: {
        name: 'password sign-in',
        signIn: async (n: number) => (await post(`${url}/_svc/auth/sign-in?_is_native=true`, host, { email: plain.emails[n % plain.emails.length], password: PASSWORD })).status === 200,
      },
      totp: {
        name: 'password + TOTP sign-in (two requests)',
        signIn: async () => {
          const email = withFactor.emails[nextFactorUser++ % withFactor.emails.length];
          const first = await post(`${url}/_svc/auth/sign-in?_is_native=true`, host, { email, password: PASSWORD });
          if (first.status !== 200 || first.json.mfaRequired !== true) return false;
          const second = await post(`${url}/_svc/auth/mfa/verify?_is_native=true`, host, { challengeToken: first.json.challengeToken, code: totp.generate() });
          return second.status === 200;
        },
      },
    };
    if (!(await loads.password.signIn(0)) || !(await loads.totp.signIn())) throw new Error('a probe sign-in failed');

    const order = ['password', 'totp'] as const;
    const server = gatehouse;
    const rounds = await interleaved(order, config.rounds, async (k, r) => {
      const round = await timedSignIns(server, config.databaseUrl, config.connections, config.warmupSeconds, config.durationSeconds, loads[k].signIn);
      console.log(`  ${loads[k].name}, round ${r + 1}: ${fmtInt(round.signIns / round.seconds)}/s, CPU ${(round.serverCpuMs ?? 0).toFixed(2)} + ${(round.postgresCpuMs ?? 0).toFixed(2)} ms/sign-in${round.failures ? `, FAILED ${round.failures}` : ''}`);
      return round;
    });
    if (nextFactorUser > withFactor.emails.length) console.warn(`warning: ${fmtInt(nextFactorUser)} factor sign-ins for ${fmtInt(withFactor.emails.length)} users: some codes were replays (raise BENCH_USERS)`);
    const rows = order.map((k) => rowOf(loads[k].name, rounds[k]));
    const cpu = (r: Round) => (r.serverCpuMs ?? 0) + (r.postgresCpuMs ?? 0);
    // Above 1: the two-step sign-in costs that many password sign-ins; the aim is under 1.10.
    const byRate = statsOf(rounds.totp.map((r, i) => (rounds.password[i].signIns / rounds.password[i].seconds) / (r.signIns / r.seconds)));
    const byCpu = statsOf(rounds.totp.map((r, i) => cpu(r) / cpu(rounds.password[i])));
    const file = await writeResults('factors', { bench: 'factors', startedAt: started.toISOString(), config: { ...config, databaseUrl: redact(config.databaseUrl) }, machine: machineInfo(), rows,
      cost: { byRate, byCpu }, rounds: Object.fromEntries(order.map((k) => [k, rounds[k].map(({ latenciesMs: _all, ...round }) => round)])) });

    console.log(`\n## Second factors (${started.toISOString().slice(0, 10)}, ${config.connections} concurrent sign-ins, median of ${config.rounds} interleaved rounds)\n`);
    console.log(markdownTable(rows).replace('Requests/s', 'Sign-ins/s').replace(/CPU ms\/req/g, 'CPU ms/sign-in'));
    console.log(`\nA password + TOTP sign-in costs ${byRate.median.toFixed(3)}x a password sign-in by rate (${fmtSpread(byRate)}), ${byCpu.median.toFixed(3)}x by CPU (${fmtSpread(byCpu)}).`);
    console.log(`\nresults: ${file}`);
    return [entryFromStats('password + TOTP sign-in / password sign-in (time)', byRate, 'ratio', { op: '<=', value: 1.1 }, `from CPU ${byCpu.median.toFixed(2)} (${fmtSpread(byCpu)})`)];
  } catch (err) {
    if (gatehouse) console.error(`--- last output of gatehouse ---\n${gatehouse.output()}`);
    throw err;
  } finally {
    agent.destroy();
    await gatehouse?.stop();
  }
}

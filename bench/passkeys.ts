/**
 * `npm run bench -- passkeys` (issue 26): passkey sign-ins per second against password sign-ins on the same
 * run and connections (aim: at least 1x; a password sign-in is bound by argon2id, a passkey's by one ES256
 * check and a few statements), and the sign-in options step on its own.
 *
 * No browser signs here: a software authenticator (test/helpers/software-authenticator.ts, ES256) makes one
 * synced passkey per user (counter always 0, as iCloud Keychain and Google Password Manager keep it, so
 * concurrent assertions of one key never race on the counter). Each assertion answers its own challenge,
 * inserted with SQL before the round as the options step would (SHA-256, 1 hour), and signed in advance, so
 * the load measures POST /_svc/auth/passkey alone.
 */
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { createSoftwareAuthenticator, type SoftwareAuthenticator } from '../test/helpers/software-authenticator.js';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus, loadConfig } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { loadLine, medianOfRounds, timedWithCpu, type Latency } from './lib/latency.js';
import type { LoadSpec } from './lib/load.js';
import { machineInfo, machineLine, markdownTable, writeResults, type Row } from './lib/report.js';
import { compare, cpuOf, interleaved, markdownComparisons } from './lib/rounds.js';
import { seedUsers } from './lib/seed.js';
import { startServer, type RunningServer } from './lib/server.js';
import { entryFromComparison, type SummaryEntry } from './lib/summary.js';
import { rotation, signInLoad, USERS_ENVIRONMENT_SETTINGS, USERS_PASSWORD } from './lib/user-loads.js';

export const description = 'Passkeys: sign-ins per second vs password sign-ins, and the sign-in options step';

function readConfig() {
  return {
    ...loadConfig(),
    users: Math.floor(envNumber('BENCH_USERS', 1_000, 10)),
    /** Signed assertions (and challenges) per passkey round: more than a round can use up, or its tail answers 400. */
    assertionsPerRound: Math.floor(envNumber('BENCH_PASSKEY_ASSERTIONS', 30_000, 100)),
  };
}

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const AIMS = { signIn: { op: '>=', value: 1 } } as const;

interface Device { userId: string; authenticator: SoftwareAuthenticator }

/** One synced ES256 passkey per user, inserted with SQL as a registration would store it. */
async function seedPasskeys(pool: pg.Pool, environmentId: string, rpId: string, origin: string, userIds: string[]): Promise<Device[]> {
  const devices = userIds.map((userId) => {
    const authenticator = createSoftwareAuthenticator({ synced: true, counterStep: 0 });
    authenticator.create({ challenge: 'seed', rp: { id: rpId }, user: { id: Buffer.from(userId.replace(/-/g, ''), 'hex').toString('base64url') } }, origin);
    return { userId, authenticator };
  });
  await pool.query(`insert into passkeys (environment_id, id, user_id, credential_id, public_key, counter, transports, device_type, backed_up, aaguid, rp_id, name, created_at)
    select $1, i, u, c, k, 0, '{internal}', 'multiDevice', true, '00000000-0000-0000-0000-000000000000', $2, 'Bench', now()
    from unnest($3::uuid[], $4::uuid[], $5::text[], $6::bytea[]) as t(i, u, c, k)`,
  [environmentId, rpId, devices.map(() => uuidv7()), userIds, devices.map((d) => d.authenticator.credentials[0]!.id.toString('base64url')),
    devices.map((d) => Buffer.from(d.authenticator.credentials[0]!.publicKeyCose))]);
  await pool.query('vacuum analyze passkeys');
  return devices;
}

/** `count` live challenges, as the options step stores them, and an assertion signed for each, spread over the users. */
async function signedAssertions(pool: pg.Pool, environmentId: string, rpId: string, origin: string, devices: Device[], count: number) {
  const next = rotation(devices.length);
  const challenges = Array.from({ length: count }, () => createHash('sha256').update(uuidv7()).digest('base64url'));
  await pool.query(`insert into passkey_challenges (environment_id, challenge_hash, purpose, created_at, expires_at)
    select $1, h, 'authentication', now(), now() + interval '1 hour' from unnest($2::bytea[]) as t(h)`,
  [environmentId, challenges.map((c) => createHash('sha256').update(c).digest())]);
  return challenges.map((challenge) => JSON.stringify({ response: devices[next()]!.authenticator.get({ challenge, rpId }, origin) }));
}

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  const started = new Date();
  console.log(`passkeys bench: ${fmtInt(config.users)} users with a password and a passkey each, ${config.durationSeconds}s per load (+${config.warmupSeconds}s warm-up), `
    + `${config.connections} connections, ${config.rounds} rounds, database ${redact(config.databaseUrl)}`);
  console.log(`${machineLine()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const adminToken = createHash('sha256').update(uuidv7()).digest('hex');
  let gatehouse: RunningServer | undefined;
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 2 });
  try {
    await recreateDatabase(config.databaseUrl);
    gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts',
      env: { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY } });
    const url = gatehouse.url;
    const env = expectStatus<{ id: string; frontendHost: string }>('create environment', await http(`${url}/api/admin/v1/environments`,
      { method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name: 'passkeys-bench', settings: USERS_ENVIRONMENT_SETTINGS } }), 201);
    const rpId = env.frontendHost.replace(/:\d+$/, '');
    const origin = `http://${env.frontendHost}`;
    console.log(`seeding ${fmtInt(config.users)} users and a passkey each`);
    const { ids, emails } = await seedUsers({ databaseUrl: config.databaseUrl, environmentId: env.id, count: config.users, password: USERS_PASSWORD });
    const devices = await seedPasskeys(pool, env.id, rpId, origin, ids);

    const [probe] = await signedAssertions(pool, env.id, rpId, origin, devices, 1);
    expectStatus('passkey sign-in', await http(`${url}/_svc/auth/passkey?_is_native=true`, { method: 'POST', headers: { host: env.frontendHost }, body: JSON.parse(probe!) }), 200);

    let bodies: string[] = [];
    let used = 0;
    const loads: Record<'password' | 'passkey' | 'options', LoadSpec> = {
      password: signInLoad(env.frontendHost, emails),
      passkey: {
        name: 'client sign-in (passkey)', method: 'POST', headers: { host: env.frontendHost },
        next: () => ({ path: '/_svc/auth/passkey?_is_native=true', body: bodies[used++ % bodies.length] }),
      },
      options: {
        name: 'passkey sign-in options', method: 'POST', headers: { host: env.frontendHost },
        next: () => ({ path: '/_svc/auth/passkey/options', body: '{}' }),
      },
    };
    const server = gatehouse;
    const rounds = await interleaved(['password', 'passkey', 'options'] as const, config.rounds, async (k, r) => {
      if (k === 'passkey') {
        bodies = await signedAssertions(pool, env.id, rpId, origin, devices, config.assertionsPerRound);
        used = 0;
      }
      const l = await timedWithCpu(server.child.pid, config.databaseUrl, {
        ...loads[k], url, connections: config.connections, durationSeconds: config.durationSeconds, warmupSeconds: config.warmupSeconds,
      });
      console.log(`  ${loads[k].name}, round ${r + 1}: ${loadLine(l)}${k === 'passkey' && used > bodies.length ? ' (assertions ran out: raise BENCH_PASSKEY_ASSERTIONS)' : ''}`);
      return l;
    });

    const rowOf = (l: Latency): Row => ({ name: l.name, rate: l.requestsPerSecond, p50Ms: l.p50Ms, p99Ms: l.p99Ms, non2xx: l.non2xx + l.errors + l.timeouts, serverCpuMs: l.serverCpuMsPerRequest, postgresCpuMs: l.postgresCpuMsPerRequest });
    const rows = (['password', 'passkey', 'options'] as const).map((k) => rowOf(medianOfRounds(rounds[k])));
    const figures = (l: Latency) => ({ rate: l.requestsPerSecond, cpuMs: cpuOf(l) });
    const ratio = compare('passkey sign-in / password sign-in', rounds.passkey.map(figures), rounds.password.map(figures));
    const file = await writeResults('passkeys', { bench: 'passkeys', startedAt: started.toISOString(), config: { ...config, databaseUrl: redact(config.databaseUrl) }, machine: machineInfo(), rounds, rows, ratio });

    console.log(`\n## Passkeys (${started.toISOString().slice(0, 10)}, ${config.connections} connections, median of ${config.rounds} rounds)\n`);
    console.log(markdownTable(rows));
    console.log(`\n${markdownComparisons([{ comparison: ratio, aim: AIMS.signIn }])}\n`);
    console.log(`results: ${file}`);
    return [entryFromComparison(ratio, AIMS.signIn)];
  } catch (err) {
    if (gatehouse) console.error(`--- last output of gatehouse ---\n${gatehouse.output()}`);
    throw err;
  } finally {
    await pool.end();
    await gatehouse?.stop();
  }
}

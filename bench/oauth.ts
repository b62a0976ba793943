/**
 * `npm run bench -- oauth` (issue 12): full external sign-ins per second against a local OpenID provider
 * (its own process): authorize (302), the provider's authorization (302, as a browser would follow it),
 * the callback (code exchange, ID token check, the user, the session: 303). Returning users and new users.
 * Beside it, password sign-in on the same run, and what each costs the service: CPU ms per sign-in of
 * the Gatehouse process and of its PostgreSQL backends (the provider's own CPU is not counted).
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus, loadConfig } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { machineInfo, machineLine, markdownTable, writeResults } from './lib/report.js';
import { seedUsers } from './lib/seed.js';
import { startServer, type RunningServer } from './lib/server.js';
import { percentile } from './lib/timed-load.js';
import { fmtSpread, interleaved, statsOf } from './lib/rounds.js';
import { rowOf, timedSignIns, type Round } from './lib/sign-in-load.js';

export const description = 'External sign-in: full OAuth round trips per second against a local OpenID provider, and CPU per sign-in vs password sign-in';

const PASSWORD = 'bench passphrase 42';
const LANDING = 'https://app.bench.example.com/home';
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

function readConfig() {
  return {
    ...loadConfig({ durationSeconds: 8, rounds: 3 }),
    connections: Math.floor(envNumber('BENCH_CONNECTIONS', 16, 1)),
    returningUsers: Math.floor(envNumber('BENCH_USERS', 2_000, 10)),
  };
}

interface Answer { status: number; location?: string; setCookie: string[] }

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** One request, body drained; what a redirect dance needs: the status, Location and Set-Cookie. */
function call(url: string, { method = 'GET', headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, ...(body && { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }) }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, setCookie: res.headers['set-cookie'] ?? [] }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** No aims (issue 12 asks for the figures), so no summary entries. */
export async function run(): Promise<[]> {
  const config = readConfig();
  const started = new Date();
  console.log(`oauth bench: ${fmtInt(config.returningUsers)} returning users, ${config.durationSeconds}s per load (+${config.warmupSeconds}s warm-up), `
    + `${config.connections} concurrent sign-ins, ${config.rounds} rounds, database ${redact(config.databaseUrl)}`);
  console.log(`${machineLine()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const adminToken = randomBytes(24).toString('hex');
  const clientSecret = randomBytes(24).toString('hex');
  let gatehouse: RunningServer | undefined;
  let provider: RunningServer | undefined;
  try {
    await recreateDatabase(config.databaseUrl);
    [gatehouse, provider] = await Promise.all([
      startServer({ name: 'gatehouse', script: 'src/main.ts', nodeArgs: process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [], env: { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY } }),
      startServer({ name: 'provider', script: 'bench/lib/oauth-provider.ts', env: { BENCH_CLIENT_SECRET: clientSecret }, readyPath: '/.well-known/openid-configuration' }),
    ]);
    const url = gatehouse.url;
    const admin = { authorization: `Bearer ${adminToken}` };
    const env = expectStatus<{ id: string; secretKey: string; frontendHost: string }>('create environment', await http(`${url}/api/admin/v1/environments`,
      { method: 'POST', headers: admin, body: { name: 'oauth-bench' } }), 201);
    expectStatus('allowed origins', await http(`${url}/api/server/v1/allowed-origins`, { method: 'PUT', headers: { authorization: `Bearer ${env.secretKey}` }, body: { origins: ['https://app.bench.example.com'] } }), 200);
    expectStatus('provider', await http(`${url}/api/admin/v1/environments/${env.id}/oauth-providers/acme`, {
      method: 'PUT', headers: admin, body: { type: 'oidc', name: 'Acme', clientId: 'client-1', clientSecret, issuer: provider.url },
    }), 201);
    const host = env.frontendHost;
    const seeded = await seedUsers({ databaseUrl: config.databaseUrl, environmentId: env.id, count: config.returningUsers, password: PASSWORD });

    /** authorize -> the provider -> the callback; true when the callback signed the person in. */
    const oauthSignIn = async (subject: string) => {
      const authorize = await call(`${url}/_svc/auth/oauth2/acme/authorize?redirect_url=${encodeURIComponent(LANDING)}`, { headers: { host } });
      if (authorize.status !== 302) return false;
      const cookie = authorize.setCookie.find((c) => c.startsWith('__oauth_browser='))!.split(';')[0]!;
      const atProvider = await call(`${authorize.location}&test_subject=${subject}`);
      const back = new URL(atProvider.location!);
      const done = await call(`${url}${back.pathname}${back.search}`, { headers: { host, cookie } });
      return done.status === 303 && done.location === LANDING;
    };
    const runId = randomBytes(3).toString('hex');
    const loads = {
      returning: { name: 'OAuth sign-in, returning user', signIn: (n: number) => oauthSignIn(`returning-${n % config.returningUsers}`) },
      fresh: { name: 'OAuth sign-in, new user', signIn: (n: number) => oauthSignIn(`new-${runId}-${n}-${randomBytes(3).toString('hex')}`) },
      password: {
        name: 'password sign-in (argon2id)',
        signIn: async (n: number) => (await call(`${url}/_svc/auth/sign-in?_is_native=true`, {
          method: 'POST', headers: { host }, body: JSON.stringify({ email: seeded.emails[n % seeded.emails.length], password: PASSWORD }),
        })).status === 200,
      },
    };
    // The returning users sign in once first, so their identities exist.
    console.log(`linking ${fmtInt(config.returningUsers)} returning users`);
    for (let i = 0; i < config.returningUsers; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, config.returningUsers - i) }, (_, k) => oauthSignIn(`returning-${i + k}`)));
    }
    if (!(await loads.returning.signIn(0)) || !(await loads.password.signIn(0))) throw new Error('a probe sign-in failed');

    const order = ['returning', 'password', 'fresh'] as const;
    const server = gatehouse;
    const rounds = await interleaved(order, config.rounds, async (k, r) => {
      const round = await timedSignIns(server, config.databaseUrl, config.connections, config.warmupSeconds, config.durationSeconds, loads[k].signIn);
      console.log(`  ${loads[k].name}, round ${r + 1}: ${fmtInt(round.signIns / round.seconds)}/s, p99 ${percentile(round.latenciesMs, 99).toFixed(1)} ms, `
        + `CPU ${(round.serverCpuMs ?? 0).toFixed(2)} + ${(round.postgresCpuMs ?? 0).toFixed(2)} ms/sign-in${round.failures ? `, FAILED ${round.failures}` : ''}`);
      return round;
    });
    const rows = order.map((k) => rowOf(loads[k].name, rounds[k]));
    // What each sign-in costs the service next to a password sign-in, taken within each round.
    const cpu = (r: Round) => (r.serverCpuMs ?? 0) + (r.postgresCpuMs ?? 0);
    const spend = order.map((k) => ({
      name: loads[k].name, cpuMs: statsOf(rounds[k].map(cpu)), vsPassword: statsOf(rounds[k].map((r, i) => cpu(r) / cpu(rounds.password[i]))),
    }));
    const file = await writeResults('oauth', { bench: 'oauth', startedAt: started.toISOString(), config: { ...config, databaseUrl: redact(config.databaseUrl) }, machine: machineInfo(), rows, spend,
      rounds: Object.fromEntries(order.map((k) => [k, rounds[k].map(({ latenciesMs: _all, ...round }) => round)])) });

    console.log(`\n## External sign-in (${started.toISOString().slice(0, 10)}, ${config.connections} concurrent sign-ins, median of ${config.rounds} interleaved rounds)\n`);
    console.log('A sign-in is one row: for OAuth the three requests of the dance (authorize, the provider, the callback), for a password one POST.\n');
    console.log(markdownTable(rows).replace('Requests/s', 'Sign-ins/s').replace(/CPU ms\/req/g, 'CPU ms/sign-in'));
    console.log('\n| What the service spends per sign-in (server + PostgreSQL CPU) | ms: median | vs password sign-in, per round: median | spread |');
    console.log('|---|---:|---:|---|');
    for (const row of spend) console.log(`| ${row.name} | ${row.cpuMs.median.toFixed(2)} | ${row.vsPassword.median.toFixed(2)}x | ${fmtSpread(row.vsPassword)} |`);
    console.log(`\nresults: ${file}`);
    return [];
  } catch (err) {
    if (gatehouse) console.error(`--- last output of gatehouse ---\n${gatehouse.output()}`);
    throw err;
  } finally {
    agent.destroy();
    await Promise.all([gatehouse?.stop(), provider?.stop()]);
  }
}

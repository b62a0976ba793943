/**
 * `npm run bench -- email-addresses`: migration 0019 over 1,000,000 users on real PostgreSQL (the whole
 * file in one transaction, as the migrator runs it, with a users write every 20 ms on another connection
 * to show whether sign-ins would wait), then a password sign-in by a verified secondary address against
 * one by the primary: through the real server, and the lookup statement alone under EXPLAIN ANALYZE.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { machineLine, writeResults } from './lib/report.js';
import { seedUserList } from './lib/seed-user-list.js';
import { startServer } from './lib/server.js';
import type { SummaryEntry } from './lib/summary.js';

export const description = 'Migration 0019 over 1M users (time, and the longest wait of a users write meanwhile); sign-in by a verified secondary address vs by the primary';

const MIGRATION = new URL('../migrations/0019_email_addresses.sql', import.meta.url);
const SEED_PASSWORD = 'bench-Password-42!';

function readConfig() {
  return {
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench_email',
    users: Math.floor(envNumber('BENCH_USERS', 1_000_000, 1000)),
    noiseUsers: Math.floor(envNumber('BENCH_NOISE_USERS', 0)),
    signIns: Math.floor(envNumber('BENCH_SIGN_INS', 200, 10)),
    lookups: Math.floor(envNumber('BENCH_LOOKUPS', 2000, 10)),
  };
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };
const p95 = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length * 0.95)]!; };
const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the whole migration file in one transaction while another connection updates one user every 20 ms; the longest of those waits. */
async function timedMigration(pool: pg.Pool, environmentId: string) {
  const script = await readFile(MIGRATION, 'utf8');
  await pool.query('DROP TABLE email_addresses');
  await pool.query(`DELETE FROM schema_migrations WHERE version = '0019_email_addresses.sql'`);
  await pool.query('CHECKPOINT');
  const { rows: [probe] } = await pool.query<{ id: string }>(`select id from users where environment_id = $1 and status = 'active' limit 1`, [environmentId]);
  const writes: number[] = [];
  let running = true;
  const writer = (async () => {
    while (running) {
      const started = performance.now();
      await pool.query('update users set last_sign_in_attempt_at = now() where environment_id = $1 and id = $2', [environmentId, probe!.id]);
      writes.push(performance.now() - started);
      await sleep(20);
    }
  })();
  const client = await pool.connect();
  const started = performance.now();
  try {
    await client.query('BEGIN');
    await client.query(script);
    await client.query(`INSERT INTO schema_migrations (version) VALUES ('0019_email_addresses.sql')`);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  const seconds = (performance.now() - started) / 1000;
  running = false;
  await writer;
  const { rows: [counts] } = await pool.query<{ addresses: string; users: string }>(
    `select (select count(*) from email_addresses) as addresses, (select count(*) from users where email is not null) as users`);
  return { seconds, writes: writes.length, longestWriteMs: Math.max(...writes), medianWriteMs: median(writes), addresses: Number(counts!.addresses), users: Number(counts!.users) };
}

/** Gives `count` active, unlocked users a verified secondary address (`alt.<their email>`); their primaries and secondaries. */
async function secondaries(pool: pg.Pool, environmentId: string, count: number) {
  const { rows } = await pool.query<{ email: string; alt: string }>(`
    insert into email_addresses (environment_id, id, user_id, email, is_primary, verified_at, created_at)
    select u.environment_id, gen_random_uuid(), u.id, 'alt.' || u.email, false, now(), now()
    from users u tablesample bernoulli (1) repeatable (7)
    where u.environment_id = $1 and u.status = 'active' and u.locked_until is null and u.failed_sign_ins = 0
    limit $2
    returning substr(email, 5) as email, email as alt`, [environmentId, count]);
  await pool.query('ANALYZE email_addresses');
  return rows;
}

/** The lookup sign-in makes now (users/store.ts signsIn): the primary, or the owner of a verified address. */
const LOOKUP = `select id from users where environment_id = $1 and (email = $2 or id = (
    select a.user_id from email_addresses a where a.environment_id = $1 and a.email = $2 and a.verified_at is not null and a.released_at is null))
    and status <> 'deleted'`;
/** The lookup before 0019: the primary only. */
const LOOKUP_BEFORE = `select id from users where environment_id = $1 and email = $2 and status <> 'deleted'`;

/** One lookup statement timed alone (prepared, one connection), and its plan under EXPLAIN ANALYZE. */
async function lookups(pool: pg.Pool, environmentId: string, emails: string[], times: number, sqlText = LOOKUP) {
  const client = await pool.connect();
  try {
    const name = `lookup_${sqlText.length}`;
    await client.query({ name, text: sqlText, values: [environmentId, emails[0]] });
    const ms: number[] = [];
    for (let i = 0; i < times; i++) {
      const started = performance.now();
      const { rows } = await client.query({ name, text: sqlText, values: [environmentId, emails[i % emails.length]] });
      ms.push(performance.now() - started);
      if (rows.length !== 1) throw new Error(`lookup of ${emails[i % emails.length]} found ${rows.length} users`);
    }
    const plan = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers, costs off) ${sqlText}`, [environmentId, emails[0]]);
    return { medianMs: median(ms), p95Ms: p95(ms), plan: plan.rows.map((r) => r['QUERY PLAN']).join('\n') };
  } finally {
    client.release();
  }
}

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  console.log(`database ${redact(config.databaseUrl)}; ${machineLine()}`);
  const versionClient = new pg.Client({ connectionString: config.databaseUrl.replace(/\/[^/]*$/, '/postgres') });
  await versionClient.connect();
  console.log((await versionClient.query<{ v: string }>('select version() as v')).rows[0]!.v);
  await versionClient.end();
  const adminToken = randomBytes(24).toString('hex');
  const serverEnv = { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY };
  await recreateDatabase(config.databaseUrl);
  let gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts', env: serverEnv });
  const createEnv = async (name: string) => expectStatus<{ id: string; secretKey: string; frontendHost: string }>(`create environment ${name}`,
    await http(`${gatehouse.url}/api/admin/v1/environments`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name } }), 201);
  const target = await createEnv('email-addresses-bench');
  const noise = await createEnv('email-addresses-noise');
  await gatehouse.stop();

  console.log(`seeding ${config.users.toLocaleString('en-US')} users`);
  const seeded = await seedUserList({
    databaseUrl: config.databaseUrl, targetEnvironmentId: target.id, noiseEnvironmentId: noise.id, count: config.users, noiseCount: config.noiseUsers,
    onProgress: (done, total) => { if (done === total || done % 400_000 === 0) console.log(`  ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}`); },
  });
  console.log(`  done in ${seeded.seconds.toFixed(1)} s`);

  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 3 });
  try {
    const migration = await timedMigration(pool, target.id);
    console.log(`migration 0019: ${migration.seconds.toFixed(1)} s for ${migration.addresses.toLocaleString('en-US')} addresses; `
      + `${migration.writes} users writes meanwhile, median ${fmt(migration.medianWriteMs)} ms, longest ${fmt(migration.longestWriteMs)} ms`);
    await pool.query('VACUUM ANALYZE email_addresses');
    const pairs = await secondaries(pool, target.id, config.signIns);
    const before = await lookups(pool, target.id, pairs.map((p) => p.email), config.lookups, LOOKUP_BEFORE);
    const byPrimary = await lookups(pool, target.id, pairs.map((p) => p.email), config.lookups);
    const bySecondary = await lookups(pool, target.id, pairs.map((p) => p.alt), config.lookups);
    console.log(`lookup statement: before 0019 (primary only) median ${fmt(before.medianMs)} ms p95 ${fmt(before.p95Ms)}; now by the primary median `
      + `${fmt(byPrimary.medianMs)} ms p95 ${fmt(byPrimary.p95Ms)}; by a secondary median ${fmt(bySecondary.medianMs)} ms p95 ${fmt(bySecondary.p95Ms)}`);
    console.log(`plan of the lookup by the primary:\n${byPrimary.plan}`);

    gatehouse = await startServer({ name: 'gatehouse', script: 'src/main.ts', env: serverEnv });
    const signIn = async (email: string) => {
      const started = performance.now();
      const res = await http(`${gatehouse.url}/_svc/auth/sign-in?_is_native=true`, { method: 'POST', headers: { host: target.frontendHost }, body: { email, password: SEED_PASSWORD } });
      const ms = performance.now() - started;
      if (res.status !== 200) throw new Error(`sign-in by ${email}: ${res.status} ${res.text}`);
      return ms;
    };
    for (const pair of pairs.slice(0, 10)) { await signIn(pair.email); await signIn(pair.alt); } // warm-up
    const primaryMs: number[] = [];
    const secondaryMs: number[] = [];
    // Interleaved, so load on the machine falls on both alike.
    for (const pair of pairs) { primaryMs.push(await signIn(pair.email)); secondaryMs.push(await signIn(pair.alt)); }
    await gatehouse.stop();
    const signInRatio = median(secondaryMs) / median(primaryMs);
    console.log(`sign-in over HTTP: primary median ${fmt(median(primaryMs))} ms (p95 ${fmt(p95(primaryMs))}), `
      + `secondary median ${fmt(median(secondaryMs))} ms (p95 ${fmt(p95(secondaryMs))}); ratio ${signInRatio.toFixed(2)}`);
    console.log(`plan of the lookup by a secondary address:\n${bySecondary.plan}`);
    const file = await writeResults('email-addresses', {
      config, seeded, migration, lookups: { before, byPrimary, bySecondary }, signIn: { primaryMs, secondaryMs, ratio: signInRatio },
    });
    console.log(`results: ${file}`);
    return [
      { name: 'migration 0019 at 1M users', value: migration.seconds, unit: 's', aim: { op: '<=', value: 60 }, spread: null },
      { name: 'longest users write during the migration', value: migration.longestWriteMs, unit: 'ms', aim: { op: '<=', value: 100 }, spread: null },
      { name: 'sign-in by a secondary / by the primary (median)', value: signInRatio, unit: 'ratio', aim: { op: '<=', value: 1.1 }, spread: null },
    ];
  } finally {
    await pool.end();
  }
}

/**
 * `npm run bench -- data-requests`: one user's export and erasure, end to end through the job queue
 * (POST the request, then the job: claim, gather or erase, commit), with 1,000 users and again with
 * 1,000,000 users and a few million audit events in the environment, on real PostgreSQL. The export's
 * reads must cost the user's own rows whatever the size of the environment: the bench prints each
 * statement's EXPLAIN (ANALYZE, BUFFERS) at both sizes. See bench/results/data-requests.md.
 */
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { createTestClock } from '../src/platform/clock.js';
import { openDatabase, type Database } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import { BENCH_ENCRYPTION_KEY, envNumber } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { machineLine } from './lib/report.js';
import { statsOf, type Stats } from './lib/rounds.js';
import { uuidv7Sql } from './lib/sql-uuid.js';
import { entryFromStats, type SummaryEntry } from './lib/summary.js';

export const description = "One user's export and erasure through the job queue at 1k and at 1M users (with millions of audit events), with EXPLAIN plans";

const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
/** An export or erasure job of one user well under a second at any size (aim). */
const AIM_MS = 500;
const BASE_MS = Date.UTC(2025, 0, 1);
/** Users 0..MEASURED-1 are the measured ones: each has HEAVY_TRAIL events of its own beyond the spread. */
const MEASURED = 8;

function readConfig() {
  return {
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench_data',
    users: Math.floor(envNumber('BENCH_USERS', 1_000_000, 2_000)),
    eventsPerUser: envNumber('BENCH_EVENTS_PER_USER', 3, 0),
    heavyTrail: Math.floor(envNumber('BENCH_HEAVY_TRAIL', 1_000, 0)),
    rounds: Math.floor(envNumber('BENCH_ROUNDS', 5, 1)),
    batch: 200_000,
  };
}
type Config = ReturnType<typeof readConfig>;

const userId = (j: string) => uuidv7Sql('gatehouse-bench-dr-user:', { ms: `(${BASE_MS}::bigint + ${j})`, j });

/** Users j in [from, to): an email, names, metadata, a password-less account (no hashing cost). */
async function seedUsers(db: Database['db'], env: string, from: number, to: number) {
  await sql.raw(`
    insert into users (environment_id, id, email, email_verified_at, name, first_name, last_name, status, registration_state,
      public_metadata, private_metadata, unsafe_metadata, created_at, updated_at)
    select '${env}'::uuid, ${userId('j')}, 'user' || j || '@example.com', now(), 'User ' || j, 'User', '' || j, 'active', 'complete',
      '{"plan": "pro"}', '{"risk": "low"}', '{}', to_timestamp((${BASE_MS} + j) / 1000.0), now()
    from generate_series(${from}::bigint, ${to - 1}::bigint) j`).execute(db);
  // One session each, with the IP and user agent an export lists and an erasure removes.
  await sql.raw(`
    insert into sessions (environment_id, id, user_id, token_hash, ip_address, user_agent, created_at, last_active_at, idle_timeout_seconds, expires_at)
    select '${env}'::uuid, ${uuidv7Sql('gatehouse-bench-dr-session:', { ms: `(${BASE_MS}::bigint + j)` })}, ${userId('j')},
      decode(md5('s' || j), 'hex'), '10.0.' || (j % 250) || '.' || (j % 200), 'Mozilla/5.0 bench', now(), now(), 604800, now() + interval '30 days'
    from generate_series(${from}::bigint, ${to - 1}::bigint) j`).execute(db);
}

/**
 * Invitations for users j in [from, to): one environment invitation each (accepted by the user for even j,
 * revoked for odd), and an organization invitation for every fifth, all in one organization.
 */
async function seedInvitations(db: Database['db'], env: string, organization: string, from: number, to: number) {
  await sql.raw(`
    insert into invitations (environment_id, id, email, status, token_hash, public_metadata, private_metadata, expires_at, created_at, updated_at,
      accepted_at, revoked_at, accepted_user_id)
    select '${env}'::uuid, ${uuidv7Sql('gatehouse-bench-dr-invitation:', { ms: `(${BASE_MS}::bigint + j)` })}, 'user' || j || '@example.com',
      case when j % 2 = 0 then 'ACCEPTED' else 'REVOKED' end, decode(md5('i' || j), 'hex'), '{}', '{}', now() + interval '30 days', now(), now(),
      case when j % 2 = 0 then now() end, case when j % 2 = 1 then now() end, case when j % 2 = 0 then ${userId('j')} end
    from generate_series(${from}::bigint, ${to - 1}::bigint) j`).execute(db);
  await sql.raw(`
    insert into organization_invitations (environment_id, id, organization_id, email, role, status, token_hash, expires_at, created_at, updated_at,
      accepted_at, accepted_user_id)
    select '${env}'::uuid, ${uuidv7Sql('gatehouse-bench-dr-org-invitation:', { ms: `(${BASE_MS}::bigint + j)` })}, '${organization}'::uuid,
      'user' || j || '@example.com', 'member', 'ACCEPTED', decode(md5('o' || j), 'hex'), now() + interval '30 days', now(), now(), now(), ${userId('j')}
    from generate_series(${from}::bigint, ${to - 1}::bigint) j where j % 5 = 0`).execute(db);
}

/**
 * Events k in [from, to): each names a user picked by hash over the first `users`: half the service's
 * own (the user as actor, with an IP), half the customer's (the user as a target). They take the
 * environment's next sequence numbers, as the app's events do.
 */
async function seedEvents(db: Database['db'], env: string, from: number, to: number, users: number, heavy: number) {
  const last = Number((await sql<{ n: string }>`select last_sequence as n from audit_sequences where environment_id = ${env}::uuid`.execute(db)).rows[0]!.n);
  const pick = `case when k < ${MEASURED * heavy} then k % ${MEASURED} else (hashint8extended(k, 7) & 9223372036854775807) % ${users} end`;
  await sql.raw(`
    insert into audit_events (environment_id, id, sequence, action, result, occurred_at, recorded_at, actor_type, actor_id, actor_impersonator_id,
      targets, ip_address, user_agent, producer, metadata, schema_version, correlation_id)
    select '${env}'::uuid, ${uuidv7Sql('gatehouse-bench-dr-event:', { ms: `(${BASE_MS}::bigint + k)`, j: 'k' })}, ${last} + 1 + (k - ${from}),
      case when k % 2 = 0 then 'user.signed_in' else 'document.shared' end, 'success',
      to_timestamp((${BASE_MS} + k) / 1000.0), to_timestamp((${BASE_MS} + k) / 1000.0),
      case when k % 2 = 0 then 'user' else 'service' end, case when k % 2 = 0 then u end, null,
      case when k % 2 = 0 then jsonb_build_array(jsonb_build_object('type', 'user', 'id', u::text))
           else jsonb_build_array(jsonb_build_object('type', 'document', 'id', 'doc_' || k), jsonb_build_object('type', 'user', 'id', u::text)) end,
      '10.1.' || (k % 250) || '.1', 'Mozilla/5.0 bench',
      case when k % 2 = 0 then '{"type": "gatehouse", "via": "client_api"}'::jsonb else '{"type": "secret_key", "keyId": "bench"}'::jsonb end,
      '{"bench": true}', 1, null
    from (select k, ${userId(`(${pick})`)} as u from generate_series(${from}::bigint, ${to - 1}::bigint) k) e`).execute(db);
  await sql`update audit_sequences set last_sequence = ${last + (to - from)} where environment_id = ${env}::uuid`.execute(db);
}

async function inBatches(total: number, from: number, batch: number, step: (a: number, b: number) => Promise<void>, label: string) {
  for (let a = from; a < total; a += batch) {
    await step(a, Math.min(total, a + batch));
    process.stdout.write(`\r  ${label}: ${Math.min(total, a + batch).toLocaleString('en-US')} / ${total.toLocaleString('en-US')}   `);
  }
  process.stdout.write('\n');
}

/** The export's statements as export-store.ts sends them, for EXPLAIN. */
const gatherStatements = (env: string, user: string) => ({
  auditEvents: `select id, sequence, action from audit_events where environment_id = '${env}'::uuid
    and (actor_id = '${user}'::uuid or targets @> '[{"type": "user", "id": "${user}"}]'::jsonb) order by sequence`,
  sessions: `select id, ip_address from sessions where environment_id = '${env}'::uuid and user_id = '${user}'::uuid order by id`,
  invitations: `select id from invitations where environment_id = '${env}'::uuid and (email = any('{user0@example.com}'::text[]) or accepted_user_id = '${user}'::uuid) order by id`,
  organizationInvitations: `select id from organization_invitations where environment_id = '${env}'::uuid and (email = any('{user0@example.com}'::text[]) or accepted_user_id = '${user}'::uuid) order by id`,
  identities: `select id from user_identities where environment_id = '${env}'::uuid and user_id = '${user}'::uuid order by id`,
});

async function explainAll(db: Database['db'], env: string, user: string) {
  const plans: Record<string, string> = {};
  for (const [name, statement] of Object.entries(gatherStatements(env, user))) {
    const { rows } = await sql.raw<{ 'QUERY PLAN': string }>(`explain (analyze, buffers, costs off, timing on) ${statement}`).execute(db);
    plans[name] = rows.map((r) => r['QUERY PLAN']).join('\n');
  }
  return plans;
}

interface Measured { exportMs: Stats; erasureMs: Stats; archiveBytes: number; trailEvents: number; plans: Record<string, string> }

/** Exports user 0 `rounds` times and erases users 1..rounds (each: the POST, then the job run to completion). */
async function measure(app: FastifyInstance, db: Database['db'], env: { id: string; secretKey: string }, config: Config, erasedFrom: number): Promise<Measured> {
  const ids = (await sql.raw<{ id: string }>(`select ${userId('j')} as id from generate_series(0, ${MEASURED - 1}) j order by j`).execute(db)).rows.map((r) => r.id);
  const post = async (user: string, body: object) => {
    const res = await app.inject({ method: 'POST', url: `/api/server/v1/users/${user}/data-requests`, headers: { authorization: `Bearer ${env.secretKey}` }, payload: body });
    if (res.statusCode !== 202) throw new Error(`data request: ${res.statusCode} ${res.body}`);
    return res.json<{ id: string }>();
  };
  const timedJob = async (user: string, body: object) => {
    const started = performance.now();
    const request = await post(user, body);
    const ran = await app.runJobs();
    if (ran !== 1) throw new Error(`expected one job, ran ${ran}`);
    return { ms: performance.now() - started, request };
  };
  const exportMs: number[] = [];
  let archiveBytes = 0;
  for (let i = 0; i < config.rounds; i++) {
    const { ms, request } = await timedJob(ids[0]!, { type: 'export' });
    exportMs.push(ms);
    archiveBytes = (await sql<{ n: number }>`select pg_column_size(archive)::int as n from data_requests where id = ${request.id}::uuid`.execute(db)).rows[0]!.n;
  }
  const trailEvents = (await sql<{ n: number }>`select count(*)::int as n from audit_events where environment_id = ${env.id}::uuid
    and (actor_id = ${ids[0]}::uuid or targets @> ${JSON.stringify([{ type: 'user', id: ids[0] }])}::jsonb)`.execute(db)).rows[0]!.n;
  const plans = await explainAll(db, env.id, ids[0]!);
  const erasureMs: number[] = [];
  for (let i = 0; i < Math.min(config.rounds, MEASURED / 2 - 1); i++) {
    erasureMs.push((await timedJob(ids[erasedFrom + i]!, { type: 'erasure', graceDays: 0 })).ms);
  }
  return { exportMs: statsOf(exportMs), erasureMs: statsOf(erasureMs), archiveBytes, trailEvents, plans };
}

const fmt = (s: Stats) => `${s.median.toFixed(1)} ms (${s.min.toFixed(1)}–${s.max.toFixed(1)}, ${s.values.length} runs)`;

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  console.log(machineLine());
  console.log(`database: ${redact(config.databaseUrl)} (recreated)`);
  await recreateDatabase(config.databaseUrl);
  const database = await openDatabase({ url: config.databaseUrl, poolSize: 4, limits: { statementTimeoutMs: 3_600_000, lockTimeoutMs: 60_000 } });
  try {
    await migrate(database.db);
    const app = await buildApp({
      db: database.db, clock: createTestClock(), publicPort: 3000, adminToken: ADMIN_TOKEN, logLevel: 'warn',
      encryptionKey: Buffer.from(BENCH_ENCRYPTION_KEY, 'base64'), jobsInBackground: false,
    });
    await app.ready();
    try {
      const created = await app.inject({ method: 'POST', url: '/api/admin/v1/environments', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'bench' } });
      const env = created.json<{ id: string; secretKey: string }>();
      const organization = (await app.inject({ method: 'POST', url: '/api/server/v1/organizations', headers: { authorization: `Bearer ${env.secretKey}` }, payload: { name: 'Acme' } }))
        .json<{ id: string }>().id;
      const small = 1_000;
      const seedTo = async (users: number, fromUsers: number, fromEvents: number) => {
        const started = performance.now();
        await inBatches(users, fromUsers, config.batch, (a, b) => seedUsers(database.db, env.id, a, b), 'users and sessions');
        await inBatches(users, fromUsers, config.batch, (a, b) => seedInvitations(database.db, env.id, organization, a, b), 'invitations');
        const events = Math.round(users * config.eventsPerUser) + MEASURED * config.heavyTrail;
        await inBatches(events, fromEvents, config.batch, (a, b) => seedEvents(database.db, env.id, a, b, users, config.heavyTrail), 'audit events');
        await sql`vacuum analyze`.execute(database.db);
        console.log(`  seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
        return events;
      };
      console.log(`\nseeding ${small.toLocaleString('en-US')} users`);
      const smallEvents = await seedTo(small, 0, 0);
      const atSmall = await measure(app, database.db, env, config, 1);
      console.log(`\nseeding up to ${config.users.toLocaleString('en-US')} users`);
      // The events seeded so far stay; the rest spread over every user.
      const largeEvents = await seedTo(config.users, small, smallEvents);
      const atLarge = await measure(app, database.db, env, config, MEASURED / 2);
      const sizes = (await sql<{ table: string; rows: number; mib: number }>`
        select relname as table, n_live_tup::bigint as rows, (pg_total_relation_size(relid) / 1048576)::int as mib
        from pg_stat_user_tables where relname in ('users', 'sessions', 'audit_events', 'invitations', 'organization_invitations') order by relname`.execute(database.db)).rows;

      console.log('\n| Environment | Audit events | User 0\'s trail | Export job (POST → ready) | Erasure job (POST → completed) | Archive |');
      console.log('|---|---:|---:|---|---|---:|');
      for (const [label, events, m] of [[small, smallEvents, atSmall], [config.users, largeEvents, atLarge]] as const) {
        console.log(`| ${label.toLocaleString('en-US')} users | ${events.toLocaleString('en-US')} | ${m.trailEvents.toLocaleString('en-US')} | ${fmt(m.exportMs)} | ${fmt(m.erasureMs)} | ${(m.archiveBytes / 1024).toFixed(0)} KiB |`);
      }
      console.log('\n| Table | Rows | Size |\n|---|---:|---:|');
      for (const row of sizes) console.log(`| ${row.table} | ${Number(row.rows).toLocaleString('en-US')} | ${row.mib} MiB |`);
      for (const [label, m] of [[`${small.toLocaleString('en-US')} users`, atSmall], [`${config.users.toLocaleString('en-US')} users`, atLarge]] as const) {
        console.log(`\n### Plans at ${label}\n`);
        for (const [name, plan] of Object.entries(m.plans)) console.log(`${name}:\n\`\`\`\n${plan}\n\`\`\``);
      }
      return [
        entryFromStats('export job, 1k users', atSmall.exportMs, 'ms', { op: '<=', value: AIM_MS }),
        entryFromStats(`export job, ${config.users.toLocaleString('en-US')} users`, atLarge.exportMs, 'ms', { op: '<=', value: AIM_MS }),
        entryFromStats(`erasure job, ${config.users.toLocaleString('en-US')} users`, atLarge.erasureMs, 'ms', { op: '<=', value: AIM_MS }),
      ];
    } finally {
      await app.close();
    }
  } finally {
    await database.close();
  }
}

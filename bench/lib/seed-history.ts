/**
 * The history bench's data, straight into PostgreSQL with INSERT … SELECT FROM generate_series. What a live
 * environment holds besides its users and invitations (a session per user, recent audit events), and what
 * it accumulates: rows that are spent but still kept, each within its retention (migration 0015 and the
 * housekeeping in src/app.ts), so they are what a running service really carries.
 */
import pg from 'pg';
import { DOMAINS, PLANS, TAGS, TEAMS } from './seed-invitations.js';
import { uuidv7Sql } from './sql-uuid.js';

const DAY_MS = 86_400_000;
/** A non-negative pseudo-random bigint of row j, one sequence per seed (as bench/lib/seed-invitations.ts draws its values). */
const hashSql = (seed: number) => `(hashint8extended(j, ${seed}) & 9223372036854775807)`;
/** Tag `offset` places after row j's first tag, as the live invitations draw 2 or 3 of them. */
const tag = (offset: number) => `(ARRAY[${TAGS.map((t) => `'${t}'`).join(', ')}])[1 + ((${hashSql(3)} + ${offset}) % ${TAGS.length})::int]`;
const HOUR_MS = 3_600_000;

/** The environment's user ids in id order, so row j can name user j mod n. */
const USERS_CTE = `u AS (SELECT array_agg(id ORDER BY id) AS ids FROM users WHERE environment_id = $1::uuid)`;
const userOf = (j: string) => `u.ids[1 + (${j} % cardinality(u.ids))::int]`;

/** Every statement: $1 environment, $2 first ms, $3 ms step, $4/$5 the j range; row j is at ms = $2 + j × $3. */
const ROWS = `FROM generate_series($4::bigint, $5::bigint - 1) AS j, LATERAL (SELECT $2::bigint + j * $3::bigint AS ms) t, u`;

const SESSION_COLUMNS = 'environment_id, id, user_id, token_hash, actor, ip_address, user_agent, created_at, last_active_at, idle_timeout_seconds, expires_at, revoked_at';

/** Live sessions, a week long, started over the last day. */
const LIVE_SESSIONS_SQL = `WITH ${USERS_CTE}
INSERT INTO sessions (${SESSION_COLUMNS})
SELECT $1::uuid, ${uuidv7Sql('bench-live-session:')}, ${userOf('j')}, sha256(convert_to('bench-live-session:' || j, 'UTF8')), NULL,
  '203.0.113.' || (j % 250), 'Mozilla/5.0 (bench)', to_timestamp(ms / 1000.0), to_timestamp(ms / 1000.0) + interval '5 minutes', 604800,
  to_timestamp(ms / 1000.0) + interval '7 days', NULL
${ROWS}`;

/** Ended sessions: the even rows revoked an hour after they started, the odd ones expired at ms (a week after they started). */
const ENDED_SESSIONS_SQL = `WITH ${USERS_CTE}
INSERT INTO sessions (${SESSION_COLUMNS})
SELECT $1::uuid, ${uuidv7Sql('bench-ended-session:', { ms: 'started' })}, ${userOf('j')}, sha256(convert_to('bench-ended-session:' || j, 'UTF8')), NULL,
  '198.51.100.' || (j % 250), 'Mozilla/5.0 (bench)', to_timestamp(started / 1000.0), to_timestamp(started / 1000.0) + interval '10 minutes', 604800,
  to_timestamp(started / 1000.0) + interval '7 days', CASE WHEN j % 2 = 0 THEN to_timestamp(started / 1000.0) + interval '1 hour' END
${ROWS}, LATERAL (SELECT CASE WHEN j % 2 = 0 THEN ms ELSE ms - 7 * ${DAY_MS} END AS started) s`;

/** Sign-ins, sign-outs and profile changes, as the service's own trail records them; row j takes sequence number $6 + j. */
const AUDIT_EVENTS_SQL = `WITH ${USERS_CTE}
INSERT INTO audit_events (environment_id, id, sequence, action, result, occurred_at, recorded_at, actor_type, actor_id, actor_impersonator_id,
  targets, ip_address, user_agent, producer, metadata, schema_version, correlation_id)
SELECT $1::uuid, ${uuidv7Sql('bench-audit-event:')}, $6::bigint + j, (ARRAY['user.signed_in', 'session.revoked', 'user.updated'])[1 + (j % 3)::int], 'success',
  to_timestamp(ms / 1000.0), to_timestamp(ms / 1000.0), 'user', ${userOf('j')}, NULL,
  jsonb_build_array(jsonb_build_object('type', 'user', 'id', ${userOf('j')}), jsonb_build_object('type', 'session', 'id', md5('bench-audit-session:' || j)::uuid)),
  '203.0.113.' || (j % 250), 'Mozilla/5.0 (bench)', '{"type": "gatehouse", "via": "client"}'::jsonb, jsonb_build_object('method', 'password'), 1, NULL
${ROWS}`;

/** Spent fixed windows of the limits sign-in, sign-up and mail use; every thousandth the bench's own sign-in bucket (127.0.0.1). */
const RATE_LIMIT_WINDOWS_SQL = `WITH ${USERS_CTE}
INSERT INTO rate_limit_windows (environment_id, bucket, window_start, count)
SELECT $1::uuid, CASE
    WHEN j % 1000 = 0 THEN 'sign_in_failures:ip:127.0.0.1'
    WHEN j % 4 = 0 THEN 'sign_in_failures:ip:10.' || ((j >> 16) & 255) || '.' || ((j >> 8) & 255) || '.' || (j & 255)
    WHEN j % 4 = 1 THEN 'sign_up:ip:10.' || ((j >> 16) & 255) || '.' || ((j >> 8) & 255) || '.' || (j & 255)
    WHEN j % 4 = 2 THEN 'verify_email_send:email:user' || (j % cardinality(u.ids)) || '@bench.example.com'
    ELSE 'code_failures:user:' || ${userOf('j')}
  END, to_timestamp(ms / 1000.0), 1 + (j % 5)::int
${ROWS}`;

/** Delivered mail: the bodies cleared on delivery, as the worker does. */
const DELIVERED_MAIL_SQL = `WITH ${USERS_CTE}
INSERT INTO outbox_messages (environment_id, id, to_address, subject, text_body, html_body, created_at, status, attempts, next_attempt_at, last_error, finished_at)
SELECT $1::uuid, ${uuidv7Sql('bench-outbox:')}, 'user' || (j % cardinality(u.ids)) || '@bench.example.com', '', '', '',
  to_timestamp(ms / 1000.0), 'sent', 1, NULL, NULL, to_timestamp(ms / 1000.0) + interval '2 seconds'
${ROWS}`;

/** One used email code per user (the primary key allows one per purpose), expired within the day the sweep keeps it. */
const USED_CODES_SQL = `
INSERT INTO verification_codes (environment_id, user_id, purpose, code_hash, attempts, created_at, expires_at, used_at)
SELECT environment_id, id, 'verify_email', sha256(convert_to('bench-code:' || id, 'UTF8')), 0,
  now() - interval '20 hours', now() - interval '19 hours', now() - interval '20 hours' + interval '5 minutes'
FROM users WHERE environment_id = $1::uuid`;

/**
 * Invitations that were accepted (50%), expired (30%) or revoked (20%), with metadata of the same shape as the
 * seeded live ones (bench/lib/seed-invitations.ts), to `past<n>@<domain>`. Their teams (team-2000 to team-3999)
 * and CRM ids are not the live ones, so a search for a live team or address gets the same answer with and
 * without the history: the bench compares the cost of one answer, not of a larger one.
 */
const PAST_INVITATIONS_SQL = `
INSERT INTO invitations (environment_id, id, email, status, token_hash, redirect_url, public_metadata, private_metadata,
  expires_at, created_at, updated_at, accepted_at, revoked_at, accepted_user_id)
SELECT $1::uuid, ${uuidv7Sql('bench-past-invitation:')}, 'past' || j || '@' || ($6::text[])[1 + (j % array_length($6::text[], 1))::int], status,
  sha256(convert_to('bench-past-invitation:' || j, 'UTF8')), NULL,
  jsonb_build_object('plan', (ARRAY[${PLANS.map((p) => `'${p}'`).join(', ')}])[1 + (${hashSql(2)} % ${PLANS.length})::int], 'team', 'team-' || (${TEAMS} + j % ${TEAMS}),
    'tags', CASE WHEN ${hashSql(4)} % 2 = 0 THEN jsonb_build_array(${tag(0)}, ${tag(3)}) ELSE jsonb_build_array(${tag(0)}, ${tag(3)}, ${tag(7)}) END,
    'level', ${hashSql(5)} % 10),
  jsonb_build_object('crm', jsonb_build_object('id', 'past-' || j)),
  to_timestamp(ms / 1000.0) + interval '30 days', to_timestamp(ms / 1000.0), to_timestamp(ms / 1000.0) + interval '1 day',
  CASE WHEN status = 'ACCEPTED' THEN to_timestamp(ms / 1000.0) + interval '1 day' END,
  CASE WHEN status = 'REVOKED' THEN to_timestamp(ms / 1000.0) + interval '1 day' END,
  CASE WHEN status = 'ACCEPTED' THEN md5('bench-past-invitee:' || j)::uuid END
FROM generate_series($4::bigint, $5::bigint - 1) AS j, LATERAL (SELECT $2::bigint + j * $3::bigint AS ms,
  CASE WHEN j % 10 < 5 THEN 'ACCEPTED' WHEN j % 10 < 8 THEN 'EXPIRED' ELSE 'REVOKED' END AS status) t`;

interface Span { fromMs: number; toMs: number }

/** Runs a row-numbered statement over `count` rows spread evenly over `span`, in chunks, two at a time. */
async function insertRows(pool: pg.Pool, environmentId: string, sql: string, count: number, span: Span, extra: unknown[] = []) {
  const step = Math.max(1, Math.floor((span.toMs - span.fromMs) / Math.max(1, count)));
  const chunk = 100_000;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const start = next;
      next = Math.min(count, start + chunk);
      await pool.query(sql, [environmentId, span.fromMs, step, start, next, ...extra]);
    }
  };
  await Promise.all([worker(), worker()]);
}

const ago = (ms: number) => Date.now() - ms;

/** The environment's audit counter, so appended events can take the numbers after it. */
async function lastSequence(pool: pg.Pool, environmentId: string): Promise<number> {
  const { rows } = await pool.query<{ last: string }>('select coalesce(max(last_sequence), 0) as last from audit_sequences where environment_id = $1', [environmentId]);
  return Number(rows[0].last);
}

async function raiseSequence(pool: pg.Pool, environmentId: string, last: number) {
  await pool.query(`insert into audit_sequences (environment_id, last_sequence) values ($1, $2)
    on conflict (environment_id) do update set last_sequence = greatest(audit_sequences.last_sequence, excluded.last_sequence)`, [environmentId, last]);
}

/**
 * What both databases hold besides users and invitations: a live session per user and an audit event per
 * user over the last 30 days. The events take numbers after `reservedEvents` left free, where the history's
 * older events go, so that sequence order stays time order in both databases.
 */
export async function seedLiveRows(pool: pg.Pool, environmentId: string, users: number, reservedEvents: number) {
  await insertRows(pool, environmentId, LIVE_SESSIONS_SQL, users, { fromMs: ago(DAY_MS), toMs: ago(60_000) });
  const firstFreeSequence = (await lastSequence(pool, environmentId)) + 1;
  const first = firstFreeSequence + reservedEvents;
  await insertRows(pool, environmentId, AUDIT_EVENTS_SQL, users, { fromMs: ago(30 * DAY_MS), toMs: ago(60_000) }, [first]);
  await raiseSequence(pool, environmentId, first + users - 1);
  return { firstFreeSequence };
}

export interface HistoryOptions {
  environmentId: string;
  /** Rows per table: sessions, audit events, rate-limit windows and mail (10 × the users by default). */
  rows: number;
  invitations: number;
  /** Where seedLiveRows left room for the older audit events. */
  firstFreeSequence: number;
  onProgress?: (table: string, seconds: number) => void;
}

/** Adds the history to one database. Each kind is dated within what the retention keeps (GATEHOUSE_RETENTION_* defaults). */
export async function seedHistory(pool: pg.Pool, options: HistoryOptions): Promise<Record<string, number>> {
  const { environmentId, rows } = options;
  const steps: [string, () => Promise<unknown>][] = [
    // Ended within the 30 days sessions are kept after they end.
    ['sessions', () => insertRows(pool, environmentId, ENDED_SESSIONS_SQL, rows, { fromMs: ago(29 * DAY_MS), toMs: ago(HOUR_MS) })],
    // Kept for good by default (auditRetentionDays null): the three years before the live month.
    ['audit_events', () => insertRows(pool, environmentId, AUDIT_EVENTS_SQL, rows, { fromMs: ago(3 * 365 * DAY_MS), toMs: ago(31 * DAY_MS) }, [options.firstFreeSequence])],
    // Windows are swept two days after they start.
    ['rate_limit_windows', () => insertRows(pool, environmentId, RATE_LIMIT_WINDOWS_SQL, rows, { fromMs: ago(47 * HOUR_MS), toMs: ago(2 * HOUR_MS) })],
    // Delivered mail is kept 7 days.
    ['outbox_messages', () => insertRows(pool, environmentId, DELIVERED_MAIL_SQL, rows, { fromMs: ago(7 * DAY_MS - HOUR_MS), toMs: ago(HOUR_MS) })],
    ['verification_codes', () => pool.query(USED_CODES_SQL, [environmentId])],
    // Invitations are never swept: the four years before the live ones (seeded over the last 400 days).
    ['invitations', () => insertRows(pool, environmentId, PAST_INVITATIONS_SQL, options.invitations, { fromMs: ago(4 * 365 * DAY_MS), toMs: ago(401 * DAY_MS) }, [DOMAINS])],
  ];
  const seconds: Record<string, number> = {};
  for (const [table, step] of steps) {
    const started = performance.now();
    await step();
    seconds[table] = (performance.now() - started) / 1000;
    options.onProgress?.(table, seconds[table]);
  }
  return seconds;
}

/** Statistics, visibility map and GIN pending lists as after a quiet night; then the seeding's dirty pages flushed. */
export async function settle(pool: pg.Pool) {
  await pool.query('VACUUM ANALYZE');
  await pool.query('CHECKPOINT').catch(() => undefined);
}

/** Rows and on-disk size (with indexes and TOAST) of the tables the history grows. */
export async function tableSizes(pool: pg.Pool): Promise<Record<string, { rows: number; bytes: number }>> {
  const tables = ['users', 'sessions', 'audit_events', 'rate_limit_windows', 'outbox_messages', 'verification_codes', 'invitations'];
  const sizes: Record<string, { rows: number; bytes: number }> = {};
  for (const table of tables) {
    const { rows } = await pool.query<{ n: string; bytes: string }>(`select count(*) as n, pg_total_relation_size('${table}') as bytes from ${table}`);
    sizes[table] = { rows: Number(rows[0].n), bytes: Number(rows[0].bytes) };
  }
  return sizes;
}

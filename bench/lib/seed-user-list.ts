import pg from 'pg';
import { hashPassword } from '../../src/platform/crypto/passwords.js';

/*
 * The value distributions of the users-list bench. Every bench filter names one of these, and the share
 * it matches follows from the tables below (the bench counts the real matches with SQL anyway).
 */
export const FIRST_NAMES = ['ada', 'alan', 'grace', 'linus', 'barbara', 'edsger', 'margaret', 'dennis', 'frances', 'ken',
  'radia', 'niklaus', 'karen', 'john', 'hedy', 'tim', 'sophie', 'donald', 'anita', 'guido', 'mary', 'bjarne', 'jean', 'james',
  'shafi', 'leslie', 'carol', 'peter', 'lynn', 'robert', 'ida', 'andrew', 'joan', 'brian', 'mina', 'yukihiro', 'olga', 'rasmus',
  'annie', 'larry', 'susan', 'bill', 'elena', 'vint', 'dana', 'whitfield', 'kathleen', 'ivan', 'evelyn', 'ward'];
export const LAST_NAMES = ['lovelace', 'turing', 'hopper', 'torvalds', 'liskov', 'dijkstra', 'hamilton', 'ritchie', 'allen', 'thompson',
  'perlman', 'wirth', 'jones', 'backus', 'lamarr', 'berners', 'wilson', 'knuth', 'borg', 'rossum', 'keller', 'stroustrup', 'sammet',
  'gosling', 'goldwasser', 'lamport', 'shaw', 'naur', 'conway', 'kahn', 'rhodes', 'tanenbaum', 'clarke', 'kernighan', 'rees',
  'matsumoto', 'taussky', 'lerdorf', 'easley', 'page', 'kare', 'joy', 'nikolaeva', 'cerf', 'scott', 'diffie', 'booth', 'sutherland',
  'berezin', 'cunningham'];
/** Mail providers and the percentage of users on each; the other 38% are on company domains. */
export const PROVIDERS: [string, number][] = [['gmail.com', 35], ['yahoo.com', 10], ['outlook.com', 8], ['hotmail.com', 5], ['icloud.com', 4]];
/** Company domains are `<word><k>.com`, k < COMPANY_NUMBERS: 4,000 domains, each word in 1.9% of the emails. */
export const COMPANY_WORDS = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'wayne', 'stark', 'tyrell', 'cyberdyne', 'soylent',
  'wonka', 'oscorp', 'vandelay', 'dunder', 'aperture', 'massive', 'gringotts', 'monarch', 'sirius', 'nakatomi'];
export const COMPANY_NUMBERS = 200;
/** Public `plan` and its percentages. */
export const PLANS: [string, number][] = [['free', 60], ['pro', 25], ['team', 10], ['enterprise', 5]];
/** 1% of users are in a beta `cohort`, one of COHORTS: each cohort is 0.01% of the users. */
export const COHORTS = 100;
/** Statuses per mille: the rest are active. */
export const BANNED_PER_MILLE = 10;
export const DELETED_PER_MILLE = 1;
/** Private `risk: "high"` per mille; the others are "low". */
export const HIGH_RISK_PER_MILLE = 10;
/** The newest RECENT_PERCENT of each environment's users carry `app: "v2"` (a value that follows signup time). */
export const RECENT_PERCENT = 10;

export interface UserListSeedOptions {
  databaseUrl: string;
  targetEnvironmentId: string;
  noiseEnvironmentId: string;
  /** Users in the target environment. */
  count: number;
  /** Users in the noise environment (same distributions), interleaved with the target's. */
  noiseCount: number;
  rowsPerStatement?: number;
  concurrency?: number;
  /** SQL run after the rows and indexes are in, before VACUUM ANALYZE: to try an index or a statistics target. */
  setupSql?: string;
  onProgress?: (done: number, total: number) => void;
}

export interface SeededUserList {
  seconds: number;
  insertSeconds: number;
  indexSeconds: number;
  vacuumSeconds: number;
  tableBytes: number;
  indexBytes: Record<string, number>;
}

const sqlList = (values: string[]) => `ARRAY[${values.map((v) => `'${v}'`).join(', ')}]`;
const hash = (seed: number) => `(hashint8extended(j, ${seed}) & 9223372036854775807)`;

/** `CASE` picking a label from a percentage table by a number 0..99. */
function byPercent(table: [string, number][], h: string, otherwise: string): string {
  let upTo = 0;
  const arms = table.map(([label, pct]) => { upTo += pct; return `WHEN ${h} < ${upTo} THEN '${label}'`; });
  return `CASE ${arms.join(' ')} ELSE ${otherwise} END`;
}

/*
 * One statement seeds rows $5 <= j < $6 of a global sequence of T = N + M rows, N target and M noise rows
 * interleaved evenly (row j is a target row when floor((j+1)N/T) > floor(jN/T)), so heap pages and index
 * entries mix the environments as live sign-ups would. Values are deterministic functions of j
 * (hashint8extended, one seed per attribute), except n, the row's number within its environment, which
 * makes emails unique and places `app: "v2"` on each environment's newest users.
 *
 * ids: UUIDv7 layout with the millisecond strictly increasing in j, so ids sort in insertion order like
 * the app's uuidv7(). $1 target env, $2 noise env, $3 N, $4 T, $5/$6 the j range, $7 base ms, $8 ms step,
 * $9 now, $10 password hash, $11 M.
 */
const INSERT_SQL = `
INSERT INTO users (environment_id, id, email, email_verified_at, password_hash, name, first_name, last_name, locale, status,
  registration_state, public_metadata, private_metadata, unsafe_metadata, failed_sign_ins, locked_until, created_at, updated_at, deleted_at)
WITH s AS (
  SELECT j, (j * $3::bigint) / $4::bigint AS before, ((j + 1) * $3::bigint) / $4::bigint AS through
  FROM generate_series($5::bigint, $6::bigint - 1) AS j
), r AS (
  SELECT j,
    through > before AS target,
    CASE WHEN through > before THEN before ELSE j - before END AS n,
    $7::bigint + j * $8::bigint AS ms,
    md5('gatehouse-bench-user:' || j) AS rnd,
    ${hash(1)} % 1000 AS h_status,
    ${hash(2)} AS h_name,
    ${hash(3)} % 100 AS h_provider,
    ${hash(4)} % ${COMPANY_WORDS.length * COMPANY_NUMBERS} AS h_company,
    ${hash(5)} % 100 AS h_plan,
    ${hash(6)} % ${COHORTS * 100} AS h_cohort,
    ${hash(7)} % 1000 AS h_risk,
    ${hash(8)} % 10 AS h_misc,
    ${hash(9)} % 200 AS h_locked
  FROM s
), v AS (
  SELECT r.*,
    CASE WHEN target THEN $1::uuid ELSE $2::uuid END AS env,
    CASE WHEN target THEN $3::bigint ELSE $11::bigint END AS env_size,
    to_timestamp(ms / 1000.0) AS created_at,
    (${sqlList(FIRST_NAMES)})[1 + (h_name % ${FIRST_NAMES.length})::int] AS first_name,
    (${sqlList(LAST_NAMES)})[1 + ((h_name / ${FIRST_NAMES.length}) % ${LAST_NAMES.length})::int] AS last_name,
    ${byPercent(PROVIDERS, 'h_provider', `(${sqlList(COMPANY_WORDS)})[1 + (h_company % ${COMPANY_WORDS.length})::int] || (h_company / ${COMPANY_WORDS.length}) || '.com'`)} AS domain,
    CASE WHEN h_status < ${BANNED_PER_MILLE} THEN 'banned' WHEN h_status < ${BANNED_PER_MILLE + DELETED_PER_MILLE} THEN 'deleted' ELSE 'active' END AS status
  FROM r
)
SELECT env,
  (lpad(to_hex(ms), 12, '0') || '7' || substr(rnd, 1, 3) || (ARRAY['8', '9', 'a', 'b'])[1 + (j % 4)::int] || substr(rnd, 4, 15))::uuid,
  first_name || '.' || last_name || n || '@' || domain,
  created_at,
  $10::text,
  initcap(first_name) || ' ' || initcap(last_name), initcap(first_name), initcap(last_name),
  CASE WHEN h_misc < 7 THEN 'en' WHEN h_misc < 9 THEN 'da' END,
  status,
  'complete',
  jsonb_build_object('plan', ${byPercent(PLANS, 'h_plan', "'free'")}, 'onboarding', jsonb_build_object('completed', h_misc < 8))
    || CASE WHEN h_cohort < ${COHORTS} THEN jsonb_build_object('cohort', 'c-' || h_cohort) ELSE '{}'::jsonb END
    || CASE WHEN n * 100 >= env_size * ${100 - RECENT_PERCENT} THEN '{"app": "v2"}'::jsonb ELSE '{}'::jsonb END,
  jsonb_build_object('stripeCustomerId', 'cus_' || substr(rnd, 17, 14), 'risk', CASE WHEN h_risk < ${HIGH_RISK_PER_MILLE} THEN 'high' ELSE 'low' END),
  jsonb_build_object('theme', CASE WHEN h_misc < 3 THEN 'dark' ELSE 'light' END),
  CASE WHEN h_locked = 0 AND status = 'active' THEN 10 ELSE 0 END,
  CASE WHEN h_locked = 0 AND status = 'active' THEN $9::timestamptz + interval '1 hour' END,
  created_at,
  CASE WHEN status = 'active' THEN created_at ELSE created_at + interval '1 day' END,
  CASE WHEN status = 'deleted' THEN created_at + interval '1 day' END
FROM v`;

async function secondaryIndexes(pool: pg.Pool): Promise<{ name: string; def: string }[]> {
  const { rows } = await pool.query<{ name: string; def: string }>(`
    select i.relname as name, pg_get_indexdef(i.oid) as def
    from pg_index x join pg_class i on i.oid = x.indexrelid
    where x.indrelid = 'users'::regclass and not exists (select 1 from pg_constraint c where c.conindid = i.oid)
    order by i.relname`);
  return rows;
}

async function sizes(pool: pg.Pool) {
  const { rows } = await pool.query<{ name: string; bytes: string }>(`
    select c.relname as name, pg_relation_size(c.oid) as bytes from pg_class c
    where c.oid = 'users'::regclass or c.oid in (select indexrelid from pg_index where indrelid = 'users'::regclass)`);
  const indexBytes: Record<string, number> = {};
  let tableBytes = 0;
  for (const row of rows) {
    if (row.name === 'users') tableBytes = Number(row.bytes);
    else indexBytes[row.name] = Number(row.bytes);
  }
  return { tableBytes, indexBytes };
}

/**
 * Seeds users straight into PostgreSQL with INSERT … SELECT FROM generate_series, in chunks, with the
 * secondary indexes dropped during the insert and re-created from their own definitions afterwards
 * (several times faster than maintaining GIN indexes row by row); then VACUUM ANALYZE and CHECKPOINT.
 */
export async function seedUserList(options: UserListSeedOptions): Promise<SeededUserList> {
  const started = performance.now();
  const { count, noiseCount } = options;
  const total = count + noiseCount;
  const rowsPerStatement = options.rowsPerStatement ?? 100_000;
  const concurrency = options.concurrency ?? 2;
  const now = new Date();
  // Signed up over the last three years, one row every `step` ms (at least 1, so ids stay strictly ordered).
  const step = Math.max(1, Math.floor((3 * 365 * 86_400_000) / total));
  const base = now.getTime() - 60_000 - step * total;
  // Nobody signs in during the bench: one real argon2id hash gives the rows their real width.
  const passwordHash = await hashPassword('bench-Password-42!');

  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: concurrency });
  try {
    const dropped = await secondaryIndexes(pool);
    for (const index of dropped) await pool.query(`DROP INDEX ${pg.escapeIdentifier(index.name)}`);

    let nextStart = 0;
    let done = 0;
    const worker = async () => {
      while (nextStart < total) {
        const start = nextStart;
        const end = Math.min(total, start + rowsPerStatement);
        nextStart = end;
        await pool.query(INSERT_SQL, [options.targetEnvironmentId, options.noiseEnvironmentId, count, total, start, end, base, step, now, passwordHash, noiseCount]);
        done += end - start;
        options.onProgress?.(done, total);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const inserted = performance.now();

    const client = await pool.connect();
    try {
      // One client, so the SET applies to every CREATE INDEX.
      await client.query(`SET maintenance_work_mem = '512MB'`);
      for (const index of dropped) await client.query(index.def);
      if (options.setupSql) await client.query(options.setupSql);
    } finally {
      client.release();
    }
    const indexed = performance.now();

    await pool.query('VACUUM ANALYZE users');
    // Flush the seeding's dirty pages now rather than in a checkpoint during the first measurement.
    await pool.query('CHECKPOINT').catch(() => undefined);
    const vacuumed = performance.now();
    return {
      seconds: (vacuumed - started) / 1000, insertSeconds: (inserted - started) / 1000,
      indexSeconds: (indexed - inserted) / 1000, vacuumSeconds: (vacuumed - indexed) / 1000,
      ...await sizes(pool),
    };
  } finally {
    await pool.end();
  }
}

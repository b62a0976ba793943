import pg from 'pg';

/** 10 company names × 5 TLDs: every email domain, so one name (e.g. "acme") is in 10% of the emails. */
export const COMPANIES = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'wayne', 'stark', 'tyrell', 'cyberdyne', 'soylent'];
export const DOMAINS = COMPANIES.flatMap((c) => ['com', 'io', 'net', 'org', 'co.uk'].map((tld) => `${c}.${tld}`));
export const PLANS = ['free', 'starter', 'pro', 'business', 'enterprise'];
export const TEAMS = 2000;
export const TAGS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa'];
export const TIERS = ['bronze', 'silver', 'gold'];

export interface InvitationSeedOptions {
  databaseUrl: string;
  targetEnvironmentId: string;
  noiseEnvironmentIds: string[];
  /** Rows in the target environment. */
  count: number;
  /** Rows spread evenly over the noise environments. */
  noiseCount: number;
  /** Global rows per INSERT … SELECT statement. */
  rowsPerStatement?: number;
  concurrency?: number;
  /**
   * 'rebuild' (default): drop the table's secondary indexes, insert, then re-create them from their own
   * definitions (pg_get_indexdef), which is several times faster than maintaining three GIN indexes row
   * by row. 'live': insert with every index in place.
   */
  indexes?: 'rebuild' | 'live';
  /** Run after the rows and indexes are in, before VACUUM ANALYZE: to try an index or a statistics target. */
  setupSql?: string;
  onProgress?: (done: number, total: number) => void;
}

export interface SeededInvitations {
  seconds: number;
  insertSeconds: number;
  indexSeconds: number;
  vacuumSeconds: number;
  now: Date;
  tableBytes: number;
  indexBytes: Record<string, number>;
}

/*
 * One statement seeds rows $10 <= j < $11 of a global sequence of N + M rows, N target rows and M noise
 * rows interleaved evenly (Bresenham: row j is a target row when floor((j+1)N/T) > floor(jN/T)), so the
 * heap and the indexes mix environments as live traffic would. Every value is a deterministic function of
 * j (hashint8extended with a different seed per attribute), except the per-environment number n used in
 * emails, teams and CRM ids.
 *
 * ids: UUIDv7 layout (48-bit Unix ms, version 7, 12 random bits, variant, 62 random bits) with the
 * millisecond strictly increasing in j, so ids sort in insertion order like the app's uuidv7().
 *
 * $1 target env, $2 noise envs uuid[], $3 N, $4 T, $5 base ms, $6 ms step, $7 domains text[], $8 now,
 * $9 number of noise envs, $10/$11 the j range.
 */
const INSERT_SQL = `
INSERT INTO invitations (environment_id, id, email, status, token_hash, redirect_url, public_metadata, private_metadata,
  expires_at, created_at, updated_at, accepted_at, revoked_at, accepted_user_id)
WITH s AS (
  SELECT j, (j * $3::bigint) / $4::bigint AS before, ((j + 1) * $3::bigint) / $4::bigint AS through
  FROM generate_series($10::bigint, $11::bigint - 1) AS j
), r AS (
  SELECT j,
    CASE WHEN through > before THEN $1::uuid ELSE ($2::uuid[])[1 + ((j - before) % $9::int)::int] END AS env,
    CASE WHEN through > before THEN before ELSE (j - before) / $9::int END AS n,
    $5::bigint + j * $6::bigint AS ms,
    md5('gatehouse-bench-invitation:' || j) AS rnd,
    (hashint8extended(j, 1) & 9223372036854775807) % 100 AS h_status,
    (hashint8extended(j, 2) & 9223372036854775807) AS h_plan,
    (hashint8extended(j, 3) & 9223372036854775807) % 10 AS h_tag,
    (hashint8extended(j, 4) & 9223372036854775807) AS h_tags,
    (hashint8extended(j, 5) & 9223372036854775807) AS h_level,
    (hashint8extended(j, 6) & 9223372036854775807) AS h_domain,
    (hashint8extended(j, 7) & 9223372036854775807) AS h_tier,
    (hashint8extended(j, 8) & 9223372036854775807) % 10 AS h_overdue
  FROM s
), v AS (
  SELECT r.*,
    to_timestamp(ms / 1000.0) AS created_at,
    CASE WHEN h_status < 70 THEN 'PENDING' WHEN h_status < 85 THEN 'ACCEPTED' WHEN h_status < 95 THEN 'REVOKED' ELSE 'EXPIRED' END AS status
  FROM r
), w AS (
  SELECT v.*, ARRAY[${TAGS.map((t) => `'${t}'`).join(', ')}] AS tags,
    CASE
      WHEN status = 'PENDING' AND h_overdue <> 0 THEN $8::timestamptz + make_interval(days => 1 + (j % 30)::int)
      WHEN status = 'PENDING' THEN $8::timestamptz - make_interval(hours => 1 + (j % 72)::int)
      WHEN status = 'EXPIRED' THEN least(created_at + interval '30 days', $8::timestamptz - interval '1 hour')
      ELSE created_at + interval '30 days'
    END AS expires_at,
    CASE WHEN status = 'ACCEPTED' THEN created_at + make_interval(hours => 1 + (j % 48)::int) END AS accepted_at,
    CASE WHEN status = 'REVOKED' THEN created_at + make_interval(hours => 1 + (j % 48)::int) END AS revoked_at
  FROM v
)
SELECT env,
  (lpad(to_hex(ms), 12, '0') || '7' || substr(rnd, 1, 3) || (ARRAY['8', '9', 'a', 'b'])[1 + (j % 4)::int] || substr(rnd, 4, 15))::uuid,
  'user' || n || '@' || ($7::text[])[1 + (h_domain % array_length($7::text[], 1))::int],
  status,
  sha256(convert_to('gatehouse-bench-invitation-token:' || j, 'UTF8')),
  NULL,
  jsonb_build_object(
    'plan', (ARRAY[${PLANS.map((p) => `'${p}'`).join(', ')}])[1 + (h_plan % ${PLANS.length})::int],
    'team', 'team-' || (n % ${TEAMS}),
    'tags', CASE WHEN h_tags % 2 = 0
      THEN jsonb_build_array(tags[1 + h_tag::int], tags[1 + ((h_tag + 3) % 10)::int])
      ELSE jsonb_build_array(tags[1 + h_tag::int], tags[1 + ((h_tag + 3) % 10)::int], tags[1 + ((h_tag + 7) % 10)::int]) END,
    'level', h_level % 10),
  jsonb_build_object('crm', jsonb_build_object('id', n::text, 'tier', (ARRAY[${TIERS.map((t) => `'${t}'`).join(', ')}])[1 + (h_tier % ${TIERS.length})::int])),
  expires_at,
  created_at,
  coalesce(accepted_at, revoked_at, created_at),
  accepted_at,
  revoked_at,
  CASE WHEN status = 'ACCEPTED' THEN md5('gatehouse-bench-user:' || j)::uuid END
FROM w`;

/**
 * Seeds invitations straight into PostgreSQL with server-side INSERT … SELECT FROM generate_series, in
 * chunks, then VACUUM ANALYZE and CHECKPOINT (as seedUsers does).
 */
export async function seedInvitations(options: InvitationSeedOptions): Promise<SeededInvitations> {
  const started = performance.now();
  const { count, noiseCount, noiseEnvironmentIds } = options;
  if (noiseCount > 0 && noiseEnvironmentIds.length === 0) throw new Error('noise rows need noise environments');
  const total = count + noiseCount;
  const rowsPerStatement = options.rowsPerStatement ?? 100_000;
  const concurrency = options.concurrency ?? 2;
  const now = new Date();
  // Created over the last 400 days, one row every `step` ms (at least 1, so ids stay strictly ordered).
  const step = Math.max(1, Math.floor((400 * 86_400_000) / total));
  const base = now.getTime() - 60_000 - step * total;

  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: concurrency });
  try {
    const dropped: { name: string; def: string }[] = [];
    if ((options.indexes ?? 'rebuild') === 'rebuild') {
      const { rows } = await pool.query<{ name: string; def: string }>(`
        select i.relname as name, pg_get_indexdef(i.oid) as def
        from pg_index x join pg_class i on i.oid = x.indexrelid
        where x.indrelid = 'invitations'::regclass
          and not exists (select 1 from pg_constraint c where c.conindid = i.oid)
        order by i.relname`);
      for (const index of rows) {
        await pool.query(`DROP INDEX ${pg.escapeIdentifier(index.name)}`);
        dropped.push(index);
      }
    }

    let nextStart = 0;
    let done = 0;
    const worker = async () => {
      for (;;) {
        const start = nextStart;
        if (start >= total) return;
        const end = Math.min(total, start + rowsPerStatement);
        nextStart = end;
        await pool.query(INSERT_SQL, [
          options.targetEnvironmentId, noiseEnvironmentIds.length ? noiseEnvironmentIds : [options.targetEnvironmentId], count, total,
          base, step, DOMAINS, now, Math.max(1, noiseEnvironmentIds.length), start, end,
        ]);
        done += end - start;
        options.onProgress?.(done, total);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const inserted = performance.now();

    if (dropped.length) {
      // One client, so the SET applies to every CREATE INDEX.
      const client = await pool.connect();
      try {
        await client.query(`SET maintenance_work_mem = '512MB'`);
        for (const index of dropped) await client.query(index.def);
      } finally {
        client.release();
      }
    }
    if (options.setupSql) await pool.query(options.setupSql);
    const indexed = performance.now();

    await pool.query('VACUUM ANALYZE invitations');
    // Flush the seeding's dirty pages now rather than in a checkpoint during the first measurement.
    await pool.query('CHECKPOINT').catch(() => undefined);
    const vacuumed = performance.now();

    const sizes = await pool.query<{ name: string; bytes: string }>(`
      select c.relname as name, pg_relation_size(c.oid) as bytes
      from pg_class c where c.oid = 'invitations'::regclass
         or c.oid in (select indexrelid from pg_index where indrelid = 'invitations'::regclass)`);
    const indexBytes: Record<string, number> = {};
    let tableBytes = 0;
    for (const row of sizes.rows) {
      if (row.name === 'invitations') tableBytes = Number(row.bytes);
      else indexBytes[row.name] = Number(row.bytes);
    }
    return {
      seconds: (vacuumed - started) / 1000,
      insertSeconds: (inserted - started) / 1000,
      indexSeconds: (indexed - inserted) / 1000,
      vacuumSeconds: (vacuumed - indexed) / 1000,
      now, tableBytes, indexBytes,
    };
  } finally {
    await pool.end();
  }
}

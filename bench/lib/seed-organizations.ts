import pg from 'pg';
import { uuidv7Sql } from './sql-uuid.js';

/** Name words: an organization is "<Adjective> <Noun> <Kind> <n>", each word drawn by a hash of its row number. */
export const ADJECTIVES = ['Amber', 'Brisk', 'Crimson', 'Dapper', 'Eager', 'Frosty', 'Golden', 'Humble', 'Ivory', 'Jolly',
  'Keen', 'Lunar', 'Mellow', 'Nimble', 'Opal', 'Placid', 'Quiet', 'Rustic', 'Silver', 'Tidal'];
export const NOUNS = ['Falcon', 'Badger', 'Cedar', 'Delta', 'Ember', 'Fjord', 'Glacier', 'Harbor', 'Iris', 'Juniper',
  'Kestrel', 'Lagoon', 'Meadow', 'Nebula', 'Orchard', 'Pebble', 'Quarry', 'Raven', 'Summit', 'Thicket'];
export const KINDS = ['Labs', 'Group', 'Systems', 'Partners', 'Holdings'];

export interface OrganizationSeedOptions {
  databaseUrl: string;
  environmentId: string;
  organizations: number;
  /** Active users, all members of the first organization (row 0). */
  members: number;
  rowsPerStatement?: number;
  concurrency?: number;
  onProgress?: (what: string, done: number, total: number) => void;
}

export interface SeededOrganizations {
  /** The organization with every seeded user as a member. */
  bigOrganizationId: string;
  seconds: number;
  insertSeconds: number;
  vacuumSeconds: number;
  sizes: Record<string, number>;
}

const words = (list: string[]) => `(ARRAY[${list.map((w) => `'${w}'`).join(', ')}])`;

/** $1 environment, $2 base ms, $3 ms step, $4/$5 the j range. Slugs are unique: org-<j>. */
const ORGANIZATIONS_SQL = `
INSERT INTO organizations (environment_id, id, name, slug, role_set_id, public_metadata, private_metadata, created_at, updated_at)
SELECT $1::uuid, ${uuidv7Sql('gatehouse-bench-org:')},
  ${words(ADJECTIVES)}[1 + ((hashint8extended(j, 11) & 9223372036854775807) % ${ADJECTIVES.length})::int] || ' ' ||
  ${words(NOUNS)}[1 + ((hashint8extended(j, 12) & 9223372036854775807) % ${NOUNS.length})::int] || ' ' ||
  ${words(KINDS)}[1 + ((hashint8extended(j, 13) & 9223372036854775807) % ${KINDS.length})::int] || ' ' || j,
  'org-' || j, NULL, jsonb_build_object('tier', (ARRAY['free', 'team', 'enterprise'])[1 + (j % 3)::int]), '{}'::jsonb,
  to_timestamp(ms / 1000.0), to_timestamp(ms / 1000.0)
FROM (SELECT j, $2::bigint + j * $3::bigint AS ms FROM generate_series($4::bigint, $5::bigint - 1) AS j) s`;

/** Active, verified users without a password; emails unique per environment. Same parameters. */
const USERS_SQL = `
INSERT INTO users (environment_id, id, email, email_verified_at, password_hash, status, registration_state,
  public_metadata, private_metadata, unsafe_metadata, created_at, updated_at)
SELECT $1::uuid, ${uuidv7Sql('gatehouse-bench-member:')}, 'member' || j || '@bench.example.com', to_timestamp(ms / 1000.0), NULL,
  'active', 'complete', '{}'::jsonb, '{}'::jsonb, '{}'::jsonb, to_timestamp(ms / 1000.0), to_timestamp(ms / 1000.0)
FROM (SELECT j, $2::bigint + j * $3::bigint AS ms FROM generate_series($4::bigint, $5::bigint - 1) AS j) s`;

/** Every user of the environment joins the organization; the first one (by id) as its owner. */
const MEMBERSHIPS_SQL = `
INSERT INTO organization_memberships (environment_id, organization_id, user_id, role, public_metadata, private_metadata, created_at, updated_at)
SELECT u.environment_id, $2::uuid, u.id, CASE WHEN row_number() OVER (ORDER BY u.id) = 1 THEN 'owner' ELSE 'member' END,
  '{}'::jsonb, '{}'::jsonb, u.created_at, u.created_at
FROM users u WHERE u.environment_id = $1::uuid`;

/**
 * Seeds organizations, users and one organization's memberships with server-side INSERT … SELECT FROM
 * generate_series, in chunks, then VACUUM ANALYZE and CHECKPOINT (as the other seeds do).
 */
export async function seedOrganizations(options: OrganizationSeedOptions): Promise<SeededOrganizations> {
  const started = performance.now();
  const rowsPerStatement = options.rowsPerStatement ?? 50_000;
  const concurrency = options.concurrency ?? 2;
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: concurrency });
  // Created over the last 400 days (organizations and users on their own timelines), ids strictly increasing.
  const now = Date.now();
  const timeline = (count: number) => {
    const step = Math.max(1, Math.floor((400 * 86_400_000) / Math.max(1, count)));
    return { base: now - 60_000 - step * count, step };
  };
  const inChunks = async (what: string, sql: string, count: number) => {
    const { base, step } = timeline(count);
    let next = 0;
    let done = 0;
    const worker = async () => {
      while (next < count) {
        const start = next;
        const end = Math.min(count, start + rowsPerStatement);
        next = end;
        await pool.query(sql, [options.environmentId, base, step, start, end]);
        done += end - start;
        options.onProgress?.(what, done, count);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  };
  try {
    await inChunks('organizations', ORGANIZATIONS_SQL, options.organizations);
    await inChunks('users', USERS_SQL, options.members);
    const big = await pool.query<{ id: string }>("select id from organizations where environment_id = $1 and slug = 'org-0'", [options.environmentId]);
    const bigOrganizationId = big.rows[0].id;
    await pool.query(MEMBERSHIPS_SQL, [options.environmentId, bigOrganizationId]);
    options.onProgress?.('memberships', options.members, options.members);
    const inserted = performance.now();

    for (const table of ['organizations', 'users', 'organization_memberships']) await pool.query(`VACUUM ANALYZE ${table}`);
    // Flush the seeding's dirty pages now rather than in a checkpoint during the first measurement.
    await pool.query('CHECKPOINT').catch(() => undefined);
    const vacuumed = performance.now();

    const { rows } = await pool.query<{ name: string; bytes: string }>(`
      select c.relname as name, pg_relation_size(c.oid) as bytes from pg_class c
      where c.oid in ('organizations'::regclass, 'organization_memberships'::regclass, 'users'::regclass)
         or c.oid in (select indexrelid from pg_index where indrelid in ('organizations'::regclass, 'organization_memberships'::regclass))`);
    const sizes = Object.fromEntries(rows.map((r) => [r.name, Number(r.bytes)]));
    return {
      bigOrganizationId, sizes,
      seconds: (vacuumed - started) / 1000, insertSeconds: (inserted - started) / 1000, vacuumSeconds: (vacuumed - inserted) / 1000,
    };
  } finally {
    await pool.end();
  }
}

import pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { hashPassword } from '../../src/platform/crypto/passwords.js';

export interface SeedOptions {
  databaseUrl: string;
  environmentId: string;
  count: number;
  /** Every seeded user gets this password (hashed once, the same PHC string on every row). */
  password: string;
  /** Emails are `<prefix><n>@<domain>`, lower-case. */
  emailPrefix?: string;
  emailDomain?: string;
  rowsPerInsert?: number;
  /** Parallel INSERT statements (connections). */
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface SeededUsers {
  ids: string[];
  emails: string[];
  seconds: number;
}

/**
 * Inserts `count` active, complete, verified users straight into `users` with multi-row INSERTs. Hashing
 * 100k passwords with argon2id would take minutes, so one hash is computed and shared by every row.
 * Ends with VACUUM ANALYZE (planner statistics, visibility map, GIN pending lists) and a CHECKPOINT, so
 * the first measurement does not pay for the seeding.
 */
export async function seedUsers(options: SeedOptions): Promise<SeededUsers> {
  const started = performance.now();
  const { count, environmentId } = options;
  const prefix = options.emailPrefix ?? 'user';
  const domain = options.emailDomain ?? 'bench.example.com';
  const rowsPerInsert = options.rowsPerInsert ?? 1000;
  const concurrency = options.concurrency ?? 4;

  const passwordHash = await hashPassword(options.password);
  const ids = new Array<string>(count);
  const emails = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    ids[i] = uuidv7();
    emails[i] = `${prefix}${i}@${domain}`.toLowerCase();
  }

  // $1 environment, $2 hash, $3 timestamp shared by all rows; then (id, email) per row.
  const values = (rows: number) => Array.from({ length: rows }, (_, r) =>
    `($1, $${4 + 2 * r}, $${5 + 2 * r}, $3, $2, 'active', 'complete', '{}'::jsonb, '{}'::jsonb, '{}'::jsonb, $3, $3)`).join(',\n');
  const insertSql = (rows: number) => `INSERT INTO users (environment_id, id, email, email_verified_at, password_hash, status,
      registration_state, public_metadata, private_metadata, unsafe_metadata, created_at, updated_at) VALUES ${values(rows)}`;

  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: concurrency });
  const now = new Date();
  let nextStart = 0;
  let done = 0;
  try {
    const worker = async () => {
      for (;;) {
        const start = nextStart;
        if (start >= count) return;
        const end = Math.min(count, start + rowsPerInsert);
        nextStart = end;
        const params: unknown[] = [environmentId, passwordHash, now];
        for (let i = start; i < end; i++) params.push(ids[i], emails[i]);
        await pool.query(insertSql(end - start), params);
        done += end - start;
        options.onProgress?.(done, count);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    await pool.query('VACUUM ANALYZE users');
    // Flush the seeding's dirty pages now rather than in a checkpoint during the first measurement.
    // Needs superuser (or pg_checkpoint on PostgreSQL 15+); without it the run goes on.
    await pool.query('CHECKPOINT').catch(() => undefined);
  } finally {
    await pool.end();
  }
  return { ids, emails, seconds: (performance.now() - started) / 1000 };
}

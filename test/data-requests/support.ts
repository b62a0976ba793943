import { sql } from 'kysely';
import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import type { TestSession } from '../helpers/given.js';

export { expectProblem } from '../helpers/problem.js';

/**
 * The files here start their apps with `jobsInBackground: false` and run jobs through app.runJobs(), on a
 * database of their own (ownDatabase): a worker claims due jobs of every environment, and another file's
 * app on a shared PostgreSQL database would otherwise run these files' jobs at its own moment.
 */
export const DAY_MS = 86_400_000;
export const MISSING_ID = '01900000-0000-7000-8000-000000000000';

/** POST /_svc/me/data-requests as the session's user; the body of the 202. */
export async function requested(t: TestApp, env: TestEnv, session: TestSession, type: 'export' | 'erasure') {
  const res = await t.client(env, { token: session.token }).post('/me/data-requests', { type });
  expect(res.statusCode, res.body).toBe(202);
  return res.json();
}

/** The stored request row, straight from the table. */
export const storedRequest = (t: TestApp, env: TestEnv, id: string) =>
  t.db.selectFrom('data_requests').selectAll().where('environment_id', '=', env.id).where('id', '=', id).executeTakeFirstOrThrow();

/** The environment's own-trail events with this action, oldest first. */
export const eventsOf = (t: TestApp, env: TestEnv, action: string) =>
  t.db.selectFrom('audit_events').selectAll().where('environment_id', '=', env.id).where('action', '=', action).orderBy('sequence').execute();

/** The stored user row, every column. */
export const storedUser = (t: TestApp, env: TestEnv, userId: string) =>
  t.db.selectFrom('users').selectAll().where('environment_id', '=', env.id).where('id', '=', userId).executeTakeFirstOrThrow();

/** The stored job row of a request. */
export const storedJob = async (t: TestApp, env: TestEnv, requestId: string) => {
  const { rows } = await sql<{ status: string; attempts: number; kind: string; run_at: Date }>`
    select j.status, j.attempts, j.kind, j.run_at from jobs j join data_requests d on d.environment_id = j.environment_id and d.job_id = j.id
    where d.environment_id = ${env.id}::uuid and d.id = ${requestId}::uuid`.execute(t.db);
  return rows[0]!;
};

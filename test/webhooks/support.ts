import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';

export { expectProblem } from '../helpers/problem.js';

export const DAY_MS = 86_400_000;
export const MISSING_ID = '01900000-0000-7000-8000-000000000000';

/** POST /webhook-endpoints; the body of the 201. */
export async function createEndpoint(t: TestApp, env: TestEnv, body: Record<string, unknown> = {}) {
  const res = await t.server(env).post('/webhook-endpoints', { url: 'https://hooks.example.com/gatehouse', ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** The stored endpoint rows of the environment, every column. */
export const storedEndpoints = (t: TestApp, env: TestEnv) =>
  t.db.selectFrom('webhook_endpoints').selectAll().where('environment_id', '=', env.id).orderBy('id').execute();

/** The environment's deliveries, oldest first. */
export const storedDeliveries = (t: TestApp, env: TestEnv) =>
  t.db.selectFrom('webhook_deliveries').selectAll().where('environment_id', '=', env.id).orderBy('id').execute();

/** The environment's jobs, in the order queued. */
export const storedJobs = (t: TestApp, env: TestEnv) =>
  t.db.selectFrom('jobs').selectAll().where('environment_id', '=', env.id).orderBy('seq').execute();

/** The environment's own-trail events with this action, oldest first. */
export const eventsOf = (t: TestApp, env: TestEnv, action: string) =>
  t.db.selectFrom('audit_events').selectAll().where('environment_id', '=', env.id).where('action', '=', action).orderBy('sequence').execute();

/** Every own-trail action of the environment about webhook endpoints, oldest first. */
export const endpointActions = async (t: TestApp, env: TestEnv) =>
  (await t.db.selectFrom('audit_events').select('action').where('environment_id', '=', env.id).where('action', 'like', 'webhook_endpoint.%')
    .orderBy('sequence').execute()).map((e) => e.action);

import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';

/** A well-formed UUIDv7 that no environment ever issued. */
export const MISSING_ID = '01900000-0000-7000-8000-000000000000';

export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export { expectProblem } from '../helpers/problem.js';

/** Every stored user row of an environment, oldest first, straight from the database. */
export const storedUsers = (t: TestApp, env: TestEnv) =>
  t.db.selectFrom('users').selectAll().where('environment_id', '=', env.id).orderBy('id').execute();

export const storedUser = (t: TestApp, env: TestEnv, userId: string) =>
  t.db.selectFrom('users').selectAll().where('environment_id', '=', env.id).where('id', '=', userId).executeTakeFirstOrThrow();

/** Creates a user through the Server API and returns the response body; fails the test on anything but 201. */
export async function createUser(t: TestApp, env: TestEnv, body: Record<string, unknown>) {
  const res = await t.server(env).post('/users', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** A JSON object whose compact form is exactly `bytes` bytes long (at least 8). */
export function objectOfSize(bytes: number): Record<string, string> {
  const value = { k: 'x'.repeat(bytes - '{"k":""}'.length) };
  expect(Buffer.byteLength(JSON.stringify(value))).toBe(bytes);
  return value;
}

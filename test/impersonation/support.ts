import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import type { TestUser } from '../helpers/given.js';

export { expectProblem } from '../helpers/problem.js';
export { MISSING_ID } from '../users/support.js';

export const APP_ORIGIN = 'https://app.example.com';
export const LANDING = `${APP_ORIGIN}/support#/dashboard`;

export interface Cast { env: TestEnv; target: TestUser; actor: TestUser }

/** An environment whose app origin is allowed, with a target user and an operator (the actor). */
export async function givenCast(t: TestApp, settings: Record<string, unknown> = {}): Promise<Cast> {
  const env = await t.given.environment(settings);
  const origins = await t.server(env).put('/allowed-origins', { origins: [APP_ORIGIN, 'myapp://callback', 'http://localhost:5173'] });
  expect(origins.statusCode, origins.body).toBe(200);
  const [target, actor] = [await t.given.user(env), await t.given.user(env)];
  return { env, target, actor };
}

/** POST /users/{target}/impersonation-token with the actor and a reason, plus any other fields. */
export const mint = (t: TestApp, { env, target, actor }: Cast, body: Record<string, unknown> = {}) =>
  t.server(env).post(`/users/${target.id}/impersonation-token`, { actorUserId: actor.id, reason: 'Ticket #4521: billing page is blank', ...body });

/** Mints and returns the body; fails the test on anything but 201. */
export async function minted(t: TestApp, cast: Cast, body: Record<string, unknown> = {}) {
  const res = await mint(t, cast, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; token: string; expiresInSeconds: number; expiresAt: string; url: string | null };
}

/** POST /_svc/auth/session/impersonate as a native app (the session token in the body). */
export const redeem = (t: TestApp, env: TestEnv, token: string, query = '?_is_native=true') =>
  t.client(env).post(`/auth/session/impersonate${query}`, { token });

/** The environment's ledger rows, straight from the database. */
export const storedLedger = (t: TestApp, env: TestEnv) =>
  t.db.selectFrom('impersonations').selectAll().where('environment_id', '=', env.id).orderBy('id').execute();

/** The environment's own audit events with this action, oldest first. */
export const eventsOf = (t: TestApp, env: TestEnv, action: string) =>
  t.db.selectFrom('audit_events').selectAll().where('environment_id', '=', env.id).where('action', '=', action).orderBy('sequence').execute();

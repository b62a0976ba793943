import { Secret, TOTP } from 'otpauth';
import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import { PASSWORD, type TestUser } from '../helpers/given.js';

export { expectProblem } from '../helpers/problem.js';

/** A TOTP step: codes change every 30 seconds. */
export const STEP_MS = 30_000;

/** The code an authenticator app with this (base32) secret shows at the test clock's time, `steps` steps away. */
export const codeAt = (t: TestApp, secret: string, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: t.clock.now().getTime() + steps * STEP_MS });

/** Enrols and confirms an authenticator app for the session's user; then moves the clock to the next step, so the next code is fresh. */
export async function enrolTotp(t: TestApp, env: TestEnv, token: string) {
  const me = t.client(env, { token });
  const started = await me.post('/me/mfa/totp');
  expect(started.statusCode, started.body).toBe(201);
  const { factorId, secret } = started.json();
  const confirmed = await me.post(`/me/mfa/totp/${factorId}/confirm`, { code: codeAt(t, secret) });
  expect(confirmed.statusCode, confirmed.body).toBe(200);
  t.clock.advance(STEP_MS);
  return { factorId: factorId as string, secret: secret as string, backupCodes: confirmed.json().backupCodes as string[] };
}

/** A user with a confirmed authenticator app (its enrolling session signed out of nothing). */
export async function userWithTotp(t: TestApp, env: TestEnv, body: Record<string, unknown> = {}) {
  const user = await t.given.user(env, body);
  const session = await t.given.session(env, user);
  return { user, session, ...(await enrolTotp(t, env, session.token)) };
}

/** POST /_svc/auth/sign-in as a native app. */
export const signIn = (t: TestApp, env: TestEnv, user: Pick<TestUser, 'email'>, password = PASSWORD) =>
  t.client(env).post('/auth/sign-in?_is_native=true', { email: user.email, password });

/** A password sign-in that stops at the challenge; returns its token. */
export async function challengeOf(t: TestApp, env: TestEnv, user: Pick<TestUser, 'email'>) {
  const res = await signIn(t, env, user);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({ mfaRequired: true, challengeToken: expect.stringMatching(/^mfa_[\w-]{43}$/), factors: ['totp', 'backup_code'] });
  return res.json().challengeToken as string;
}

/** POST /_svc/auth/mfa/verify as a native app. */
export const verify = (t: TestApp, env: TestEnv, challengeToken: string, code: string) =>
  t.client(env).post('/auth/mfa/verify?_is_native=true', { challengeToken, code });

/** The environment's own audit events with this action, oldest first. */
export const eventsOf = (t: TestApp, env: TestEnv, action: string) =>
  t.db.selectFrom('audit_events').selectAll().where('environment_id', '=', env.id).where('action', '=', action).orderBy('sequence').execute();

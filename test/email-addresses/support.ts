import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import type { TestSession, TestUser } from '../helpers/given.js';

export { expectProblem } from '../helpers/problem.js';

export const CODE_SUBJECT = /^Your email verification code is (\d{6})$/;
export const MISSING_ID = '01900000-0000-7000-8000-000000000000';

/** A 6-digit code that is certainly not the given one. */
export const otherCode = (code: string, step = 1) => String((Number(code) + step) % 1_000_000).padStart(6, '0');

/** A signed-in user and a client-plane caller with its session. */
export async function signedInUser(t: TestApp, env: TestEnv, body: Record<string, unknown> = {}) {
  const user = await t.given.user(env, body);
  const session = await t.given.session(env, user);
  return { user, session, me: t.client(env, { token: session.token }) };
}

/** The code of the newest address-verification mail to this address. */
export async function latestCode(t: TestApp, env: TestEnv, email: string): Promise<string> {
  const mail = (await t.outbox(env, email)).find((m) => CODE_SUBJECT.test(m.subject));
  if (!mail) throw new Error(`no verification mail to ${email}`);
  return CODE_SUBJECT.exec(mail.subject)![1];
}

/** Adds the address through the client plane and returns it; fails the test on anything but 201. */
export async function added(t: TestApp, env: TestEnv, session: TestSession, email: string) {
  const res = await t.client(env, { token: session.token }).post('/me/email-addresses', { email });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; email: string; verified: boolean; primary: boolean; createdAt: string };
}

/** Adds and verifies the address with the mailed code; returns the verified address. */
export async function verifiedAddress(t: TestApp, env: TestEnv, session: TestSession, email: string) {
  const address = await added(t, env, session, email);
  const res = await t.client(env, { token: session.token }).post(`/me/email-addresses/${address.id}/verify`, { code: await latestCode(t, env, email) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as typeof address;
}

/** The stored rows of a user's addresses, primary first. */
export const storedAddresses = (t: TestApp, env: TestEnv, user: TestUser) =>
  t.db.selectFrom('email_addresses').selectAll().where('environment_id', '=', env.id).where('user_id', '=', user.id)
    .orderBy('is_primary', 'desc').orderBy('created_at').orderBy('id').execute();

export const storedUser = (t: TestApp, env: TestEnv, user: TestUser) =>
  t.db.selectFrom('users').selectAll().where('environment_id', '=', env.id).where('id', '=', user.id).executeTakeFirstOrThrow();

/** The environment's own audit events with this action, oldest first. */
export const eventsOf = (t: TestApp, env: TestEnv, action: string) =>
  t.db.selectFrom('audit_events').selectAll().where('environment_id', '=', env.id).where('action', '=', action).orderBy('sequence').execute();

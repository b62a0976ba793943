import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import { PASSWORD, type TestSession } from '../helpers/given.js';
import { minted, redeem, givenCast } from '../impersonation/support.js';

export { expectProblem } from '../helpers/problem.js';

/** Past the 10 minutes a password check counts as recent. */
export const PAST_RECENT_MS = 10 * 60_000 + 1000;

/** The code of the newest mail to the address whose subject ends in a 6-digit code. */
export async function latestMailedCode(t: TestApp, env: TestEnv, to: string, subject: RegExp): Promise<string> {
  const mail = (await t.outbox(env, to)).find((m) => subject.test(m.subject));
  if (!mail) throw new Error(`no mail matching ${subject} to ${to}`);
  return /(\d{6})$/.exec(mail.subject)![1];
}

/** A signed-up user whose session started from the emailed verification code alone. */
export async function sessionFromEmailCode(t: TestApp, env: TestEnv, email: string): Promise<TestSession> {
  expect((await t.client(env).post('/auth/sign-up', { email, password: PASSWORD })).statusCode).toBe(201);
  const code = await latestMailedCode(t, env, email, /^Your verification code is \d{6}$/);
  const res = await t.client(env).post('/auth/verify-email?_is_native=true', { email, code });
  expect(res.statusCode, res.body).toBe(200);
  return { id: res.json().session.id, token: res.json().sessionToken, userId: res.json().user.id };
}

/** A user's session, and an impersonated session of the same user. */
export async function impersonatedSession(t: TestApp) {
  const cast = await givenCast(t);
  const own = await t.given.session(cast.env, cast.target);
  const res = await redeem(t, cast.env, (await minted(t, cast)).token);
  expect(res.statusCode, res.body).toBe(200);
  return { ...cast, own, impersonated: { id: res.json().session.id, token: res.json().sessionToken as string, userId: cast.target.id } };
}

/** The environment's own audit events with this action, oldest first. */
export const eventsOf = (t: TestApp, env: TestEnv, action: string) =>
  t.db.selectFrom('audit_events').selectAll().where('environment_id', '=', env.id).where('action', '=', action).orderBy('sequence').execute();

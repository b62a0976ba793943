import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';

export { expectProblem } from '../helpers/problem.js';
export { MISSING_ID, objectOfSize } from '../users/support.js';

export { PASSWORD } from '../helpers/given.js';
export const DAY_MS = 86_400_000;

export const SIGN_UP_URL = 'https://app.example.com/sign-up';

export const SUMMARY_KEYS = ['acceptedAt', 'createdAt', 'email', 'environmentId', 'expiresAt', 'id', 'revokedAt', 'status'];

/** An environment that can invite: signUpUrl set, plus any other settings. */
export const invitingEnvironment = (t: TestApp, settings: Record<string, unknown> = {}) =>
  t.given.environment({ signUpUrl: SIGN_UP_URL, ...settings });

export const randomEmail = (prefix = 'invitee') => `${prefix}-${randomUUID()}@example.com`;

/** The link of the newest invitation mail to `email`, parsed. */
export async function invitationLink(t: TestApp, env: TestEnv, email: string): Promise<URL> {
  const [mail] = await t.outbox(env, email);
  expect(mail, `no mail to ${email}`).toBeDefined();
  const match = /https:\/\/\S+/.exec(mail.text);
  expect(match, mail.text).not.toBeNull();
  return new URL(match![0]);
}

/** Creates an invitation through the Server API; returns its summary and the token from the mail. */
export async function invite(t: TestApp, env: TestEnv, body: Record<string, unknown> = {}) {
  const payload = { email: randomEmail(), publicMetadata: {}, privateMetadata: {}, ...body };
  const res = await t.server(env).post('/invitations', payload);
  expect(res.statusCode, res.body).toBe(201);
  const invitation = res.json();
  const token = (await invitationLink(t, env, invitation.email)).searchParams.get('invitation_token')!;
  return { invitation, token };
}

/** The stored invitation row, straight from the database. */
export const storedInvitation = (t: TestApp, env: TestEnv, id: string) =>
  t.db.selectFrom('invitations').selectAll().where('environment_id', '=', env.id).where('id', '=', id).executeTakeFirstOrThrow();

export const countInvitations = async (t: TestApp, env: TestEnv) =>
  Number((await t.db.selectFrom('invitations').select((eb) => eb.fn.countAll().as('n')).where('environment_id', '=', env.id).executeTakeFirstOrThrow()).n);

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { signIn } from '../helpers/flows.js';
import { sessionIsActive } from '../helpers/given.js';
import { eventsOf, expectProblem, impersonatedSession, PAST_RECENT_MS } from './support.js';

const NEW_PASSWORD = 'a brand new passphrase';

describe('POST /_svc/me/password', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const storedHash = async (envId: string, userId: string) =>
    (await t.db.selectFrom('users').select('password_hash').where('environment_id', '=', envId).where('id', '=', userId).executeTakeFirstOrThrow()).password_hash;

  it('changes the password with the current one: the old one stops working, the new one signs in, the owner is told and the trail records it', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const session = await t.given.session(env, user);

    const res = await t.client(env, { token: session.token }).post('/me/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });

    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    expectProblem(await signIn(t, env, user.email, PASSWORD), 401, 'invalid_credentials');
    expect((await signIn(t, env, user.email, NEW_PASSWORD)).statusCode).toBe(200);
    expect(await sessionIsActive(t, env, session)).toBe(true);
    const [notice] = await t.outbox(env, 'ada@example.com');
    expect(notice.subject).toBe('Your password was changed');
    expect(notice.text).not.toContain(NEW_PASSWORD);
    const [event] = await eventsOf(t, env, 'user.password_changed');
    expect(event).toMatchObject({
      actor_type: 'user', actor_id: user.id, targets: [{ type: 'user', id: user.id }, { type: 'session', id: session.id }],
      metadata: { firstPassword: false, revokedSessions: 0 },
    });
    expect(JSON.stringify(event)).not.toContain(NEW_PASSWORD);
  });

  it('ends every other session with signOutOtherSessions and keeps this one, now recently authenticated', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const [current, other, third] = [await t.given.session(env, user), await t.given.session(env, user), await t.given.session(env, user)];
    t.clock.advance(PAST_RECENT_MS);

    const res = await t.client(env, { token: current.token }).post('/me/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, signOutOtherSessions: true });

    expect(res.statusCode, res.body).toBe(204);
    expect([await sessionIsActive(t, env, current), await sessionIsActive(t, env, other), await sessionIsActive(t, env, third)]).toEqual([true, false, false]);
    expect((await eventsOf(t, env, 'user.password_changed'))[0].metadata).toEqual({ firstPassword: false, revokedSessions: 2 });
    expect((await t.client(env, { token: current.token }).delete('/me')).statusCode).toBe(204);
  });

  it('refuses a missing or wrong current password and a weak new one, and changes nothing', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    const me = t.client(env, { token: session.token });
    const before = await storedHash(env.id, user.id);

    expectProblem(await me.post('/me/password', { newPassword: NEW_PASSWORD }), 400, 'current_password_required');
    expectProblem(await me.post('/me/password', { currentPassword: 'not the password', newPassword: NEW_PASSWORD }), 400, 'invalid_password');
    expectProblem(await me.post('/me/password', { currentPassword: PASSWORD, newPassword: 'short' }), 400, 'weak_password');
    expectProblem(await me.post('/me/password', { currentPassword: PASSWORD, newPassword: 'password123' }), 400, 'weak_password');
    expectProblem(await me.post('/me/password', { currentPassword: PASSWORD, newPassword: user.email }), 400, 'weak_password');
    expectProblem(await me.post('/me/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, extra: 1 }), 400, 'invalid_request');

    expect(await storedHash(env.id, user.id)).toBe(before);
    expect(await eventsOf(t, env, 'user.password_changed')).toEqual([]);
  });

  it('never counts a weak new password against the account, but counts each wrong current one (429 past the lockout budget)', async () => {
    const env = await t.given.environment({ lockout: { maxFailedAttempts: 2, coolDownSeconds: 600 } });
    const user = await t.given.user(env);
    const me = t.client(env, { token: (await t.given.session(env, user)).token });
    for (let i = 0; i < 5; i++) expectProblem(await me.post('/me/password', { currentPassword: 'not the password', newPassword: 'short' }), 400, 'weak_password');
    for (let i = 0; i < 2; i++) expectProblem(await me.post('/me/password', { currentPassword: 'not the password', newPassword: NEW_PASSWORD }), 400, 'invalid_password');
    expectProblem(await me.post('/me/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }), 429, 'rate_limited');
  });

  it('sets a first password on an account without one only after a recent sign-in', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    await t.db.updateTable('users').set({ password_hash: null }).where('environment_id', '=', env.id).where('id', '=', user.id).execute();
    const me = t.client(env, { token: session.token });

    const set = await me.post('/me/password', { newPassword: NEW_PASSWORD });
    expect(set.statusCode, set.body).toBe(204);
    expect((await signIn(t, env, user.email, NEW_PASSWORD)).statusCode).toBe(200);
    expect((await eventsOf(t, env, 'user.password_changed'))[0].metadata).toEqual({ firstPassword: true, revokedSessions: 0 });

    await t.db.updateTable('users').set({ password_hash: null }).where('environment_id', '=', env.id).where('id', '=', user.id).execute();
    t.clock.advance(PAST_RECENT_MS);
    expectProblem(await me.post('/me/password', { newPassword: 'another long passphrase' }), 403, 'reauthentication_required');
    expect(await storedHash(env.id, user.id)).toBeNull();
  });

  it('is refused to an impersonated session, as are reauthenticate and deleting the account (403 impersonation_restricted)', async () => {
    const { env, target, own, impersonated } = await impersonatedSession(t);
    const as = t.client(env, { token: impersonated.token });
    const before = await storedHash(env.id, target.id);

    expectProblem(await as.post('/me/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }), 403, 'impersonation_restricted');
    expectProblem(await as.post('/me/reauthenticate', { password: PASSWORD }), 403, 'impersonation_restricted');
    expectProblem(await as.delete('/me'), 403, 'impersonation_restricted');

    expect(await storedHash(env.id, target.id)).toBe(before);
    expect((await t.server(env).get(`/users/${target.id}`)).json().status).toBe('active');
    expect(await sessionIsActive(t, env, own)).toBe(true);
  });
});

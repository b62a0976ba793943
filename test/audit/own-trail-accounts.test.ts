import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { signIn, signUp } from '../helpers/flows.js';
import { PASSWORD } from '../helpers/given.js';
import { passwordReset } from '../auth/support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());
const { reset, requestCode } = passwordReset(() => t);

interface Event { action: string; result: string; actor: unknown; targets: unknown; metadata: unknown; producer: unknown; context: unknown }

/** The environment's own trail after its first secret key, in sequence order. */
async function trail(env: TestEnv): Promise<Event[]> {
  const res = await t.server(env).get('/audit-events/feed?limit=100');
  expect(res.statusCode).toBe(200);
  return (res.json().items as Event[]).filter((e) => e.action !== 'secret_key.created');
}

const IP = '203.0.113.7';
const AGENT = 'TrailTest/1.0';
const fromClient = { ipAddress: IP, userAgent: AGENT };
const byUser = (userId: string) => ({
  actor: { type: 'user', id: userId, impersonatorId: null }, producer: { type: 'gatehouse', via: 'client_api' }, context: fromClient,
});
const clientOpts = { remoteAddress: IP, headers: { 'user-agent': AGENT } };

/** Everything recorded, as text: no password, code or email may be in it. */
const asText = (events: Event[]) => JSON.stringify(events);

describe("Gatehouse's own audit trail: accounts", () => {
  it('records a user created through the Server API with the key as actor, never the email or password', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'created@example.com' });
    const events = await trail(env);
    expect(events).toEqual([expect.objectContaining({
      action: 'user.created', result: 'success', actor: expect.objectContaining({ type: 'api_key' }),
      producer: { type: 'gatehouse', via: 'server_api' }, targets: [{ type: 'user', id: user.id }], metadata: { hasPassword: true },
    })]);
    expect(asText(events)).not.toContain('created@example.com');
    expect(asText(events)).not.toContain(PASSWORD);
  });

  it('records a sign-up by the new user, then the email verification and the sign-in it starts', async () => {
    const env = await t.given.environment();
    const res = await t.client(env).post('/auth/sign-up', { email: 'ada@example.com', password: PASSWORD }, clientOpts);
    expect(res.statusCode).toBe(201);
    const userId = res.json().user.id;
    const [mail] = await t.outbox(env, 'ada@example.com');
    const code = /\b(\d{6})\b/.exec(mail.subject)![1];
    const verified = await t.client(env).post('/auth/verify-email?_is_native=true', { email: 'ada@example.com', code }, clientOpts);
    expect(verified.statusCode).toBe(200);

    const events = await trail(env);
    expect(events).toEqual([
      expect.objectContaining({ action: 'user.signed_up', ...byUser(userId), targets: [{ type: 'user', id: userId }], metadata: { pending: true } }),
      expect.objectContaining({ action: 'user.email_verified', ...byUser(userId), targets: [{ type: 'user', id: userId }], metadata: {} }),
      expect.objectContaining({
        action: 'user.signed_in', ...byUser(userId),
        targets: [{ type: 'user', id: userId }, { type: 'session', id: verified.json().session.id }], metadata: { method: 'email_code' },
      }),
    ]);
    expect(asText(events)).not.toContain(code);
  });

  it('records a sign-up that starts a session at once as a sign-up and a sign-in', async () => {
    const env = await t.given.environment({ emailVerificationRequired: false });
    const res = await signUp(t, env, 'grace@example.com');
    expect(res.statusCode).toBe(201);
    expect((await trail(env)).map((e) => [e.action, e.metadata])).toEqual([
      ['user.signed_up', { pending: false }], ['user.signed_in', { method: 'sign_up' }],
    ]);
  });

  it('records a sign-in with the user and the new session as targets and the client address, never the password', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const res = await signIn(t, env, user.email, PASSWORD, { native: true, ip: IP, headers: { 'user-agent': AGENT } });
    expect(res.statusCode).toBe(200);
    const events = (await trail(env)).slice(1);
    expect(events).toEqual([expect.objectContaining({
      action: 'user.signed_in', result: 'success', ...byUser(user.id),
      targets: [{ type: 'user', id: user.id }, { type: 'session', id: res.json().session.id }], metadata: { method: 'password' },
    })]);
    expect(asText(events)).not.toContain(res.json().sessionToken);
  });

  it('records a failed sign-in of a known account with its reason, and the failure that locks the account', async () => {
    const env = await t.given.environment({ lockout: { maxFailedAttempts: 2 } });
    const user = await t.given.user(env);
    expect((await signIn(t, env, user.email, 'not the password', { ip: IP, headers: { 'user-agent': AGENT } })).statusCode).toBe(401);
    expect((await signIn(t, env, user.email, 'still not the password', { ip: IP, headers: { 'user-agent': AGENT } })).statusCode).toBe(401);
    expect((await signIn(t, env, 'nobody@example.com', 'whatever it is')).statusCode).toBe(401);

    const events = (await trail(env)).slice(1);
    const failed = (locked: boolean) => expect.objectContaining({
      action: 'user.sign_in_failed', result: 'failure', ...byUser(user.id),
      targets: [{ type: 'user', id: user.id }], metadata: { reason: 'invalid_password', locked },
    });
    // An unknown email names no account, so it leaves nothing to record.
    expect(events).toEqual([failed(false), failed(true)]);
    expect(asText(events)).not.toContain('not the password');
  });

  it('records a sign-in refused to a banned user with the reason', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    await t.server(env).post(`/users/${user.id}/ban`);
    expect((await signIn(t, env, user.email, PASSWORD)).statusCode).toBe(403);
    expect((await trail(env)).at(-1)).toMatchObject({ action: 'user.sign_in_failed', result: 'failure', metadata: { reason: 'user_banned', locked: false } });
  });

  it('records a password reset with the sessions it revoked and the session it started, never the code', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'reset@example.com' });
    await t.given.session(env, user);
    const code = await requestCode(env, 'reset@example.com');
    const res = await reset(env, { email: 'reset@example.com', code, newPassword: 'a brand new passphrase' }, { native: true });
    expect(res.statusCode).toBe(200);

    const events = await trail(env);
    expect(events.at(-1)).toMatchObject({
      action: 'user.password_reset', result: 'success', actor: { type: 'user', id: user.id },
      targets: [{ type: 'user', id: user.id }, { type: 'session', id: res.json().session.id }], metadata: { revokedSessions: 1 },
    });
    expect(asText(events)).not.toContain(code);
    expect(asText(events)).not.toContain('a brand new passphrase');
  });

  it('records Server API profile changes with the fields changed, never their values', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const res = await t.server(env).patch(`/users/${user.id}`, { email: 'new-address@example.com', password: 'another long passphrase', firstName: 'Ada' });
    expect(res.statusCode).toBe(200);
    expect((await t.server(env).patch(`/users/${user.id}`, { locale: 'da' })).statusCode).toBe(200);

    const events = (await trail(env)).slice(1);
    expect(events.map((e) => [e.action, e.metadata])).toEqual([
      ['user.updated', { changedFields: ['email', 'password', 'firstName', 'name'] }],
      ['user.updated', { changedFields: ['locale'] }],
    ]);
    expect(events[0]).toMatchObject({ actor: { type: 'api_key' }, producer: { type: 'gatehouse', via: 'server_api' }, targets: [{ type: 'user', id: user.id }] });
    expect(asText(events)).not.toContain('new-address@example.com');
    expect(asText(events)).not.toContain('another long passphrase');
  });

  it('records no profile event for a change that leaves every field as it was', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { firstName: 'Ada' });
    const before = (await trail(env)).length;
    expect((await t.server(env).patch(`/users/${user.id}`, { firstName: 'Ada' })).statusCode).toBe(200);
    expect(await trail(env)).toHaveLength(before);
  });

  it('records nothing for a profile change that fails: a taken email changes nothing', async () => {
    const env = await t.given.environment();
    const [a, b] = [await t.given.user(env), await t.given.user(env)];
    const before = (await trail(env)).length;
    expect((await t.server(env).patch(`/users/${a.id}`, { email: b.email })).statusCode).toBe(409);
    expect(await trail(env)).toHaveLength(before);
  });
});

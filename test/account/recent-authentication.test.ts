import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { passwordReset } from '../auth/support.js';
import { eventsOf, expectProblem, PAST_RECENT_MS, sessionFromEmailCode } from './support.js';

// DELETE /_svc/me stands for every route that asks for a recent authentication (RECENTLY_AUTHENTICATED).
describe('recent authentication and POST /_svc/me/reauthenticate', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());
  const { requestCode, reset } = passwordReset(() => t);

  it('counts a password sign-in as recent for 10 minutes, then asks for the password again with 403 reauthentication_required', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    t.clock.advance(PAST_RECENT_MS);

    expectProblem(await t.client(env, { token: session.token }).delete('/me'), 403, 'reauthentication_required');
    expect((await t.server(env).get(`/users/${user.id}`)).json().status).toBe('active');

    const confirmed = await t.client(env, { token: session.token }).post('/me/reauthenticate', { password: PASSWORD });
    expect(confirmed.statusCode, confirmed.body).toBe(204);
    expect((await t.client(env, { token: session.token }).delete('/me')).statusCode).toBe(204);
    const [event] = await eventsOf(t, env, 'session.reauthenticated');
    expect(event).toMatchObject({ actor_type: 'user', actor_id: user.id, targets: [{ type: 'session', id: session.id }, { type: 'user', id: user.id }], metadata: { method: 'password' } });
  });

  it('counts a sign-up that needs no code as recent, and a session from an emailed code or a password reset as not', async () => {
    const env = await t.given.environment({ emailVerificationRequired: false });
    const signUp = await t.client(env).post('/auth/sign-up?_is_native=true', { email: 'new@example.com', password: PASSWORD });
    expect(signUp.statusCode).toBe(201);
    expect((await t.client(env, { token: signUp.json().sessionToken }).delete('/me')).statusCode).toBe(204);

    const verifying = await t.given.environment();
    const fromCode = await sessionFromEmailCode(t, verifying, 'coded@example.com');
    expectProblem(await t.client(verifying, { token: fromCode.token }).delete('/me'), 403, 'reauthentication_required');

    const user = await t.given.user(env, { email: 'reset@example.com' });
    const res = await reset(env, { email: user.email, code: await requestCode(env, user.email!), newPassword: 'a brand new passphrase' }, { native: true });
    expect(res.statusCode, res.body).toBe(200);
    expectProblem(await t.client(env, { token: res.json().sessionToken }).delete('/me'), 403, 'reauthentication_required');
    expect((await t.client(env, { token: res.json().sessionToken }).post('/me/reauthenticate', { password: 'a brand new passphrase' })).statusCode).toBe(204);
    expect((await t.client(env, { token: res.json().sessionToken }).delete('/me')).statusCode).toBe(204);
  });

  it('marks only the session that confirmed the password', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const [first, second] = [await t.given.session(env, user), await t.given.session(env, user)];
    t.clock.advance(PAST_RECENT_MS);
    expect((await t.client(env, { token: first.token }).post('/me/reauthenticate', { password: PASSWORD })).statusCode).toBe(204);
    expectProblem(await t.client(env, { token: second.token }).delete('/me'), 403, 'reauthentication_required');
    const stored = await t.db.selectFrom('sessions').select(['id', 'authenticated_at']).where('environment_id', '=', env.id).orderBy('id').execute();
    expect(stored.map((s) => [s.id, s.authenticated_at?.toISOString()])).toEqual([
      [first.id, t.clock.now().toISOString()],
      [second.id, new Date(t.clock.now().getTime() - PAST_RECENT_MS).toISOString()],
    ]);
  });

  it('refuses a wrong password with 400 invalid_password, counts it against the account, and answers 429 past the lockout budget', async () => {
    const env = await t.given.environment({ lockout: { maxFailedAttempts: 3, coolDownSeconds: 600 } });
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    const me = t.client(env, { token: session.token });
    t.clock.advance(PAST_RECENT_MS);

    expect((await me.post('/me/reauthenticate', { password: PASSWORD })).statusCode).toBe(204); // a right one gives its try back
    for (let i = 0; i < 3; i++) expectProblem(await me.post('/me/reauthenticate', { password: 'not the password' }), 400, 'invalid_password');
    const limited = await me.post('/me/reauthenticate', { password: PASSWORD });
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    t.clock.advance(600_000);
    expect((await me.post('/me/reauthenticate', { password: PASSWORD })).statusCode).toBe(204);
  });

  it('answers 409 password_not_set for an account without a password, and 401 without a session', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    await t.db.updateTable('users').set({ password_hash: null }).where('environment_id', '=', env.id).where('id', '=', user.id).execute();
    expectProblem(await t.client(env, { token: session.token }).post('/me/reauthenticate', { password: PASSWORD }), 409, 'password_not_set');
    expectProblem(await t.client(env).post('/me/reauthenticate', { password: PASSWORD }), 401, 'unauthenticated');
  });

  it("does not mark another environment's session: a token is only ever its own environment's", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const session = await t.given.session(theirs, await t.given.user(theirs));
    expectProblem(await t.client(mine, { token: session.token }).post('/me/reauthenticate', { password: PASSWORD }), 401, 'unauthenticated');
  });
});

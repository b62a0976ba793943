import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { eventsOf, expectProblem, impersonatedSession, PAST_RECENT_MS, passkeySignIn, registerPasskey } from './support.js';

describe('managing passkeys', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({}, { ownDatabase: true }); }); // housekeeping sweeps every environment's rows
  afterAll(() => t.close());

  it('renames a passkey and deletes it (recorded as user.passkey_removed), after which it no longer signs in', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    const { authenticator, passkey } = await registerPasskey(t, env, session.token);
    const me = t.client(env, { token: session.token });

    const renamed = await me.patch(`/me/passkeys/${passkey.id}`, { name: 'Work laptop' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ id: passkey.id, name: 'Work laptop' });
    expect((await me.delete(`/me/passkeys/${passkey.id}`)).statusCode).toBe(204);

    expect((await me.get('/me/passkeys')).json()).toEqual({ items: [] });
    expect(await eventsOf(t, env, 'user.passkey_removed')).toEqual([expect.objectContaining({ metadata: { passkeyId: passkey.id } })]);
    expectProblem(await passkeySignIn(t, env, authenticator), 400, 'invalid_passkey');
    expectProblem(await me.delete(`/me/passkeys/${passkey.id}`), 404, 'resource_not_found');
  });

  it("answers 404 for another user's passkey, and the Server API 404 for another environment's user", async () => {
    const env = await t.given.environment();
    const ada = await t.given.user(env);
    const { passkey } = await registerPasskey(t, env, (await t.given.session(env, ada)).token);
    const bob = t.client(env, { token: (await t.given.session(env, await t.given.user(env))).token });
    expectProblem(await bob.patch(`/me/passkeys/${passkey.id}`, { name: 'Mine' }), 404, 'resource_not_found');
    expectProblem(await bob.delete(`/me/passkeys/${passkey.id}`), 404, 'resource_not_found');
    expectProblem(await t.server(await t.given.environment()).get(`/users/${ada.id}/passkeys`), 404, 'user_not_found');
  });

  it('needs a recent authentication to delete, and refuses an impersonated session to rename or delete', async () => {
    const env = await t.given.environment();
    const session = await t.given.session(env, await t.given.user(env));
    const { passkey } = await registerPasskey(t, env, session.token);
    t.clock.advance(PAST_RECENT_MS);
    expectProblem(await t.client(env, { token: session.token }).delete(`/me/passkeys/${passkey.id}`), 403, 'reauthentication_required');

    const { env: other, impersonated } = await impersonatedSession(t);
    const as = t.client(other, { token: impersonated.token });
    const id = '01900000-0000-7000-8000-000000000000';
    expectProblem(await as.patch(`/me/passkeys/${id}`, { name: 'x' }), 403, 'impersonation_restricted');
    expectProblem(await as.delete(`/me/passkeys/${id}`), 403, 'impersonation_restricted');
    expectProblem(await as.post('/me/passkeys', {}), 403, 'impersonation_restricted');
  });

  it('keeps the last passkey of a user without an authenticator app where mfa.policy is required (409 mfa_required_by_policy)', async () => {
    const env = await t.given.environment({ mfa: { policy: 'required' } });
    const session = await t.given.session(env, await t.given.user(env));
    const { passkey: first } = await registerPasskey(t, env, session.token);
    const { passkey: second } = await registerPasskey(t, env, session.token);
    const me = t.client(env, { token: session.token });
    expect((await me.delete(`/me/passkeys/${first.id}`)).statusCode).toBe(204);
    expectProblem(await me.delete(`/me/passkeys/${second.id}`), 409, 'mfa_required_by_policy');
    expect((await me.get('/me/passkeys')).json().items).toHaveLength(1);
  });

  it('housekeeping prunes challenges (a registration\'s, a used sign-in\'s) a day past expiry', async () => {
    const env = await t.given.environment();
    const { authenticator } = await registerPasskey(t, env, (await t.given.session(env, await t.given.user(env))).token);
    expect((await passkeySignIn(t, env, authenticator)).statusCode).toBe(200);
    const count = () => t.db.selectFrom('passkey_challenges').select('challenge_hash').where('environment_id', '=', env.id).execute().then((rows) => rows.length);
    expect(await count()).toBe(2);
    t.clock.advance(5 * 60_000 + 86_400_000 + 1);
    await t.app.runHousekeeping();
    expect(await count()).toBe(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createSoftwareAuthenticator } from '../helpers/software-authenticator.js';
import { eventsOf, expectProblem, impersonatedSession, originOf, PAST_RECENT_MS, registerPasskey } from './support.js';

describe('registering a passkey', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('answers creation options for a discoverable credential with user verification, scoped to the frontend host', async () => {
    const env = await t.given.environment({}, 'Acme');
    const user = await t.given.user(env, { email: 'ada@example.com' });
    const me = t.client(env, { token: (await t.given.session(env, user)).token });

    const res = await me.post('/me/passkeys/options');

    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      challenge: expect.stringMatching(/^[\w-]{43}$/),
      rp: { name: 'Acme', id: env.frontendHost.replace(/:\d+$/, '') },
      user: { id: Buffer.from(user.id.replace(/-/g, ''), 'hex').toString('base64url'), name: 'ada@example.com', displayName: expect.any(String) },
      pubKeyCredParams: [{ alg: -7, type: 'public-key' }, { alg: -257, type: 'public-key' }],
      timeout: 300000, attestation: 'none', excludeCredentials: [],
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
      extensions: { credProps: true }, hints: [],
    });
  });

  it('stores the public key, counter and backup flags, lists it, excludes it from the next options, and records user.passkey_added', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    const { authenticator, passkey } = await registerPasskey(t, env, session.token, { synced: true, name: 'My phone' });
    const me = t.client(env, { token: session.token });

    expect(passkey).toEqual({ id: expect.any(String), name: 'My phone', createdAt: t.clock.now().toISOString(), lastUsedAt: null, deviceType: 'multiDevice', backedUp: true });
    expect((await me.get('/me/passkeys')).json()).toEqual({ items: [passkey] });
    expect((await t.server(env).get(`/users/${user.id}/passkeys`)).json()).toEqual({ items: [passkey] });
    const [row] = await t.db.selectFrom('passkeys').selectAll().where('environment_id', '=', env.id).execute();
    expect(row).toMatchObject({
      user_id: user.id, credential_id: authenticator.credentials[0]!.id.toString('base64url'), counter: 0, transports: ['internal'],
      device_type: 'multiDevice', backed_up: true, rp_id: env.frontendHost.replace(/:\d+$/, ''),
    });
    expect(Buffer.from(row!.public_key)).toEqual(Buffer.from(authenticator.credentials[0]!.publicKeyCose));
    const next = (await me.post('/me/passkeys/options')).json();
    expect(next.excludeCredentials).toEqual([{ id: row!.credential_id, transports: ['internal'], type: 'public-key' }]);
    const [event] = await eventsOf(t, env, 'user.passkey_added');
    expect(event).toMatchObject({ metadata: { passkeyId: passkey.id, deviceType: 'multiDevice' } });
  });

  it('needs a recent authentication (403 reauthentication_required) and refuses an impersonated session (403 impersonation_restricted)', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const me = t.client(env, { token: (await t.given.session(env, user)).token });
    t.clock.advance(PAST_RECENT_MS);
    expectProblem(await me.post('/me/passkeys/options'), 403, 'reauthentication_required');
    expectProblem(await me.post('/me/passkeys', { response: createSoftwareAuthenticator().create({ challenge: 'x', rp: { id: 'x' }, user: { id: 'x' } }, originOf(env)) }), 403, 'reauthentication_required');

    const { env: other, impersonated } = await impersonatedSession(t);
    expectProblem(await t.client(other, { token: impersonated.token }).post('/me/passkeys/options'), 403, 'impersonation_restricted');
  });

  it('refuses an unknown challenge, a used one, another user\'s and another environment\'s with 400 invalid_passkey_challenge', async () => {
    const [env, otherEnv] = [await t.given.environment(), await t.given.environment()];
    const [ada, bob] = [await t.given.user(env), await t.given.user(env)];
    const adaMe = t.client(env, { token: (await t.given.session(env, ada)).token });
    const bobMe = t.client(env, { token: (await t.given.session(env, bob)).token });
    const device = createSoftwareAuthenticator();
    const options = (await adaMe.post('/me/passkeys/options')).json();

    const unknown = device.create({ ...options, challenge: 'bm90LWEtY2hhbGxlbmdl' }, originOf(env));
    expectProblem(await adaMe.post('/me/passkeys', { response: unknown }), 400, 'invalid_passkey_challenge');
    const theirs = (await t.client(otherEnv, { token: (await t.given.session(otherEnv, await t.given.user(otherEnv))).token }).post('/me/passkeys/options')).json();
    expectProblem(await adaMe.post('/me/passkeys', { response: device.create({ ...options, challenge: theirs.challenge }, originOf(env)) }), 400, 'invalid_passkey_challenge');
    expectProblem(await bobMe.post('/me/passkeys', { response: device.create(options, originOf(env)) }), 400, 'invalid_passkey_challenge');
    // Bob's attempt spent Ada's challenge: each challenge is good once, whatever the outcome.
    expectProblem(await adaMe.post('/me/passkeys', { response: device.create(options, originOf(env)) }), 400, 'invalid_passkey_challenge');

    const fresh = (await adaMe.post('/me/passkeys/options')).json();
    expect((await adaMe.post('/me/passkeys', { response: device.create(fresh, originOf(env)) })).statusCode).toBe(201);
    expectProblem(await adaMe.post('/me/passkeys', { response: device.create(fresh, originOf(env)) }), 400, 'invalid_passkey_challenge');
  });

  it('refuses a challenge past its 5 minutes with 400 invalid_passkey_challenge', async () => {
    const env = await t.given.environment();
    const me = t.client(env, { token: (await t.given.session(env, await t.given.user(env))).token });
    const options = (await me.post('/me/passkeys/options')).json();
    t.clock.advance(5 * 60_000 + 1);
    expectProblem(await me.post('/me/passkeys', { response: createSoftwareAuthenticator().create(options, originOf(env)) }), 400, 'invalid_passkey_challenge');
  });

  it('refuses a response from another origin, for another RP ID or without user verification with 400 invalid_passkey', async () => {
    const env = await t.given.environment();
    const me = t.client(env, { token: (await t.given.session(env, await t.given.user(env))).token });
    const attempt = async (make: (options: { challenge: string; rp: { id: string }; user: { id: string } }) => unknown) =>
      me.post('/me/passkeys', { response: make((await me.post('/me/passkeys/options')).json()) });

    expectProblem(await attempt((o) => createSoftwareAuthenticator().create(o, 'https://evil.example')), 400, 'invalid_passkey');
    expectProblem(await attempt((o) => createSoftwareAuthenticator().create({ ...o, rp: { id: 'evil.example' } }, originOf(env))), 400, 'invalid_passkey');
    expectProblem(await attempt((o) => createSoftwareAuthenticator({ userVerified: false }).create(o, originOf(env))), 400, 'invalid_passkey');
    expect((await me.get('/me/passkeys')).json()).toEqual({ items: [] });
  });

  it('refuses the same credential twice with 409 passkey_already_registered', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    const { authenticator } = await registerPasskey(t, env, session.token);
    const me = t.client(env, { token: session.token });
    const options = (await me.post('/me/passkeys/options')).json();
    const again = authenticator.create(options, originOf(env), authenticator.credentials[0]);
    expectProblem(await me.post('/me/passkeys', { response: again }), 409, 'passkey_already_registered');
    expect((await me.get('/me/passkeys')).json().items).toHaveLength(1);
  });

  it('answers 403 passkeys_disabled where the setting passkeys.enabled is false, and GET /_svc/environment says so', async () => {
    const on = await t.given.environment();
    expect((await t.client(on).get('/environment')).json().passkeys).toEqual({ enabled: true });
    const env = await t.given.environment({ passkeys: { enabled: false } });
    const me = t.client(env, { token: (await t.given.session(env, await t.given.user(env))).token });
    expect((await t.client(env).get('/environment')).json().passkeys).toEqual({ enabled: false });
    expectProblem(await me.post('/me/passkeys/options'), 403, 'passkeys_disabled');
    expectProblem(await t.client(env).post('/auth/passkey/options', {}), 403, 'passkeys_disabled');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createSoftwareAuthenticator } from '../helpers/software-authenticator.js';
import { eventsOf, expectProblem, originOf, passkeySignIn, registerPasskey, signInOptions } from './support.js';

describe('signing in with a passkey', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const challengesOf = (env: { id: string }) =>
    t.db.selectFrom('passkey_challenges').select('challenge_hash').where('environment_id', '=', env.id).execute().then((rows) => rows.length);

  async function userWithPasskey(settings: Record<string, unknown> = {}, options: Parameters<typeof registerPasskey>[3] = {}) {
    const env = await t.given.environment(settings);
    const user = await t.given.user(env, { email: `u-${Math.random().toString(36).slice(2)}@example.com` });
    const session = await t.given.session(env, user);
    return { env, user, session, ...(await registerPasskey(t, env, session.token, options)) };
  }

  it('answers request options that are always discoverable, the same shape for a known email, an unknown one and none', async () => {
    const { env, user } = await userWithPasskey();
    const shapes = await Promise.all([undefined, user.email!, 'nobody@example.com'].map(async (email) => {
      const options = await signInOptions(t, env, email);
      expect(options).toEqual({ rpId: env.frontendHost.replace(/:\d+$/, ''), challenge: expect.stringMatching(/^[\w-]{55}$/), timeout: 300000, userVerification: 'required' });
      return Object.keys(options).sort();
    }));
    expect(new Set(shapes.map(String)).size).toBe(1);
    const bare = await t.app.inject({ method: 'POST', url: '/_svc/auth/passkey/options', headers: { host: env.frontendHost } });
    expect(bare.statusCode, bare.body).toBe(200);
  });

  it('answers 429 rate_limited with Retry-After past 60 options a minute from one client network, and stores no challenge for any of them', async () => {
    const env = await t.given.environment();
    const ask = (ip: string) => t.client(env).post('/auth/passkey/options', {}, { remoteAddress: ip });
    const answers = await Promise.all(Array.from({ length: 70 }, () => ask('203.0.113.7')));
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(60);
    const refused = answers.filter((r) => r.statusCode !== 200);
    expect(refused).toHaveLength(10);
    for (const res of refused) {
      expectProblem(res, 429, 'rate_limited');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    expect((await ask('198.51.100.8')).statusCode).toBe(200);
    expect(await challengesOf(env)).toBe(0);
    t.clock.advance(60_000);
    expect((await ask('203.0.113.7')).statusCode).toBe(200);
  });

  it('stores a sign-in challenge only once a sign-in used it, and a response refused by a check leaves it to a valid one', async () => {
    const { env, authenticator } = await userWithPasskey();
    const before = await challengesOf(env);
    const options = await signInOptions(t, env);
    const assertion = authenticator.get(options, originOf(env));
    const forged = { ...assertion, response: { ...assertion.response, signature: Buffer.from('forged').toString('base64url') } };
    expectProblem(await t.client(env).post('/auth/passkey', { response: forged }), 400, 'invalid_passkey');
    expect(await challengesOf(env)).toBe(before);
    expect((await t.client(env).post('/auth/passkey', { response: assertion })).statusCode).toBe(200);
    expect(await challengesOf(env)).toBe(before + 1);
    expectProblem(await t.client(env).post('/auth/passkey', { response: authenticator.get(options, originOf(env)) }), 400, 'invalid_passkey_challenge');
  });

  it('starts a session complete without a second factor, recently authenticated, amr hwk for a device-bound key, and records user.signed_in with method passkey', async () => {
    const { env, user, authenticator, passkey } = await userWithPasskey();

    const res = await passkeySignIn(t, env, authenticator);

    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().user.id).toBe(user.id);
    expect(res.json().session.amr).toEqual(['hwk', 'user', 'mfa']);
    const me = t.client(env, { token: res.json().sessionToken });
    // A sensitive change goes through: the passkey counts as a recent authentication.
    expect((await me.post('/me/passkeys/options')).statusCode).toBe(200);
    const [row] = await t.db.selectFrom('passkeys').selectAll().where('id', '=', passkey.id).execute();
    expect(row).toMatchObject({ counter: 1, last_used_at: t.clock.now() });
    const events = await eventsOf(t, env, 'user.signed_in');
    expect(events.at(-1)).toMatchObject({ metadata: { method: 'passkey', passkeyId: passkey.id } });
  });

  it('says swk for a synced (backup-eligible) passkey, and works with an authenticator that keeps no counter', async () => {
    const { env, authenticator } = await userWithPasskey({}, { synced: true, counterStep: 0 });
    for (let i = 0; i < 2; i += 1) {
      const res = await passkeySignIn(t, env, authenticator);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().session.amr).toEqual(['swk', 'user', 'mfa']);
    }
  });

  it('signs in with the email of the passkey\'s account, and refuses another account\'s passkey or an unknown email\'s challenge with 400 invalid_passkey', async () => {
    const { env, user, authenticator } = await userWithPasskey();
    expect((await passkeySignIn(t, env, authenticator, user.email!)).statusCode).toBe(200);
    const other = await t.given.user(env, { email: 'other@example.com' });
    expectProblem(await passkeySignIn(t, env, authenticator, other.email!), 400, 'invalid_passkey');
    expectProblem(await passkeySignIn(t, env, authenticator, 'nobody@example.com'), 400, 'invalid_passkey');
  });

  it('is never held to enrolment where mfa.policy is required, and registering a passkey frees a session held to it', async () => {
    const env = await t.given.environment({ mfa: { policy: 'required' } });
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    const me = t.client(env, { token: session.token });
    expectProblem(await me.get('/sessions'), 403, 'mfa_enrolment_required');

    const { authenticator } = await registerPasskey(t, env, session.token);

    expect((await me.get('/sessions')).statusCode).toBe(200);
    const signedIn = await passkeySignIn(t, env, authenticator);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect((await t.client(env, { token: signedIn.json().sessionToken }).get('/sessions')).statusCode).toBe(200);
  });

  it('refuses a reused challenge, an unknown one and another environment\'s with 400 invalid_passkey_challenge', async () => {
    const { env, authenticator } = await userWithPasskey();
    const other = await t.given.environment();
    const options = await signInOptions(t, env);
    const assertion = authenticator.get(options, originOf(env));
    expect((await t.client(env).post('/auth/passkey', { response: assertion })).statusCode).toBe(200);
    expectProblem(await t.client(env).post('/auth/passkey', { response: authenticator.get(options, originOf(env)) }), 400, 'invalid_passkey_challenge');
    expectProblem(await t.client(env).post('/auth/passkey', { response: authenticator.get({ ...options, challenge: 'bm9uZQ' }, originOf(env)) }), 400, 'invalid_passkey_challenge');
    const theirs = await signInOptions(t, other);
    expectProblem(await t.client(env).post('/auth/passkey', { response: authenticator.get({ ...theirs, rpId: options.rpId }, originOf(env)) }), 400, 'invalid_passkey_challenge');
    t.clock.advance(5 * 60_000 + 1);
    const late = authenticator.get(await signInOptions(t, env).then((o) => { t.clock.advance(5 * 60_000 + 1); return o; }), originOf(env));
    expectProblem(await t.client(env).post('/auth/passkey', { response: late }), 400, 'invalid_passkey_challenge');
  });

  it('refuses a passkey of another environment (another frontend host) with 400 invalid_passkey', async () => {
    const { authenticator } = await userWithPasskey();
    const other = await t.given.environment();
    const options = await signInOptions(t, other);
    // Whether the browser would offer it (another RP ID) or not, the credential is unknown there.
    expectProblem(await t.client(other).post('/auth/passkey', { response: authenticator.get(options, originOf(other)) }), 400, 'invalid_passkey');
  });

  it('refuses a bad signature, another origin, another RP ID, no user verification and a counter that went backwards with 400 invalid_passkey', async () => {
    const { env, authenticator } = await userWithPasskey();
    const attempt = async (change: (assertion: ReturnType<typeof authenticator.get>) => unknown, origin = originOf(env), rpId?: string) => {
      const options = await signInOptions(t, env);
      return t.client(env).post('/auth/passkey', { response: change(authenticator.get({ ...options, ...(rpId && { rpId }) }, origin)) });
    };
    const flip = (b64: string) => { const bytes = Buffer.from(b64, 'base64url'); bytes[bytes.length - 1]! ^= 1; return bytes.toString('base64url'); };
    expectProblem(await attempt((a) => ({ ...a, response: { ...a.response, signature: flip(a.response.signature) } })), 400, 'invalid_passkey');
    expectProblem(await attempt((a) => a, 'https://evil.example'), 400, 'invalid_passkey');
    expectProblem(await attempt((a) => a, originOf(env), 'evil.example'), 400, 'invalid_passkey');
    const unverified = createSoftwareAuthenticator({ userVerified: false });
    unverified.credentials.push(authenticator.credentials[0]!);
    expectProblem(await t.client(env).post('/auth/passkey', { response: unverified.get(await signInOptions(t, env), originOf(env)) }), 400, 'invalid_passkey');
    expect((await attempt((a) => a)).statusCode).toBe(200);
    authenticator.credentials[0]!.counter = 0;
    expectProblem(await attempt((a) => a), 400, 'invalid_passkey');
    expectProblem(await attempt((a) => ({ ...a, id: 'AAAA', rawId: 'AAAA' })), 400, 'invalid_passkey');
  });

  it('starts one session when one assertion is sent twice at once, and one when two assertions carry the same counter', async () => {
    const { env, authenticator, user } = await userWithPasskey();
    const sessions = () => t.db.selectFrom('sessions').select('id').where('environment_id', '=', env.id).where('user_id', '=', user.id).execute().then((rows) => rows.length);
    const before = await sessions();
    const assertion = authenticator.get(await signInOptions(t, env), originOf(env));
    const twice = await Promise.all([0, 1].map(() => t.client(env).post('/auth/passkey', { response: assertion })));
    expect(twice.map((r) => r.statusCode).sort()).toEqual([200, 400]);
    expect(await sessions()).toBe(before + 1);

    const credential = authenticator.credentials[0]!;
    const [first, second] = [await signInOptions(t, env), await signInOptions(t, env)];
    const a = authenticator.get(first, originOf(env));
    credential.counter -= 1;
    const b = authenticator.get(second, originOf(env));
    const racing = await Promise.all([a, b].map((response) => t.client(env).post('/auth/passkey', { response })));
    expect(racing.map((r) => r.statusCode).sort()).toEqual([200, 400]);
    expect(await sessions()).toBe(before + 2);
  });

  it('refuses a banned user with 403 user_banned', async () => {
    const { env, user, authenticator } = await userWithPasskey();
    await t.server(env).post(`/users/${user.id}/ban`);
    expectProblem(await passkeySignIn(t, env, authenticator), 403, 'user_banned');
  });
});

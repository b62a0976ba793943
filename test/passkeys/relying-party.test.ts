import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { createSoftwareAuthenticator } from '../helpers/software-authenticator.js';
import { expectProblem, originOf } from './support.js';

// Hosts unique to this run: a PostgreSQL test database outlives it.
const tag = randomUUID().slice(0, 8);

describe('the relying party: RP ID and origins', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  async function environment(frontendHost: string, settings: Record<string, unknown> = {}, origins: string[] = []): Promise<TestEnv> {
    const created = await t.admin.post('/environments', { name: frontendHost, frontendHost, settings });
    expect(created.statusCode, created.body).toBe(201);
    const env = { ...created.json(), name: frontendHost } as TestEnv;
    if (origins.length > 0) await t.server(env).put('/allowed-origins', { origins });
    return env;
  }

  const register = async (env: TestEnv, origin: string) => {
    const me = t.client(env, { token: (await t.given.session(env, await t.given.user(env))).token });
    const options = (await me.post('/me/passkeys/options')).json();
    const device = createSoftwareAuthenticator();
    return { options, device, res: await me.post('/me/passkeys', { response: device.create(options, origin) }) };
  };

  it('scopes passkeys to a parent domain set as passkeys.rpId, accepting ceremonies from allowed origins inside it only', async () => {
    const env = await environment(`auth.acme-rp-${tag}.test`, { passkeys: { rpId: `acme-rp-${tag}.test` } }, [`https://app.acme-rp-${tag}.test`, 'https://elsewhere.test']);

    const fromApp = await register(env, `https://app.acme-rp-${tag}.test`);
    expect(fromApp.options.rp.id).toBe(`acme-rp-${tag}.test`);
    expect(fromApp.res.statusCode, fromApp.res.body).toBe(201);
    expectProblem((await register(env, 'https://elsewhere.test')).res, 400, 'invalid_passkey');

    const request = (await t.client(env).post('/auth/passkey/options', {})).json();
    expect(request.rpId).toBe(`acme-rp-${tag}.test`);
    const signedIn = await t.client(env).post('/auth/passkey', { response: fromApp.device.get(request, `https://auth.acme-rp-${tag}.test`) });
    expect(signedIn.statusCode, signedIn.body).toBe(200);
  });

  it('accepts a ceremony from an allowed origin on the frontend host\'s name and another port (a dev server), not from another host', async () => {
    const env = await environment(`rp-dev-${tag}.localhost:3000`, {}, [`http://rp-dev-${tag}.localhost:5173`, 'http://app.localhost:5173']);
    expect((await register(env, `http://rp-dev-${tag}.localhost:5173`)).res.statusCode).toBe(201);
    expectProblem((await register(env, 'http://app.localhost:5173')).res, 400, 'invalid_passkey');
    expect((await register(env, originOf(env))).res.statusCode).toBe(201);
  });

  it('accepts ceremonies from https only on a frontend host that is not a loopback host: its http origin and an http allowed origin are refused', async () => {
    const host = `auth.acme-tls-${tag}.test`;
    const env = await environment(host, { passkeys: { rpId: `acme-tls-${tag}.test` } }, [`http://app.acme-tls-${tag}.test`]);
    expectProblem((await register(env, `http://${host}`)).res, 400, 'invalid_passkey');
    expectProblem((await register(env, `http://app.acme-tls-${tag}.test`)).res, 400, 'invalid_passkey');
    const secure = await register(env, `https://${host}`);
    expect(secure.res.statusCode, secure.res.body).toBe(201);

    const signIn = async (origin: string) => {
      const request = (await t.client(env).post('/auth/passkey/options', {})).json();
      return t.client(env).post('/auth/passkey', { response: secure.device.get(request, origin) });
    };
    expectProblem(await signIn(`http://${host}`), 400, 'invalid_passkey');
    const signedIn = await signIn(`https://${host}`);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
  });

  it('accepts ceremonies over http from a loopback frontend host (localhost, 127.0.0.1): a developer\'s machine is a secure context', async () => {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      const env = await environment(host);
      const { res } = await register(env, `http://${host}`);
      expect(res.statusCode, `${host}: ${res.body}`).toBe(201);
    }
  });

  it('refuses an RP ID that is not the frontend host\'s name or a parent domain of it, when either changes', async () => {
    for (const rpId of ['other.test', 'test', `uth.acme-x-${tag}.test`]) {
      const res = await t.admin.post('/environments', { name: 'x', frontendHost: `auth.acme-x-${tag}.test`, settings: { passkeys: { rpId } } });
      expect(res.statusCode, rpId).toBe(400);
      expect(res.json().properties.errors).toEqual([{ path: '/body/settings/passkeys/rpId', message: expect.stringContaining('parent domain') }]);
    }
    expect((await t.admin.post('/environments', { name: 'x', frontendHost: `auth.acme-x-${tag}.test`, settings: { passkeys: { rpId: 'Acme-X.test' } } })).statusCode).toBe(400);

    const env = await environment(`auth.acme-y-${tag}.test`, { passkeys: { rpId: `acme-y-${tag}.test` } });
    expect((await t.admin.patch(`/environments/${env.id}`, { frontendHost: `login.acme-y-${tag}.test` })).statusCode).toBe(200);
    const moved = await t.admin.patch(`/environments/${env.id}`, { frontendHost: `auth.other-y-${tag}.test` });
    expect(moved.statusCode, moved.body).toBe(400);
    expect((await t.admin.get(`/environments/${env.id}`)).json().frontendHost).toBe(`login.acme-y-${tag}.test`);
    expect((await t.admin.patch(`/environments/${env.id}`, { settings: { passkeys: { rpId: null } } })).json().settings.passkeys).toEqual({ enabled: true, rpId: null });
  });
});

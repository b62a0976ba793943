import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerProcess } from '../helpers/processes.js';
import { authorizeAt, startScriptableProvider, type ScriptableProvider } from '../helpers/scriptable-provider.js';
import { startServerPair, type PairEnv, type ServerPair } from '../helpers/server-pair.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
const LANDING = 'https://app.example.com/home';

describe.skipIf(!TEST_DATABASE_URL)('external sign-in with several server processes on one PostgreSQL (needs TEST_DATABASE_URL)', () => {
  let pair: ServerPair;
  let fake: ScriptableProvider;
  beforeAll(async () => { [pair, fake] = await Promise.all([startServerPair(TEST_DATABASE_URL!), startScriptableProvider()]); });
  afterAll(async () => { await pair?.stop(); await fake?.close(); });

  async function givenEnvironment(): Promise<PairEnv> {
    const res = await pair.admin(pair.a, 'POST', '/environments', { name: `oauth-${randomBytes(4).toString('hex')}` });
    expect(res.status).toBe(201);
    const env: PairEnv = res.json();
    expect((await pair.serverApi(pair.a, env, 'PUT', '/allowed-origins', { origins: ['https://app.example.com'] })).status).toBe(200);
    const put = await pair.admin(pair.b, 'PUT', `/environments/${env.id}/oauth-providers/acme`, {
      type: 'oidc', name: 'Acme', clientId: fake.clientId, clientSecret: fake.clientSecret, issuer: fake.issuer,
    });
    expect(put.status).toBe(201);
    return env;
  }

  /** Starts a sign-in through the process and completes it at the provider: the callback path and the browser cookie. */
  async function authorizedFlow(server: ServerProcess, env: PairEnv) {
    const res = await pair.client(server, env, 'GET', `/auth/oauth2/acme/authorize?redirect_url=${encodeURIComponent(LANDING)}`);
    expect(res.status).toBe(302);
    const cookie = (res.headers['set-cookie'] ?? []).find((c) => c.startsWith('__oauth_browser='))!.split(';')[0];
    const back = await authorizeAt(new URL(res.headers.location!));
    return { path: `${back.pathname}${back.search}`, cookie };
  }

  const finish = (server: ServerProcess, env: PairEnv, flow: { path: string; cookie: string }) =>
    pair.call(server, { path: flow.path, host: env.frontendHost, headers: { cookie: flow.cookie } });

  it('makes one user for ten concurrent callbacks of one new subject spread over every process, each signed in', async () => {
    fake.reset();
    fake.script.claims.sub = `sub-${randomBytes(6).toString('hex')}`;
    const env = await givenEnvironment();
    const flows = await Promise.all(Array.from({ length: 10 }, (_, i) => authorizedFlow(pair.roundRobin(i), env)));
    // Each callback comes back to another process than the one that started its flow.
    const results = await Promise.all(flows.map((flow, i) => finish(pair.roundRobin(i + 1), env, flow)));

    expect(results.map((r) => r.status)).toEqual(Array(10).fill(303));
    expect(results.every((r) => r.headers.location === LANDING && (r.headers['set-cookie'] ?? []).some((c) => c.startsWith('__session=sess_')))).toBe(true);
    const users = (await pair.serverApi(pair.a, env, 'GET', '/users?limit=100')).json().items;
    expect(users).toHaveLength(1);
    expect((await pair.serverApi(pair.b, env, 'GET', `/users/${users[0].id}/identities`)).json().items).toHaveLength(1);
    expect((await pair.serverApi(pair.a, env, 'GET', `/users/${users[0].id}/sessions?limit=100`)).json().items).toHaveLength(10);
  });

  it('finishes a callback once when it is replayed ten times at once, spread over every process', async () => {
    fake.reset();
    fake.script.claims.sub = `sub-${randomBytes(6).toString('hex')}`;
    const env = await givenEnvironment();
    const flow = await authorizedFlow(pair.a, env);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => finish(pair.roundRobin(i), env, flow)));

    expect(results.filter((r) => r.status === 303)).toHaveLength(1);
    const refused = results.filter((r) => r.status === 400);
    expect(refused).toHaveLength(9);
    expect(refused.every((r) => r.json().properties.code === 'invalid_state')).toBe(true);
    expect(fake.tokenRequests).toHaveLength(1);
  });
});

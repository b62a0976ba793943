import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerPair, type PairEnv, type ServerPair } from '../helpers/server-pair.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

describe.skipIf(!TEST_DATABASE_URL)('impersonation with several server processes on one PostgreSQL (needs TEST_DATABASE_URL)', () => {
  let pair: ServerPair;
  beforeAll(async () => { pair = await startServerPair(TEST_DATABASE_URL!); });
  afterAll(() => pair?.stop());

  async function cast(settings: Record<string, unknown>) {
    const res = await pair.admin(pair.a, 'POST', '/environments', { name: `imp-${randomBytes(4).toString('hex')}`, settings });
    expect(res.status).toBe(201);
    const env: PairEnv = res.json();
    const user = async () => (await pair.serverApi(pair.a, env, 'POST', '/users', { email: `u-${randomBytes(6).toString('hex')}@example.com` })).json().id as string;
    return { env, target: await user(), actor: await user() };
  }

  it('never mints one over the monthly quota under 50 concurrent mints spread over every process', async () => {
    const { env, target, actor } = await cast({ plan: { impersonationQuotaPerMonth: 20 } });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      pair.serverApi(pair.roundRobin(i), env, 'POST', `/users/${target}/impersonation-token`, { actorUserId: actor, reason: `race ${i}` })));

    expect(results.filter((r) => r.status === 201)).toHaveLength(20);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(30);
    expect(refused.every((r) => r.json().properties.code === 'impersonation_quota_exhausted' && Number(r.headers['retry-after']) > 0)).toBe(true);
    const ledger = (await pair.serverApi(pair.b, env, 'GET', '/impersonations?limit=100')).json().items;
    expect(ledger).toHaveLength(20);
    expect((await pair.serverApi(pair.a, env, 'GET', '/impersonations/usage')).json()).toMatchObject({ used: 20, remaining: 0 });
  });

  it('starts exactly one session under 10 concurrent redeems of one token spread over every process', async () => {
    const { env, target, actor } = await cast({});
    const { token, id } = (await pair.serverApi(pair.a, env, 'POST', `/users/${target}/impersonation-token`, { actorUserId: actor, reason: 'race' })).json();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      pair.client(pair.roundRobin(i), env, 'POST', '/auth/session/impersonate?_is_native=true', { token })));

    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401 && r.json().properties.code === 'invalid_token')).toHaveLength(9);
    const sessions = (await pair.serverApi(pair.b, env, 'GET', `/users/${target}/sessions`)).json().items;
    expect(sessions).toHaveLength(1);
    expect((await pair.serverApi(pair.a, env, 'GET', `/impersonations/${id}`)).json()).toMatchObject({ status: 'redeemed', redemption: { sessionId: sessions[0].id } });
  });
});

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerPair, type PairEnv, type ServerPair } from '../helpers/server-pair.js';
import { PASSWORD } from '../helpers/given.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
const HOUR_MS = 3_600_000;

describe.skipIf(!TEST_DATABASE_URL)('invitations with several server processes on one PostgreSQL (needs TEST_DATABASE_URL)', () => {
  let pair: ServerPair;
  beforeAll(async () => { pair = await startServerPair(TEST_DATABASE_URL!); });
  afterAll(() => pair?.stop());

  async function invitingEnvironment(settings: Record<string, unknown> = {}): Promise<PairEnv> {
    const res = await pair.admin(pair.a, 'POST', '/environments', {
      name: `mp-${randomBytes(4).toString('hex')}`, settings: { signUpUrl: 'https://app.example.com/sign-up', ...settings },
    });
    expect(res.status).toBe(201);
    return res.json();
  }
  const email = () => `invitee-${randomBytes(6).toString('hex')}@example.com`;
  const create = (server: ServerPair['a'], env: PairEnv) =>
    pair.serverApi(server, env, 'POST', '/invitations', { email: email(), publicMetadata: {}, privateMetadata: {} });

  /** The fixed hourly window must not roll over mid-test: wait for the next hour when it is about to. */
  async function awayFromHourBoundary() {
    const left = HOUR_MS - (Date.now() % HOUR_MS);
    if (left < 15_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
  }

  it('admits exactly invitationRateLimitPerHour of 30 concurrent creates spread over every process; the rest get 429 with Retry-After', async () => {
    const env = await invitingEnvironment({ invitationRateLimitPerHour: 10 });
    await awayFromHourBoundary();
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => create(pair.roundRobin(i), env)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    const limited = results.filter((r) => r.status === 429);
    expect(limited).toHaveLength(20);
    for (const res of limited) {
      expect(res.json().properties.code).toBe('rate_limited');
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(3600);
    }
    const listed = await pair.serverApi(pair.a, env, 'GET', '/invitations?limit=100');
    expect(listed.json().items).toHaveLength(10);
  });

  it('lets an invitation token work exactly once under 20 concurrent redeems spread over every process', async () => {
    const env = await invitingEnvironment();
    const address = email();
    expect((await pair.serverApi(pair.a, env, 'POST', '/invitations', { email: address, publicMetadata: {}, privateMetadata: {} })).status).toBe(201);
    const outbox = await pair.admin(pair.a, 'GET', `/environments/${env.id}/outbox?to=${encodeURIComponent(address)}`);
    const token = new URL(/https:\/\/\S+/.exec(outbox.json().items[0].text)![0]).searchParams.get('invitation_token');
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      pair.client(pair.roundRobin(i), env, 'POST', '/auth/invitation/password-signup?_is_native=true', {
        token, password: PASSWORD, legalConsentAccepted: true,
      })));
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(19).fill(409)]);
    const users = await pair.serverApi(pair.b, env, 'GET', `/users?emailSearch=${encodeURIComponent(address)}`);
    expect(users.json().items).toHaveLength(1);
  });
});

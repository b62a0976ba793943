import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/given.js';
import { eventually } from '../helpers/eventually.js';
import { startServerPair, type PairEnv, type ServerPair } from '../helpers/server-pair.js';

// The sign-in budgets are reserved in the database before the hash, so they must hold when a burst is
// spread over several processes, not only within one. PGlite is one process's file: PostgreSQL only.
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
const WRONG = 'not the password at all';

describe.skipIf(!TEST_DATABASE_URL)('password sign-in bursts through several server processes on one PostgreSQL (needs TEST_DATABASE_URL)', () => {
  let pair: ServerPair;
  beforeAll(async () => { pair = await startServerPair(TEST_DATABASE_URL!); });
  afterAll(() => pair?.stop());

  const signIn = (i: number, env: PairEnv, email: string, password: string) =>
    pair.client(pair.roundRobin(i), env, 'POST', '/auth/sign-in?_is_native=true', { email, password });

  async function failedSignIns(env: PairEnv, userId: string) {
    const res = await pair.serverApi(pair.b, env, 'GET', '/audit-events/feed?limit=100');
    expect(res.status).toBe(200);
    return (res.json().items as Array<{ action: string; targets: Array<{ id: string }>; metadata: { reason: string; locked: boolean } }>)
      .filter((e) => e.action === 'user.sign_in_failed' && e.targets[0]!.id === userId);
  }

  it('evaluates exactly maxFailedAttempts of 30 concurrent wrong guesses spread over every process, then refuses the right password on each', async () => {
    const env = await pair.environment();
    const ada = await pair.user(env);

    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => signIn(i, env, ada.email, `${WRONG} ${i}`)));

    expect(burst.map((r) => r.status)).toEqual(Array(30).fill(401));
    expect(burst.every((r) => r.json().properties.code === 'invalid_credentials')).toBe(true);
    // A refusal's trail is written just after its answer (enumeration by timing): wait for all of it.
    const failed = await eventually(async () => {
      const events = await failedSignIns(env, ada.id);
      expect(events).toHaveLength(10);
      return events;
    }, { interval: 20 });
    expect(failed.every((e) => e.metadata.reason === 'invalid_password')).toBe(true);
    expect(failed.some((e) => e.metadata.locked)).toBe(true);
    for (const i of pair.servers.keys()) expect((await signIn(i, env, ada.email, PASSWORD)).status).toBe(401);
  });

  it('evaluates exactly ipMaxFailures of 20 concurrent guesses from one IP spread over every process and answers the rest 429', async () => {
    // The IP budget is a fixed window on the wall clock (windows start at multiples of its length since the
    // epoch) and these processes run on real time: with 10-minute windows, a run whose few seconds straddled a
    // window's end saw the budget twice, or the right password let in. A day's window ends at UTC midnight only.
    const env = await pair.environment({ lockout: { ipMaxFailures: 4, ipWindowSeconds: 86_400 } });
    const ada = await pair.user(env);

    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => signIn(i, env, ada.email, `${WRONG} ${i}`)));

    const statuses = burst.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(4);
    const refused = burst.filter((r) => r.status === 429);
    expect(refused).toHaveLength(16);
    expect(refused.every((r) => r.json().properties.code === 'rate_limited' && Number(r.headers['retry-after']) > 0)).toBe(true);
    await eventually(async () => expect(await failedSignIns(env, ada.id)).toHaveLength(4), { interval: 20 });
    for (const i of pair.servers.keys()) expect((await signIn(i, env, ada.email, PASSWORD)).status).toBe(429);
  });
});

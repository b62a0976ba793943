import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';

const TRIES = 200;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[(sorted.length - 1) >> 1]! + sorted[sorted.length >> 1]!) / 2;
};

/**
 * Whether an account exists must not show in how long the answer takes. Each pair of tries asks once for
 * an account and once for an unknown email, in alternating order, each from its own address (so no
 * per-IP or per-email budget runs out), and waits for the work left after the answer before the next
 * pair, so that work never lands inside a timing. Within a pair, the account's try may take longer than the
 * unknown email's by at most 12% of the unknown's median (or 0.5 ms), in the median over the pairs; while the answers waited on the account's writes it was 22% more for a wrong
 * password and 65% more for forgot-password here on PostgreSQL (over HTTP, 39% and 81%).
 */
async function medians(t: TestApp, env: TestEnv, request: (email: string, ip: string) => Promise<unknown>, accounts: string[]) {
  const times = { account: [] as number[], unknown: [] as number[] };
  for (let i = 0; i < TRIES; i++) {
    const tries = [['account', accounts[i % accounts.length]!], ['unknown', `nobody-${i}@example.com`]] as const;
    for (const [kind, email] of i % 2 === 0 ? tries : [...tries].reverse()) {
      const started = performance.now();
      await request(email, `198.18.${i >> 6}.${(i % 64) * 4 + (kind === 'account' ? 1 : 2)}`);
      times[kind].push(performance.now() - started);
      await t.app.settled();
    }
  }
  // The difference within each pair, whose two tries ran back to back: a machine whose load drifts over the
  // run (other test files in parallel) moves both alike, where it would move two separate medians apart.
  const differences = times.account.map((account, i) => account - times.unknown[i]!);
  return { account: median(times.account), unknown: median(times.unknown), difference: median(differences) };
}

const expectAlike = ({ account, unknown, difference }: { account: number; unknown: number; difference: number }) => {
  expect(difference, `median ${account.toFixed(2)} ms for an account, ${unknown.toFixed(2)} ms for none, ${difference.toFixed(2)} ms apart within a pair`)
    .toBeLessThanOrEqual(Math.max(0.5, 0.12 * unknown));
};

describe('enumeration by timing', () => {
  let t: TestApp;
  let env: TestEnv;
  beforeAll(async () => {
    t = await startTestApp();
    env = await t.given.environment({ lockout: { maxFailedAttempts: 1_000_000, ipMaxFailures: 1_000_000 } });
  });
  afterAll(() => t.close());

  const post = (path: string, body: object, ip: string) =>
    t.app.inject({ method: 'POST', url: `/_svc${path}`, headers: { host: env.frontendHost }, remoteAddress: ip, payload: body });

  it('a wrong password takes as long for an account as for an unknown email (medians of 200 tries each)', async () => {
    const user = await t.given.user(env);
    const timing = await medians(t, env, async (email, ip) => {
      const res = await post('/auth/sign-in', { email, password: 'not the password, surely' }, ip);
      expect(res.statusCode).toBe(401);
    }, [user.email!]);
    expectAlike(timing);
  });

  it('forgot-password takes as long for an account as for an unknown email (medians of 200 tries each)', async () => {
    // The per-email limit (5 an hour) would answer 429 to both alike: one account per try.
    const accounts = await Promise.all(Array.from({ length: TRIES }, async (_, i) => (await t.given.user(env, { email: `reset-${i}@example.com` })).email!));
    const timing = await medians(t, env, async (email, ip) => {
      const res = await post('/auth/forgot-password', { email }, ip);
      expect(res.statusCode).toBe(202);
    }, accounts);
    expectAlike(timing);
    expect(await t.outbox(env, accounts[0]!)).toHaveLength(1);
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { append, customerEvents, eventBody } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

const POLICY = '"audit";q=600;w=60';

/** An attempt the limit counts but nothing else accepts: no Idempotency-Key (400). */
const cheapAttempt = (env: TestEnv) => append(t, env, eventBody(t), null);

async function useUp(env: TestEnv, attempts: number) {
  for (let done = 0; done < attempts; done += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, attempts - done) }, () => cheapAttempt(env)));
    for (const res of batch) expect(res.statusCode).toBe(400);
  }
}

describe('audit append rate limit: 600 attempts per environment per UTC minute', () => {
  it('sends RateLimit-Policy and RateLimit (remaining, seconds to the window end) on every append answer', async () => {
    const env = await t.given.environment();
    t.clock.set('2026-11-22T10:00:15.250Z');

    const accepted = await append(t, env, eventBody(t));
    const refused = await cheapAttempt(env);

    expect(accepted.statusCode).toBe(201);
    expect(accepted.headers['ratelimit-policy']).toBe(POLICY);
    expect(accepted.headers.ratelimit).toBe('"audit";r=599;t=45');
    expect(refused.statusCode).toBe(400);
    expect(refused.headers['ratelimit-policy']).toBe(POLICY);
    expect(refused.headers.ratelimit).toBe('"audit";r=598;t=45');
  });

  it('accepts the 600th attempt of a minute and answers the 601st with 429 rate_limited and Retry-After to the window end', async () => {
    const env = await t.given.environment();
    t.clock.set('2026-11-22T10:00:15.000Z');
    await useUp(env, 599);

    const last = await append(t, env, eventBody(t));
    expect(last.statusCode).toBe(201);
    expect(last.headers.ratelimit).toBe('"audit";r=0;t=45');

    t.clock.set('2026-11-22T10:00:59.500Z');
    const over = await append(t, env, eventBody(t));
    const problem = expectProblem(over, 429, 'rate_limited');
    expect(problem.properties).toEqual({ code: 'rate_limited', retryAfterSeconds: 1 });
    expect(over.headers['retry-after']).toBe('1');
    expect(over.headers['ratelimit-policy']).toBe(POLICY);
    expect(over.headers.ratelimit).toBe('"audit";r=0;t=1');
    expect(await customerEvents(t, env)).toHaveLength(1);

    t.clock.set('2026-11-22T10:01:00.000Z');
    const next = await append(t, env, eventBody(t));
    expect(next.statusCode).toBe(201);
    expect(next.headers.ratelimit).toBe('"audit";r=599;t=60');
  });

  it('counts every authenticated attempt: malformed JSON, a wrong content type, a bad key, an invalid body, a replay, a refusal', async () => {
    const env = await t.given.environment();
    t.clock.set('2026-11-22T11:00:00.000Z');
    const body = eventBody(t);
    const headers = { authorization: `Bearer ${env.secretKey}`, 'idempotency-key': randomUUID() };
    const attempts = [
      () => t.app.inject({ method: 'POST', url: '/api/server/v1/audit-events', headers: { ...headers, 'content-type': 'application/json' }, payload: '{"action":' }),
      () => t.app.inject({ method: 'POST', url: '/api/server/v1/audit-events', headers: { ...headers, 'content-type': 'text/plain' }, payload: 'hello' }),
      () => append(t, env, body, 'x'.repeat(300)),
      () => append(t, env, { ...body, action: 'Bad Action' }, 'k1'),
      () => append(t, env, body, 'k2'),
      () => append(t, env, body, 'k2'),
    ];
    const remaining: string[] = [];
    const statuses: number[] = [];
    for (const attempt of attempts) {
      const res = await attempt();
      statuses.push(res.statusCode);
      remaining.push(String(res.headers.ratelimit));
    }
    expect(statuses).toEqual([400, 415, 400, 400, 201, 201]);
    expect(remaining).toEqual([599, 598, 597, 596, 595, 594].map((r) => `"audit";r=${r};t=60`));
  });

  it('refuses a replay over the limit too: the limit counts requests, not events', async () => {
    const env = await t.given.environment();
    t.clock.set('2026-11-22T12:00:30.000Z');
    const body = eventBody(t);
    expect((await append(t, env, body, 'k')).statusCode).toBe(201);
    await useUp(env, 599);
    expectProblem(await append(t, env, body, 'k'), 429, 'rate_limited');
  });

  it('limits each environment on its own', async () => {
    const [busy, quiet] = [await t.given.environment(), await t.given.environment()];
    t.clock.set('2026-11-22T13:00:00.000Z');
    await useUp(busy, 600);
    expectProblem(await append(t, busy, eventBody(t)), 429, 'rate_limited');
    const res = await append(t, quiet, eventBody(t));
    expect(res.statusCode).toBe(201);
    expect(res.headers.ratelimit).toBe('"audit";r=599;t=60');
  });

  it('admits exactly 600 of 650 concurrent appends and stores exactly those', async () => {
    const env = await t.given.environment();
    t.clock.set('2026-11-22T14:00:00.000Z');
    const results = await Promise.all(Array.from({ length: 650 }, () => append(t, env, eventBody(t))));
    const byStatus = results.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.statusCode]: (acc[r.statusCode] ?? 0) + 1 }), {});
    expect(byStatus).toEqual({ 201: 600, 429: 50 });
    expect(await customerEvents(t, env)).toHaveLength(600);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditService } from '../../src/audit/service.js';
import { createMetrics } from '../../src/platform/metrics.js';
import { createRateLimiter } from '../../src/platform/rate-limit.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { append, customerEvents, eventBody, storedKeys } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

const HOUR = 3_600_000;

describe('Idempotency-Key on POST /api/server/v1/audit-events', () => {
  it('replays the stored event for the same key and body: same status and body, Idempotent-Replayed: true, one event', async () => {
    const env = await t.given.environment();
    const body = eventBody(t);
    const first = await append(t, env, body, 'order-1');
    t.clock.advance(1000);

    const again = await append(t, env, body, 'order-1');

    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.body).toBe(first.body);
    expect(await customerEvents(t, env)).toHaveLength(1);
  });

  it('treats bodies that differ only in key order, at any depth, as the same request', async () => {
    const env = await t.given.environment();
    const body = eventBody(t, { metadata: { a: 1, b: { c: 2, d: [1, { e: 3, f: 4 }] } } });
    const reordered = Object.fromEntries(Object.entries({ ...body, metadata: { b: { d: [1, { f: 4, e: 3 }], c: 2 }, a: 1 } }).reverse());
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(body));

    const first = await append(t, env, body, 'k');
    const again = await append(t, env, reordered, 'k');

    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().id).toBe(first.json().id);
  });

  it('answers 422 idempotency_key_reused for the same key with a different body, and keeps the first event', async () => {
    const env = await t.given.environment();
    const body = eventBody(t);
    const first = await append(t, env, body, 'k');

    const changed = await append(t, env, { ...body, result: 'failure' }, 'k');
    const reorderedArray = await append(t, env, { ...body, targets: [...(body.targets as unknown[]), { type: 'x', id: '1' }] }, 'k');

    expectProblem(changed, 422, 'idempotency_key_reused');
    expectProblem(reorderedArray, 422, 'idempotency_key_reused');
    expect((await customerEvents(t, env)).map((e) => e.id)).toEqual([first.json().id]);
  });

  it('answers 422 rather than a validation error when a reused key comes with an invalid body', async () => {
    const env = await t.given.environment();
    await append(t, env, eventBody(t), 'k');
    expectProblem(await append(t, env, eventBody(t, { schemaVersion: 1, result: 'success', occurredAt: '2000-01-01T00:00:00Z' }), 'k'), 422, 'idempotency_key_reused');
  });

  it('replays a stored request 23 hours later, though its occurredAt is now too old to append anew', async () => {
    const env = await t.given.environment();
    const body = eventBody(t, { occurredAt: new Date(t.clock.now().getTime() - 29.5 * 24 * HOUR).toISOString() });
    const first = await append(t, env, body, 'late-retry');
    expect(first.statusCode, first.body).toBe(201);
    t.clock.advance(23 * HOUR);

    const again = await append(t, env, body, 'late-retry');

    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expectProblem(await append(t, env, body, 'a-new-key'), 400, 'invalid_request');
  });

  it('scopes keys per environment: the same key in two environments stores two events', async () => {
    const [a, b] = [await t.given.environment(), await t.given.environment()];
    const body = eventBody(t);
    const inA = await append(t, a, body, 'shared-key');
    const inB = await append(t, b, body, 'shared-key');
    expect(inB.statusCode).toBe(201);
    expect(inB.headers['idempotent-replayed']).toBeUndefined();
    expect(inB.json().id).not.toBe(inA.json().id);
    expect(inB.json().environmentId).toBe(b.id);
  });

  it('replays for any secret key of the environment, keeping the producer of the first append', async () => {
    const env = await t.given.environment();
    const { secretKey } = (await t.admin.post(`/environments/${env.id}/secret-keys`)).json();
    const body = eventBody(t);
    const first = await append(t, env, body, 'k');
    const again = await append(t, env, body, 'k', secretKey);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().producer).toEqual(first.json().producer);
  });

  it('stores exactly one event for 20 concurrent identical requests, and every one answers with it', async () => {
    const env = await t.given.environment();
    const body = eventBody(t);
    const results = await Promise.all(Array.from({ length: 20 }, () => append(t, env, body, 'burst')));
    expect(results.map((r) => r.statusCode)).toEqual(Array(20).fill(201));
    const ids = new Set(results.map((r) => r.json().id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect((await customerEvents(t, env)).map((e) => e.id)).toEqual([...ids]);
  });

  it('stores one event under concurrent requests that share a key but differ in body: the others get 422', async () => {
    const env = await t.given.environment();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => append(t, env, eventBody(t, { metadata: { i } }), 'contended')));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    for (const r of results.filter((r) => r.statusCode !== 201)) expectProblem(r, 422, 'idempotency_key_reused');
    expect(await customerEvents(t, env)).toHaveLength(1);
  });

  const badKeys: [string, Record<string, string>][] = [
    ['no Idempotency-Key header', {}],
    ['an empty key', { 'idempotency-key': '' }],
    ['a key of 256 characters', { 'idempotency-key': 'k'.repeat(256) }],
    ['a key with a non-ASCII character', { 'idempotency-key': 'clé-1' }],
    ['a key with a tab', { 'idempotency-key': 'a\tb' }],
  ];
  it.each(badKeys)('refuses %s with 400 invalid_idempotency_key and stores nothing', async (_name, headers) => {
    const env = await t.given.environment();
    const res = await t.app.inject({
      method: 'POST', url: '/api/server/v1/audit-events', payload: eventBody(t),
      headers: { authorization: `Bearer ${env.secretKey}`, ...headers },
    });
    expectProblem(res, 400, 'invalid_idempotency_key');
    expect(await customerEvents(t, env)).toEqual([]);
    expect(await storedKeys(t, env)).toEqual([]);
  });

  it('accepts a key of 255 printable ASCII characters, spaces and symbols included', async () => {
    const env = await t.given.environment();
    const key = `~ !"#$%&'()*+,-./:;<=>?@[\\]^_\`{|}`.padEnd(255, 'z');
    const res = await append(t, env, eventBody(t), key);
    expect(res.statusCode, res.body).toBe(201);
    expect(await storedKeys(t, env)).toEqual([{ idempotency_key: key, event_id: res.json().id }]);
  });
});

// Pruning is global (every environment), and under TEST_DATABASE_URL other test files share the
// database: this test lives in 2001 so its cut-off can only ever reach its own rows.
const LONG_AGO = '2001-01-01T00:00:00.000Z';

describe('idempotency key retention', () => {
  it('keeps keys for 24 hours: the sweep removes only older ones, after which the key stores a new event', async () => {
    const env = await t.given.environment();
    t.clock.set(LONG_AGO);
    const audit = createAuditService({
      db: t.db, clock: t.clock, limiter: createRateLimiter(t.db, t.clock), auditLogEnabled: async () => true, existingUserIds: async () => new Set(), auditRetentions: async () => [], metrics: createMetrics(),
    });
    const old = await append(t, env, eventBody(t), 'old');
    t.clock.advance(2 * HOUR);
    const recent = await append(t, env, eventBody(t), 'recent');
    t.clock.advance(22 * HOUR + 1);

    await audit.pruneIdempotencyKeys();

    expect((await storedKeys(t, env)).map((k) => k.idempotency_key)).toEqual(['recent']);
    const reused = await append(t, env, eventBody(t), 'old');
    expect(reused.statusCode).toBe(201);
    expect(reused.headers['idempotent-replayed']).toBeUndefined();
    expect(reused.json().id).not.toBe(old.json().id);
    expect((await append(t, env, eventBody(t), 'recent')).statusCode).toBe(422);
    expect(recent.statusCode).toBe(201);
  });
});

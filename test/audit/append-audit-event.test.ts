import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { MISSING_ID, objectOfSize, UUID_V7 } from '../users/support.js';
import { append, customerEvents, eventBody, storedEvents, storedKeys } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

const MINUTE = 60_000;
const DAY = 86_400_000;

describe('POST /api/server/v1/audit-events: the stored event', () => {
  it('answers 201 with the stored form: server-set id, sequence, recordedAt and producer, the rest as sent', async () => {
    const env = await t.given.environment();
    const occurredAt = new Date(t.clock.now().getTime() - 5000).toISOString();
    const actorId = randomUUID();
    const impersonatorId = randomUUID();
    const correlationId = randomUUID();
    const body = {
      action: 'document.shared', result: 'success', schemaVersion: 1, occurredAt,
      actor: { type: 'service_account', id: actorId, impersonatorId },
      targets: [{ type: 'document', id: 'doc_42' }, { type: 'folder', id: null }],
      context: { ipAddress: '2001:db8::1', userAgent: 'curl/8.0' },
      correlationId, metadata: { permission: 'view', nested: { list: [1, 2] } },
    };

    const res = await append(t, env, body, 'first-key');

    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    const event = res.json();
    expect(event).toEqual({
      id: expect.stringMatching(UUID_V7), environmentId: env.id, sequence: 2,
      action: 'document.shared', result: 'success', occurredAt, recordedAt: t.clock.now().toISOString(),
      actor: { type: 'service_account', id: actorId, impersonatorId },
      targets: [{ type: 'document', id: 'doc_42' }, { type: 'folder', id: null }],
      context: { ipAddress: '2001:db8::1', userAgent: 'curl/8.0' },
      producer: { type: 'secret_key', keyId: expect.stringMatching(UUID_V7) },
      metadata: { permission: 'view', nested: { list: [1, 2] } }, schemaVersion: 1, correlationId,
    });
    const got = await t.server(env).get(`/audit-events/${event.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.body).toBe(res.body);
    expect(await storedKeys(t, env)).toEqual([{ idempotency_key: 'first-key', event_id: event.id }]);
  });

  it('fills optional fields with null: no context, no correlation id, an actor with only a type', async () => {
    const env = await t.given.environment();
    const res = await append(t, env, eventBody(t, { actor: { type: 'system' }, targets: [] }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      actor: { type: 'system', id: null, impersonatorId: null }, targets: [],
      context: { ipAddress: null, userAgent: null }, correlationId: null,
    });
  });

  it('records which secret key appended the event, by key id and never the secret', async () => {
    const env = await t.given.environment();
    const second = await t.admin.post(`/environments/${env.id}/secret-keys`);
    const { id: keyId, secretKey } = second.json();

    const res = await append(t, env, eventBody(t), randomUUID(), secretKey);

    expect(res.statusCode).toBe(201);
    expect(res.json().producer).toEqual({ type: 'secret_key', keyId });
    expect(res.body).not.toContain(secretKey);
    expect(res.body).not.toContain(env.secretKey);
  });

  it('numbers events 1, 2, 3 per environment, independently of other environments', async () => {
    const [a, b] = [await t.given.environment(), await t.given.environment()];
    // Each environment's first event is its first secret key (the service's own trail).
    for (const env of [a, b, a, a, b]) expect((await append(t, env, eventBody(t))).statusCode).toBe(201);
    expect((await storedEvents(t, a)).map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    expect((await storedEvents(t, b)).map((e) => e.sequence)).toEqual([1, 2, 3]);
  });

  it('accepts occurredAt exactly 5 minutes ahead and exactly 30 days old, by the server clock', async () => {
    const env = await t.given.environment();
    const now = t.clock.now().getTime();
    for (const at of [now + 5 * MINUTE, now - 30 * DAY]) {
      const res = await append(t, env, eventBody(t, { occurredAt: new Date(at).toISOString() }));
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().occurredAt).toBe(new Date(at).toISOString());
    }
  });

  it('accepts IPv4 and IPv6 addresses, and 50 targets', async () => {
    const env = await t.given.environment();
    for (const ipAddress of ['203.0.113.7', '::1', 'fe80::1ff:fe23:4567:890a', '::ffff:192.0.2.1']) {
      expect((await append(t, env, eventBody(t, { context: { ipAddress } }))).statusCode).toBe(201);
    }
    const targets = Array.from({ length: 50 }, (_, i) => ({ type: 'document', id: `doc_${i}` }));
    const res = await append(t, env, eventBody(t, { targets }));
    expect(res.statusCode).toBe(201);
    expect(res.json().targets).toEqual(targets);
  });

  it('accepts metadata of exactly 8192 bytes', async () => {
    const env = await t.given.environment();
    const res = await append(t, env, eventBody(t, { metadata: objectOfSize(8192) }));
    expect(res.statusCode).toBe(201);
  });
});

describe('POST /api/server/v1/audit-events: validation', () => {
  const invalid: [string, (t: TestApp) => Record<string, unknown>, string][] = [
    ['an action that is not a dotted identifier', (t) => eventBody(t, { action: 'Document Shared' }), '/body/action'],
    ['an action of 101 characters', (t) => eventBody(t, { action: 'a'.repeat(101) }), '/body/action'],
    ['an empty result', (t) => eventBody(t, { result: '' }), '/body/result'],
    ['a result with a trailing dot', (t) => eventBody(t, { result: 'success.' }), '/body/result'],
    ['an unsupported schemaVersion', (t) => eventBody(t, { schemaVersion: 2 }), '/body/schemaVersion'],
    ['a schemaVersion given as a string', (t) => eventBody(t, { schemaVersion: '1' }), '/body/schemaVersion'],
    ['an occurredAt that is not a date-time', (t) => eventBody(t, { occurredAt: 'yesterday' }), '/body/occurredAt'],
    ['an occurredAt more than 5 minutes in the future', (t) =>
      eventBody(t, { occurredAt: new Date(t.clock.now().getTime() + 5 * MINUTE + 1).toISOString() }), '/body/occurredAt'],
    ['an occurredAt more than 30 days old', (t) =>
      eventBody(t, { occurredAt: new Date(t.clock.now().getTime() - 30 * DAY - 1).toISOString() }), '/body/occurredAt'],
    ['an actor without a type', (t) => eventBody(t, { actor: { id: randomUUID() } }), '/body/actor/type'],
    ['an actor id that is not a uuid', (t) => eventBody(t, { actor: { type: 'user', id: 'ada' } }), '/body/actor/id'],
    ['an unknown actor field', (t) => eventBody(t, { actor: { type: 'service', name: 'x' } }), '/body/actor/name'],
    ['51 targets', (t) => eventBody(t, { targets: Array.from({ length: 51 }, (_, i) => ({ type: 'document', id: `d${i}` })) }), '/body/targets'],
    ['a target without a type', (t) => eventBody(t, { targets: [{ id: 'doc_1' }] }), '/body/targets/0/type'],
    ['a target id of 256 characters', (t) => eventBody(t, { targets: [{ type: 'document', id: 'x'.repeat(256) }] }), '/body/targets/0/id'],
    ['an invalid IP address', (t) => eventBody(t, { context: { ipAddress: '999.1.1.1' } }), '/body/context/ipAddress'],
    ['an IP address with a port', (t) => eventBody(t, { context: { ipAddress: '203.0.113.7:443' } }), '/body/context/ipAddress'],
    ['a correlationId that is not a uuid', (t) => eventBody(t, { correlationId: 'abc' }), '/body/correlationId'],
    ['metadata that is an array', (t) => eventBody(t, { metadata: [1] }), '/body/metadata'],
    ['a missing metadata', (t) => { const { metadata: _m, ...rest } = eventBody(t); return rest; }, '/body/metadata'],
    ['an unknown top-level field', (t) => eventBody(t, { sequence: 7 }), '/body/sequence'],
  ];

  it.each(invalid)('refuses %s with 400 invalid_request naming the field, and stores nothing', async (_name, build, path) => {
    const env = await t.given.environment();
    const res = await append(t, env, build(t), 'a-key');
    const problem = expectProblem(res, 400, 'invalid_request');
    expect(problem.properties.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(await customerEvents(t, env)).toEqual([]);
    expect(await storedKeys(t, env)).toEqual([]);
  });

  it('refuses metadata of 8193 bytes with 400 metadata_too_large, and stores nothing', async () => {
    const env = await t.given.environment();
    const res = await append(t, env, eventBody(t, { metadata: objectOfSize(8193) }));
    const problem = expectProblem(res, 400, 'metadata_too_large');
    expect(problem.properties).toEqual({ code: 'metadata_too_large', bytes: 8193, limit: 8192 });
    expect(await customerEvents(t, env)).toEqual([]);
  });

  it('stores a valid retry under the key of a request that failed validation', async () => {
    const env = await t.given.environment();
    expectProblem(await append(t, env, eventBody(t, { result: 'Not OK' }), 'retry-me'), 400, 'invalid_request');
    const res = await append(t, env, eventBody(t), 'retry-me');
    expect(res.statusCode).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(await storedKeys(t, env)).toEqual([{ idempotency_key: 'retry-me', event_id: res.json().id }]);
  });
});

describe('POST /api/server/v1/audit-events: referenced users', () => {
  it('accepts a user actor and user targets of this environment, deleted users included', async () => {
    const env = await t.given.environment();
    const [ada, grace] = [await t.given.user(env), await t.given.user(env)];
    expect((await t.server(env).delete(`/users/${grace.id}`)).statusCode).toBe(204);
    const res = await append(t, env, eventBody(t, {
      actor: { type: 'user', id: ada.id }, targets: [{ type: 'user', id: grace.id.toUpperCase() }, { type: 'user', id: ada.id }],
    }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().targets).toEqual([{ type: 'user', id: grace.id }, { type: 'user', id: ada.id }]);
  });

  it('answers 404 resource_not_found naming each missing user, and stores nothing', async () => {
    const env = await t.given.environment();
    const ada = await t.given.user(env);
    const res = await append(t, env, eventBody(t, {
      actor: { type: 'user', id: MISSING_ID }, targets: [{ type: 'user', id: ada.id }, { type: 'user', id: 'not-a-uuid' }],
    }));
    const problem = expectProblem(res, 404, 'resource_not_found');
    expect(problem.properties.missing).toEqual([
      { path: '/body/actor/id', type: 'user', id: MISSING_ID },
      { path: '/body/targets/1/id', type: 'user', id: 'not-a-uuid' },
    ]);
    expect(problem.detail).toContain(MISSING_ID);
    expect(await customerEvents(t, env)).toEqual([]);
  });

  it("treats another environment's user exactly like a missing one, even once it was named in its own environment", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const foreign = await t.given.user(theirs);
    expect((await append(t, theirs, eventBody(t, { targets: [{ type: 'user', id: foreign.id }] }))).statusCode).toBe(201);
    const res = await append(t, mine, eventBody(t, { targets: [{ type: 'user', id: foreign.id }] }));
    expect(expectProblem(res, 404, 'resource_not_found').properties.missing).toEqual([{ path: '/body/targets/0/id', type: 'user', id: foreign.id }]);
  });

  it('does not look up actors and targets of other types, or a user target without an id', async () => {
    const env = await t.given.environment();
    const res = await append(t, env, eventBody(t, { actor: { type: 'user' }, targets: [{ type: 'customer', id: MISSING_ID }, { type: 'user', id: null }] }));
    expect(res.statusCode, res.body).toBe(201);
  });
});

describe('POST /api/server/v1/audit-events: availability', () => {
  it('answers 503 audit_storage_unavailable while the environment has auditLogEnabled off, and stores nothing', async () => {
    const env = await t.given.environment({ auditLogEnabled: false });
    const res = await append(t, env, eventBody(t));
    expectProblem(res, 503, 'audit_storage_unavailable');
    expect(await customerEvents(t, env)).toEqual([]);

    expect((await t.admin.patch(`/environments/${env.id}`, { settings: { auditLogEnabled: true } })).statusCode).toBe(200);
    expect((await append(t, env, eventBody(t))).statusCode).toBe(201);
  });

  it('answers 401 without a valid secret key, before anything else', async () => {
    const env = await t.given.environment();
    const res = await t.server(env, 'sk_wrong').post('/audit-events', eventBody(t), { headers: { 'idempotency-key': 'k' } });
    expectProblem(res, 401, 'unauthenticated');
    expect(res.headers.ratelimit).toBeUndefined();
  });
});

describe('the audit log is append-only', () => {
  it('has no route that changes or deletes an event', async () => {
    const env = await t.given.environment();
    const { id } = (await append(t, env, eventBody(t))).json();
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: `/api/server/v1/audit-events/${id}`, headers: { authorization: `Bearer ${env.secretKey}` }, payload: {} });
      expect(res.statusCode, method).toBe(404);
    }
    expect((await t.server(env).delete('/audit-events')).statusCode).toBe(404);
    expect((await t.server(env).get(`/audit-events/${id}`)).json().action).toBe('document.shared');
  });

  it('refuses UPDATE, DELETE and TRUNCATE of audit rows in the database itself', async () => {
    const env = await t.given.environment();
    const { id } = (await append(t, env, eventBody(t))).json();
    await expect(sql`update audit_events set action = 'forged' where id = ${id}`.execute(t.db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from audit_events where id = ${id}`.execute(t.db)).rejects.toThrow(/append-only/);
    await expect(sql`truncate audit_events`.execute(t.db)).rejects.toThrow(/append-only/);
    expect((await t.server(env).get(`/audit-events/${id}`)).json().action).toBe('document.shared');
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { MISSING_ID } from '../users/support.js';
import { append, eventBody } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

const MINUTE = 60_000;

async function appended(env: TestEnv, overrides: Record<string, unknown>) {
  const res = await append(t, env, eventBody(t, overrides));
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const ids = (res: { json(): { items: { id: string }[] } }) => res.json().items.map((e) => e.id);

describe('GET /api/server/v1/audit-events (search)', () => {
  let env: TestEnv;
  let ada: { id: string };
  const correlationId = randomUUID();
  const base = () => t.clock.now().getTime();
  let events: Record<string, { id: string }>;

  beforeAll(async () => {
    env = await t.given.environment();
    ada = await t.given.user(env);
    const now = base();
    events = {
      login: await appended(env, { action: 'user.signed_in', actor: { type: 'user', id: ada.id }, targets: [], occurredAt: new Date(now - 10 * MINUTE).toISOString() }),
      share: await appended(env, { action: 'document.shared', targets: [{ type: 'document', id: 'doc_1' }, { type: 'user', id: ada.id }], correlationId, occurredAt: new Date(now - 5 * MINUTE).toISOString() }),
      denied: await appended(env, { action: 'document.shared', result: 'denied', targets: [{ type: 'document', id: 'doc_2' }], correlationId, occurredAt: new Date(now - 2 * MINUTE).toISOString() }),
      logout: await appended(env, { action: 'user.signed_out', actor: { type: 'user', id: ada.id }, targets: [{ type: 'document', id: 'doc_1' }], occurredAt: new Date(now - MINUTE).toISOString() }),
    };
  });

  const search = (query: string) => t.server(env).get(`/audit-events?${query}`);

  it('lists every event of the environment, its own trail included, in id order', async () => {
    const res = await search('');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.items.map((e: { action: string }) => e.action)).toEqual([
      'secret_key.created', 'user.created', 'user.signed_in', 'document.shared', 'document.shared', 'user.signed_out',
    ]);
    expect(body.items[0].producer).toEqual({ type: 'gatehouse', via: 'admin_api' });
    expect(body).toMatchObject({ nextCursor: null, hasMore: false });
  });

  it('filters by action, result, actor id, correlation id and target, ANDed', async () => {
    expect(ids(await search('action=document.shared'))).toEqual([events.share.id, events.denied.id]);
    expect(ids(await search('action=document.shared&result=denied'))).toEqual([events.denied.id]);
    expect(ids(await search(`actorId=${ada.id}`))).toEqual([events.login.id, events.logout.id]);
    expect(ids(await search(`correlationId=${correlationId}`))).toEqual([events.share.id, events.denied.id]);
    expect(ids(await search('targetType=document&targetId=doc_1'))).toEqual([events.share.id, events.logout.id]);
    const [adaCreated] = ids(await search('action=user.created'));
    expect(ids(await search(`targetType=user&targetId=${ada.id}`))).toEqual([adaCreated, events.share.id]);
    expect(ids(await search('targetId=doc_2'))).toEqual([events.denied.id]);
    expect(ids(await search(`targetType=document&targetId=doc_1&actorId=${ada.id}`))).toEqual([events.logout.id]);
    expect(ids(await search('action=nothing.like.this'))).toEqual([]);
  });

  it('filters by occurredAt: occurredAfter inclusive, occurredBefore exclusive', async () => {
    const at = (minutesAgo: number) => encodeURIComponent(new Date(base() - minutesAgo * MINUTE).toISOString());
    const [ownKeyEvent, adaCreated] = [...ids(await search('action=secret_key.created')), ...ids(await search('action=user.created'))];
    expect(ids(await search(`occurredAfter=${at(5)}`))).toEqual([ownKeyEvent, adaCreated, events.share.id, events.denied.id, events.logout.id]);
    expect(ids(await search(`occurredAfter=${at(5)}&occurredBefore=${at(1)}`))).toEqual([events.share.id, events.denied.id]);
    expect(ids(await search(`occurredBefore=${at(10)}`))).toEqual([]);
    expect(ids(await search(`occurredBefore=${at(9)}`))).toEqual([events.login.id]);
  });

  it('pages with a cursor, never repeating or skipping an event', async () => {
    const first = await search('limit=2');
    expect(first.json()).toMatchObject({ hasMore: true, nextCursor: first.json().items[1].id });
    const second = await search(`limit=2&cursor=${first.json().nextCursor}`);
    const third = await search(`limit=2&cursor=${second.json().nextCursor}`);
    expect(third.json()).toMatchObject({ hasMore: false, nextCursor: null });
    expect([...ids(first), ...ids(second), ...ids(third)]).toEqual(ids(await search('limit=100')));
  });

  it('lists newest first with order=desc, filtered, and pages backwards with its cursor', async () => {
    const oldestFirst = ids(await search('limit=100'));
    expect(ids(await search('order=desc&limit=100'))).toEqual([...oldestFirst].reverse());
    expect(ids(await search('order=asc&limit=100'))).toEqual(oldestFirst);
    expect(ids(await search('action=document.shared&order=desc'))).toEqual([events.denied.id, events.share.id]);

    const first = await search('order=desc&limit=4');
    expect(first.json()).toMatchObject({ hasMore: true, nextCursor: first.json().items[3].id });
    const second = await search(`order=desc&limit=4&cursor=${first.json().nextCursor}`);
    expect(second.json()).toMatchObject({ hasMore: false, nextCursor: null });
    expect([...ids(first), ...ids(second)]).toEqual([...oldestFirst].reverse());
  });

  it("never shows another environment's events, by search or by id", async () => {
    const other = await t.given.environment();
    const foreign = await appended(other, { action: 'document.shared', correlationId });
    expect(ids(await search(`correlationId=${correlationId}`))).not.toContain(foreign.id);
    const byId = await t.server(env).get(`/audit-events/${foreign.id}`);
    const missing = await t.server(env).get(`/audit-events/${MISSING_ID}`);
    expectProblem(byId, 404, 'resource_not_found');
    expect(byId.json().detail).toBe(missing.json().detail);
  });

  it('refuses bad filters and page sizes with 400 invalid_request', async () => {
    for (const query of ['limit=0', 'limit=101', 'cursor=abc', 'actorId=ada', 'occurredAfter=yesterday', 'correlationId=1', 'order=newest', 'unknown=1']) {
      expectProblem(await search(query), 400, 'invalid_request');
    }
  });
});

describe('GET /api/server/v1/audit-events/feed (poll)', () => {
  it('returns events after a sequence in sequence order, and nextAfterSequence to ask from next', async () => {
    const env = await t.given.environment();
    for (let i = 0; i < 5; i++) await appended(env, { metadata: { i } });

    const all = await t.server(env).get('/audit-events/feed');
    expect(all.statusCode).toBe(200);
    expect(all.json().items.map((e: { sequence: number }) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(all.json()).toMatchObject({ nextAfterSequence: 6, hasMore: false });

    const page = await t.server(env).get('/audit-events/feed?afterSequence=2&limit=2');
    expect(page.json().items.map((e: { sequence: number; metadata: { i: number } }) => [e.sequence, e.metadata.i])).toEqual([[3, 1], [4, 2]]);
    expect(page.json()).toMatchObject({ nextAfterSequence: 4, hasMore: true });

    const empty = await t.server(env).get('/audit-events/feed?afterSequence=6');
    expect(empty.json()).toEqual({ items: [], nextAfterSequence: 6, hasMore: false });
  });

  it('lets a consumer follow the log while it grows, seeing each event exactly once', async () => {
    const env = await t.given.environment();
    const seen: number[] = [];
    let after = 0;
    const pollOnce = async () => {
      const body = (await t.server(env).get(`/audit-events/feed?afterSequence=${after}&limit=3`)).json();
      seen.push(...body.items.map((e: { sequence: number }) => e.sequence));
      after = body.nextAfterSequence;
    };
    for (let round = 0; round < 4; round++) {
      await Promise.all([...Array.from({ length: 4 }, (_, i) => appended(env, { metadata: { round, i } })), pollOnce()]);
    }
    for (let i = 0; i < 10; i++) await pollOnce();
    expect(seen).toEqual(Array.from({ length: 17 }, (_, i) => i + 1));
  });

  it("shows only the environment's own events, numbered from 1", async () => {
    const [a, b] = [await t.given.environment(), await t.given.environment()];
    await appended(a, {});
    const feed = (await t.server(b).get('/audit-events/feed')).json();
    expect(feed.items.map((e: { environmentId: string; sequence: number }) => [e.environmentId, e.sequence])).toEqual([[b.id, 1]]);
  });

  it('refuses a negative afterSequence and a limit outside 1..100', async () => {
    const env = await t.given.environment();
    for (const query of ['afterSequence=-1', 'afterSequence=x', 'limit=0', 'limit=101']) {
      expectProblem(await t.server(env).get(`/audit-events/feed?${query}`), 400, 'invalid_request');
    }
  });
});

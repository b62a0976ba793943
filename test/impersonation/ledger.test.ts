import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { sessionIsActive } from '../helpers/given.js';
import { eventsOf, expectProblem, givenCast, MISSING_ID, minted, redeem } from './support.js';

const ENTRY_KEYS = ['actorOperatorId', 'actorUserId', 'createdAt', 'expiresAt', 'id', 'landingUrl', 'month', 'reason', 'redemption', 'revokedAt', 'status', 'targetUserId'];

describe('the impersonation ledger on the Server API', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('reads one entry: who, for whom, why, when, and its status', async () => {
    t.clock.set('2026-11-10T12:00:00.000Z');
    const cast = await givenCast(t);
    const { id } = await minted(t, cast, { reason: 'Ticket #1', expiresInSeconds: 300 });
    const res = await t.server(cast.env).get(`/impersonations/${id}`);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(ENTRY_KEYS);
    expect(res.json()).toEqual({
      id, actorUserId: cast.actor.id, actorOperatorId: null, targetUserId: cast.target.id, reason: 'Ticket #1', landingUrl: null, status: 'pending', month: '2026-11',
      createdAt: '2026-11-10T12:00:00.000Z', expiresAt: '2026-11-10T12:05:00.000Z', redemption: null, revokedAt: null,
    });
    t.clock.advance(300_000);
    expect((await t.server(cast.env).get(`/impersonations/${id}`)).json().status).toBe('expired');
  });

  it("answers 404 resource_not_found for an unknown id or another environment's entry", async () => {
    const cast = await givenCast(t);
    const other = await givenCast(t);
    const { id } = await minted(t, other);
    expectProblem(await t.server(cast.env).get(`/impersonations/${id}`), 404, 'resource_not_found');
    expectProblem(await t.server(cast.env).get(`/impersonations/${MISSING_ID}`), 404, 'resource_not_found');
    expectProblem(await t.server(cast.env).post(`/impersonations/${id}/revoke`), 404, 'resource_not_found');
  });

  it('lists by month, by actor and by target, in mint order, a page at a time', async () => {
    const cast = await givenCast(t, { plan: { impersonationQuotaPerMonth: 10 } });
    const secondActor = await t.given.user(cast.env);
    const secondTarget = await t.given.user(cast.env);
    t.clock.set('2026-10-31T23:00:00.000Z');
    const october = await minted(t, cast);
    t.clock.set('2026-11-01T01:00:00.000Z');
    const a = await minted(t, cast);
    const b = await minted(t, { ...cast, actor: secondActor });
    const c = await minted(t, { ...cast, target: secondTarget });
    const ids = async (query: string) => (await t.server(cast.env).get(`/impersonations${query}`)).json().items.map((i: { id: string }) => i.id);

    expect(await ids('')).toEqual([october.id, a.id, b.id, c.id]);
    expect(await ids('?month=2026-10')).toEqual([october.id]);
    expect(await ids('?month=2026-11')).toEqual([a.id, b.id, c.id]);
    expect(await ids(`?actorUserId=${secondActor.id}`)).toEqual([b.id]);
    expect(await ids(`?targetUserId=${secondTarget.id}`)).toEqual([c.id]);
    expect(await ids(`?month=2026-11&actorUserId=${cast.actor.id}`)).toEqual([a.id, c.id]);

    const first = (await t.server(cast.env).get('/impersonations?month=2026-11&limit=2')).json();
    expect(first).toMatchObject({ hasMore: true, nextCursor: b.id });
    const second = (await t.server(cast.env).get(`/impersonations?month=2026-11&limit=2&cursor=${first.nextCursor}`)).json();
    expect(second).toEqual({ items: [expect.objectContaining({ id: c.id })], hasMore: false, nextCursor: null });
  });

  it("never lists another environment's entries", async () => {
    const cast = await givenCast(t);
    const other = await givenCast(t);
    await minted(t, other);
    expect((await t.server(cast.env).get(`/impersonations?targetUserId=${other.target.id}`)).json().items).toEqual([]);
    expect((await t.server(cast.env).get('/impersonations')).json().items).toEqual([]);
  });

  it.each([['month=2026-13'], ['month=26-11'], ['actorUserId=nope'], ['cursor=x'], ['status=pending']])('refuses ?%s with 400 invalid_request', async (query) => {
    const cast = await givenCast(t);
    expectProblem(await t.server(cast.env).get(`/impersonations?${query}`), 400, 'invalid_request');
  });

  it("answers this month's usage against the plan's quota", async () => {
    t.clock.set('2026-11-15T00:00:00.000Z');
    const cast = await givenCast(t, { plan: { impersonationQuotaPerMonth: 5 } });
    expect((await t.server(cast.env).get('/impersonations/usage')).json()).toEqual({
      month: '2026-11', used: 0, quota: 5, remaining: 5, resetsAt: '2026-12-01T00:00:00.000Z',
    });
    await minted(t, cast);
    await minted(t, cast);
    expect((await t.server(cast.env).get('/impersonations/usage')).json()).toMatchObject({ used: 2, remaining: 3 });
  });

  describe('POST /impersonations/:id/revoke', () => {
    it('stops a pending token from working and records impersonation.revoked', async () => {
      const cast = await givenCast(t);
      const { id, token } = await minted(t, cast);
      const res = await t.server(cast.env).post(`/impersonations/${id}/revoke`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id, status: 'revoked', revokedAt: t.clock.now().toISOString(), redemption: null });
      expectProblem(await redeem(t, cast.env, token), 401, 'invalid_token');
      const [event] = await eventsOf(t, cast.env, 'impersonation.revoked');
      expect(event).toMatchObject({ actor_type: 'api_key', targets: [{ type: 'user', id: cast.target.id }, { type: 'impersonation', id }], metadata: { endedSession: false } });
    });

    it('ends the session a redeemed token started, on the very next request', async () => {
      const cast = await givenCast(t);
      const { id, token } = await minted(t, cast);
      const started = (await redeem(t, cast.env, token)).json();
      const session = { id: started.session.id, token: started.sessionToken, userId: cast.target.id };
      const other = await t.given.session(cast.env, cast.target);
      await t.server(cast.env).post(`/impersonations/${id}/revoke`);
      expect(await sessionIsActive(t, cast.env, session)).toBe(false);
      expect(await sessionIsActive(t, cast.env, other)).toBe(true);
      expect((await t.server(cast.env).get(`/impersonations/${id}`)).json()).toMatchObject({ status: 'revoked', redemption: { sessionId: session.id } });
      expect((await eventsOf(t, cast.env, 'impersonation.revoked'))[0]!.metadata).toEqual({ endedSession: true });
    });

    it('answers the same and records nothing when revoked again', async () => {
      const cast = await givenCast(t);
      const { id } = await minted(t, cast);
      const first = (await t.server(cast.env).post(`/impersonations/${id}/revoke`)).json();
      t.clock.advance(1000);
      expect((await t.server(cast.env).post(`/impersonations/${id}/revoke`)).json()).toEqual(first);
      expect(await eventsOf(t, cast.env, 'impersonation.revoked')).toHaveLength(1);
    });
  });
});

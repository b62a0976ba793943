import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_MAX_ATTEMPTS } from '../../src/webhooks/delivery.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { createEndpoint, eventsOf, expectProblem, MISSING_ID, storedDeliveries, storedJobs } from './support.js';

/**
 * The delivery itself (sending, attempts) is another module's: here a delivery's attempts are written
 * into the tables as it would write them. Jobs stay queued: jobsInBackground is false, and the file has a
 * database of its own (ownDatabase), where no other file's worker claims them.
 */
describe('Server API: webhook deliveries', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({ jobsInBackground: false }, { ownDatabase: true }); });
  afterAll(() => t.close());

  /** An endpoint for every type, and one user created through the Server API: one pending user.created delivery. */
  async function oneDelivery(env?: TestEnv) {
    env ??= await t.given.environment();
    const endpoint = await createEndpoint(t, env);
    const user = await t.given.user(env);
    const [delivery] = await storedDeliveries(t, env);
    return { env, endpoint, user, delivery: delivery! };
  }

  /** What the sender would have written after two failed attempts and giving up. */
  async function failTwice(env: TestEnv, deliveryId: string, jobId: string) {
    const start = t.clock.now().getTime();
    await t.db.insertInto('webhook_attempts').values([
      { environment_id: env.id, delivery_id: deliveryId, attempt: 2, started_at: new Date(start + 60_000), duration_ms: 10_000, response_status: null, response_body: null, error: 'timeout after 10 s' },
      { environment_id: env.id, delivery_id: deliveryId, attempt: 1, started_at: new Date(start), duration_ms: 35, response_status: 500, response_body: 'oops', error: null },
    ]).execute();
    await t.db.updateTable('webhook_deliveries').where('environment_id', '=', env.id).where('id', '=', deliveryId)
      .set({ status: 'failed', attempts: 2, next_attempt_at: null, last_response_status: 500, last_error: 'timeout after 10 s', finished_at: new Date(start + 70_000) }).execute();
    await t.db.updateTable('jobs').where('environment_id', '=', env.id).where('id', '=', jobId)
      .set({ status: 'failed', finished_at: new Date(start + 70_000) }).execute();
  }

  it('lists the pending user.created delivery a Server API user creation made; an endpoint filtering other types gets none', async () => {
    const env = await t.given.environment();
    const all = await createEndpoint(t, env);
    const orgsOnly = await createEndpoint(t, env, { eventTypes: ['organization.created'] });
    const now = t.clock.now().toISOString();
    const user = await t.given.user(env);

    const res = await t.server(env).get(`/webhook-endpoints/${all.id}/deliveries`);
    expect(res.statusCode, res.body).toBe(200);
    const [event] = await t.db.selectFrom('webhook_events').selectAll().where('environment_id', '=', env.id).execute();
    expect(event).toMatchObject({ type: 'user.created', data: { object: 'user', id: user.id } });
    expect(res.json()).toEqual({
      items: [{
        id: expect.any(String), eventId: event!.id, endpointId: all.id, type: 'user.created', status: 'pending', responseStatus: null, attempt: 0,
        nextAttemptAt: now, lastError: null, createdAt: now, finishedAt: null, attempts: [],
      }],
      nextCursor: null, hasMore: false,
    });
    expect((await t.server(env).get(`/webhook-endpoints/${orgsOnly.id}/deliveries`)).json()).toEqual({ items: [], nextCursor: null, hasMore: false });
  });

  it('shows a failed delivery with its attempts oldest first, the last answer and no next attempt; filters by status', async () => {
    const { env, endpoint, delivery } = await oneDelivery();
    await t.given.user(env);
    await failTwice(env, delivery.id, delivery.job_id);
    const start = t.clock.now().getTime();

    const failed = (await t.server(env).get(`/webhook-endpoints/${endpoint.id}/deliveries?status=failed`)).json();
    expect(failed.items).toEqual([expect.objectContaining({
      id: delivery.id, status: 'failed', responseStatus: 500, attempt: 2, nextAttemptAt: null, lastError: 'timeout after 10 s',
      finishedAt: new Date(start + 70_000).toISOString(),
      attempts: [
        { attempt: 1, startedAt: new Date(start).toISOString(), durationMs: 35, responseStatus: 500, responseBody: 'oops', error: null },
        { attempt: 2, startedAt: new Date(start + 60_000).toISOString(), durationMs: 10_000, responseStatus: null, responseBody: null, error: 'timeout after 10 s' },
      ],
    })]);
    const pending = (await t.server(env).get(`/webhook-endpoints/${endpoint.id}/deliveries?status=pending`)).json();
    expect(pending.items.map((d: { status: string; attempts: unknown[] }) => [d.status, d.attempts])).toEqual([['pending', []]]);
    expectProblem(await t.server(env).get(`/webhook-endpoints/${endpoint.id}/deliveries?status=lost`), 400, 'invalid_request');
  });

  it('pages deliveries newest first', async () => {
    const { env, endpoint } = await oneDelivery();
    for (let i = 0; i < 2; i++) { t.clock.advance(1000); await t.given.user(env); }
    const ids = (await storedDeliveries(t, env)).map((d) => d.id).reverse();
    const first = (await t.server(env).get(`/webhook-endpoints/${endpoint.id}/deliveries?limit=2`)).json();
    expect(first.items.map((d: { id: string }) => d.id)).toEqual(ids.slice(0, 2));
    expect(first).toMatchObject({ nextCursor: ids[1], hasMore: true });
    const second = (await t.server(env).get(`/webhook-endpoints/${endpoint.id}/deliveries?limit=2&cursor=${first.nextCursor}`)).json();
    expect(second).toMatchObject({ items: [expect.objectContaining({ id: ids[2] })], nextCursor: null, hasMore: false });
  });

  it('retries a failed delivery: 202, pending again and due now, with a new queued job of its endpoint', async () => {
    const { env, endpoint, delivery } = await oneDelivery();
    await failTwice(env, delivery.id, delivery.job_id);
    t.clock.advance(3_600_000);
    const now = t.clock.now();

    const res = await t.server(env).post(`/webhook-deliveries/${delivery.id}/retry`);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ id: delivery.id, status: 'pending' });

    const jobs = await storedJobs(t, env);
    expect(jobs).toHaveLength(2);
    const [old, fresh] = jobs;
    // The first job is the trigger's (migration 0032), the retry the service's: both give up after the same attempts.
    expect(old).toMatchObject({ id: delivery.job_id, status: 'failed', max_attempts: WEBHOOK_MAX_ATTEMPTS });
    expect(fresh).toMatchObject({
      kind: 'webhook.deliver', payload: { deliveryId: delivery.id }, status: 'queued', run_at: now, max_attempts: WEBHOOK_MAX_ATTEMPTS, attempts: 0, ordering_key: endpoint.id,
    });
    const [stored] = await storedDeliveries(t, env);
    expect(stored).toMatchObject({ status: 'pending', next_attempt_at: now, job_id: fresh!.id, finished_at: null, attempts: 2 });
    const listed = (await t.server(env).get(`/webhook-endpoints/${endpoint.id}/deliveries`)).json().items[0];
    expect(listed).toMatchObject({ status: 'pending', nextAttemptAt: now.toISOString(), finishedAt: null, attempt: 2 });
    expect(listed.attempts).toHaveLength(2);
  });

  it('retries a succeeded delivery the same way', async () => {
    const { env, delivery } = await oneDelivery();
    await t.db.updateTable('webhook_deliveries').where('id', '=', delivery.id).set({ status: 'succeeded', attempts: 1, last_response_status: 204, next_attempt_at: null, finished_at: t.clock.now() }).execute();
    await t.db.updateTable('jobs').where('id', '=', delivery.job_id).set({ status: 'done', finished_at: t.clock.now() }).execute();
    expect((await t.server(env).post(`/webhook-deliveries/${delivery.id}/retry`)).statusCode).toBe(202);
    const jobs = await storedJobs(t, env);
    expect(jobs.map((j) => j.status)).toEqual(['done', 'queued']);
    expect((await storedDeliveries(t, env))[0]).toMatchObject({ status: 'pending', job_id: jobs[1]!.id, finished_at: null });
  });

  it("retries a pending delivery by making its queued job due now, without another job", async () => {
    const { env, delivery } = await oneDelivery();
    const backoff = new Date(t.clock.now().getTime() + 3_600_000);
    await t.db.updateTable('jobs').where('id', '=', delivery.job_id).set({ run_at: backoff, attempts: 1 }).execute();
    await t.db.updateTable('webhook_deliveries').where('id', '=', delivery.id).set({ attempts: 1, next_attempt_at: backoff }).execute();
    t.clock.advance(60_000);

    expect((await t.server(env).post(`/webhook-deliveries/${delivery.id}/retry`)).statusCode).toBe(202);
    const jobs = await storedJobs(t, env);
    expect(jobs).toEqual([expect.objectContaining({ id: delivery.job_id, status: 'queued', run_at: t.clock.now(), attempts: 1 })]);
    expect((await storedDeliveries(t, env))[0]).toMatchObject({ status: 'pending', job_id: delivery.job_id, next_attempt_at: t.clock.now() });
  });

  it('refuses to retry a delivery of a disabled endpoint with 409 webhook_endpoint_disabled, changing nothing', async () => {
    const { env, endpoint, delivery } = await oneDelivery();
    await failTwice(env, delivery.id, delivery.job_id);
    await t.server(env).patch(`/webhook-endpoints/${endpoint.id}`, { enabled: false });
    const [deliveriesBefore, jobsBefore] = [await storedDeliveries(t, env), await storedJobs(t, env)];
    expectProblem(await t.server(env).post(`/webhook-deliveries/${delivery.id}/retry`), 409, 'webhook_endpoint_disabled');
    expect(await storedDeliveries(t, env)).toEqual(deliveriesBefore);
    expect(await storedJobs(t, env)).toEqual(jobsBefore);
  });

  it("answers 404 for another environment's delivery and endpoint, and writes nothing", async () => {
    const { env: theirs, endpoint, delivery } = await oneDelivery();
    await failTwice(theirs, delivery.id, delivery.job_id);
    const mine = await t.given.environment();
    await createEndpoint(t, mine);
    const [deliveriesBefore, jobsBefore] = [await storedDeliveries(t, theirs), await storedJobs(t, theirs)];
    expectProblem(await t.server(mine).post(`/webhook-deliveries/${delivery.id}/retry`), 404, 'resource_not_found');
    expectProblem(await t.server(mine).post(`/webhook-deliveries/${MISSING_ID}/retry`), 404, 'resource_not_found');
    expectProblem(await t.server(mine).get(`/webhook-endpoints/${endpoint.id}/deliveries`), 404, 'resource_not_found');
    expect(await storedDeliveries(t, theirs)).toEqual(deliveriesBefore);
    expect(await storedJobs(t, theirs)).toEqual(jobsBefore);
    expect(await storedJobs(t, mine)).toEqual([]);
    expect(await storedDeliveries(t, mine)).toEqual([]);
  });

  it('deletes the deliveries and attempts of a deleted endpoint; its queued jobs stay', async () => {
    const { env, endpoint, delivery } = await oneDelivery();
    const other = await createEndpoint(t, env);
    await failTwice(env, delivery.id, delivery.job_id);
    await t.given.user(env);
    const kept = (await storedDeliveries(t, env)).filter((d) => d.endpoint_id === other.id);
    expect(kept).toHaveLength(1);

    expect((await t.server(env).delete(`/webhook-endpoints/${endpoint.id}`)).statusCode).toBe(204);
    expect(await storedDeliveries(t, env)).toEqual(kept);
    expect(await t.db.selectFrom('webhook_attempts').selectAll().where('environment_id', '=', env.id).execute()).toEqual([]);
    expect((await storedJobs(t, env)).filter((j) => j.ordering_key === endpoint.id)).toHaveLength(2);
    expect((await eventsOf(t, env, 'webhook_endpoint.deleted')).map((e) => e.targets)).toEqual([[{ type: 'webhook_endpoint', id: endpoint.id }]]);
  });
});

import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { givenEndpoint, rotateSecret, signedWith } from './given-endpoint.js';

const HOUR = 3_600_000;

/** Deliveries to a real receiver process on loopback, sent by the job queue as the test clock says. */
describe('webhook delivery (Standard Webhooks)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // A database of its own: the job worker of another test file's app would otherwise send these deliveries.
    t = await startTestApp({
      jobsInBackground: false,
      webhooks: { sender: { privateTargets: 'allow' }, delivery: { baseDelayMs: 1000, maxDelayMs: 8000, disableAfterMs: 24 * HOUR } },
    }, { ownDatabase: true });
  });
  afterAll(async () => { await t.close(); await receiver.stop(); });

  const at = (path: string) => `${receiver.url}/${path}`;
  const receivedAt = async (path: string) => (await receiver.received()).filter((r) => r.path === `/${path}`);
  /** In the order they were queued (their jobs' order: ids made in one millisecond of the frozen test clock are not in order). */
  const deliveries = (env: TestEnv, endpointId: string) =>
    t.db.selectFrom('webhook_deliveries as d').innerJoin('jobs as j', (join) => join.onRef('j.environment_id', '=', 'd.environment_id').onRef('j.id', '=', 'd.job_id'))
      .selectAll('d').where('d.environment_id', '=', env.id).where('d.endpoint_id', '=', endpointId).orderBy('j.seq').execute();
  const attempts = (env: TestEnv, deliveryId: string) =>
    t.db.selectFrom('webhook_attempts').selectAll().where('environment_id', '=', env.id).where('delivery_id', '=', deliveryId).orderBy('attempt').execute();

  it('sends user.created signed with the endpoint secret, as {type, timestamp, data}, and records the 2xx answer', async () => {
    t.clock.set(new Date());
    const env = await t.given.environment();
    const endpoint = await givenEndpoint(t.db, env, at('created'));
    const user = await t.given.user(env);

    expect(await t.app.runJobs()).toBe(1);

    const [request] = await receivedAt('created');
    const event = new Webhook(endpoint.secret).verify(request!.body, request!.headers as Record<string, string>) as Record<string, unknown>;
    expect(event).toEqual({
      type: 'user.created', timestamp: t.clock.now().toISOString(),
      data: expect.objectContaining({ object: 'user', id: user.id, targets: [{ type: 'user', id: user.id }], actor: expect.objectContaining({ type: 'api_key' }) }),
    });
    expect(request!.headers['content-type']).toBe('application/json');
    const [delivery] = await deliveries(env, endpoint.id);
    expect(request!.headers['webhook-id']).toBe(delivery!.event_id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1, last_response_status: 200, last_error: null, next_attempt_at: null });
    expect(await attempts(env, delivery!.id)).toEqual([expect.objectContaining({ attempt: 1, response_status: 200, response_body: 'thanks', error: null })]);
  });

  it('retries after a 500 with backoff, under the same webhook-id, and stops once answered 2xx', async () => {
    const env = await t.given.environment();
    const endpoint = await givenEndpoint(t.db, env, at('flaky'));
    await receiver.script([500, 503]);
    await t.given.user(env);

    expect(await t.app.runJobs()).toBe(1);
    const [pending] = await deliveries(env, endpoint.id);
    expect(pending).toMatchObject({ status: 'pending', attempts: 1, last_response_status: 500, last_error: 'HTTP 500' });
    const wait = pending!.next_attempt_at!.getTime() - t.clock.now().getTime();
    expect(wait).toBeGreaterThanOrEqual(500);
    expect(wait).toBeLessThanOrEqual(1000);
    expect(await t.app.runJobs()).toBe(0);

    t.clock.advance(1000);
    expect(await t.app.runJobs()).toBe(1);
    t.clock.advance(2000);
    expect(await t.app.runJobs()).toBe(1);

    const requests = await receivedAt('flaky');
    expect(requests.map((r) => r.answeredWith)).toEqual([500, 503, 200]);
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    expect(requests.every((r) => signedWith(endpoint.secret, r))).toBe(true);
    const [delivered] = await deliveries(env, endpoint.id);
    expect(delivered).toMatchObject({ status: 'succeeded', attempts: 3, last_response_status: 200 });
    expect((await attempts(env, delivered!.id)).map((a) => [a.response_status, a.error])).toEqual([[500, 'HTTP 500'], [503, 'HTTP 503'], [200, null]]);
  });

  it('gives up after the last attempt and marks the delivery failed', async () => {
    const env = await t.given.environment();
    const endpoint = await givenEndpoint(t.db, env, at('down'));
    await receiver.script(Array(20).fill(500));
    await t.given.user(env);
    for (let i = 0; i < 20; i++) {
      expect(await t.app.runJobs()).toBe(1);
      t.clock.advance(8000);
    }
    const [delivery] = await deliveries(env, endpoint.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 20, next_attempt_at: null, last_error: 'HTTP 500' });
    expect(await t.app.runJobs()).toBe(0);
    expect(await receivedAt('down')).toHaveLength(20);
  });

  it('signs with the old secret beside the new one for as long as the rotation says, then with the new one only', async () => {
    const env = await t.given.environment();
    const endpoint = await givenEndpoint(t.db, env, at('rotated'));
    const newSecret = await rotateSecret(t.db, env, endpoint.id, endpoint.secret, new Date(t.clock.now().getTime() + 24 * HOUR));
    await t.given.user(env);
    await t.app.runJobs();
    t.clock.advance(24 * HOUR);
    await t.given.user(env);
    await t.app.runJobs();

    const [during, after] = await receivedAt('rotated');
    expect(String(during!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect([signedWith(newSecret, during!), signedWith(endpoint.secret, during!)]).toEqual([true, true]);
    expect(String(after!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect([signedWith(newSecret, after!), signedWith(endpoint.secret, after!)]).toEqual([true, false]);
  });

  it('sends an endpoint only the event types it asked for', async () => {
    const env = await t.given.environment();
    const orgsOnly = await givenEndpoint(t.db, env, at('orgs-only'), { eventTypes: ['organization.created'] });
    const everything = await givenEndpoint(t.db, env, at('everything'));
    const user = await t.given.user(env);
    const org = await t.server(env).post('/organizations', { name: 'Acme', createdBy: user.id });
    expect(org.statusCode).toBe(201);
    await t.app.runJobs();

    expect((await receivedAt('orgs-only')).map((r) => JSON.parse(r.body).type)).toEqual(['organization.created']);
    expect((await receivedAt('everything')).map((r) => JSON.parse(r.body).type)).toEqual(['user.created', 'organization.created', 'organization_membership.created']);
    expect(await deliveries(env, orgsOnly.id)).toHaveLength(1);
    expect(await deliveries(env, everything.id)).toHaveLength(3);
  });

  it("delivers one endpoint's events in the order they happened", async () => {
    const env = await t.given.environment();
    const endpoint = await givenEndpoint(t.db, env, at('ordered'));
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await t.given.user(env)).id);
    await t.app.runJobs();
    const events = (await receivedAt('ordered')).map((r) => JSON.parse(r.body));
    expect(events.map((e) => e.data.id)).toEqual(ids);
    expect((await deliveries(env, endpoint.id)).every((d) => d.status === 'succeeded')).toBe(true);
  });

  it("after a failed attempt, holds the endpoint's later deliveries until that one's retry, then sends all in order", async () => {
    const env = await t.given.environment();
    const endpoint = await givenEndpoint(t.db, env, at('held'));
    await receiver.script([500]);
    const ids = [(await t.given.user(env)).id, (await t.given.user(env)).id, (await t.given.user(env)).id];

    expect(await t.app.runJobs()).toBe(3);
    expect((await receivedAt('held')).map((r) => JSON.parse(r.body).data.id)).toEqual([ids[0]]);
    const held = await deliveries(env, endpoint.id);
    expect(held.map((d) => [d.status, d.attempts])).toEqual([['pending', 1], ['pending', 0], ['pending', 0]]);
    expect(new Set(held.map((d) => d.next_attempt_at!.getTime())).size).toBe(1);
    const jobs = await t.db.selectFrom('jobs').select(['attempts', 'run_at']).where('environment_id', '=', env.id).where('kind', '=', 'webhook.deliver').orderBy('seq').execute();
    expect(jobs.map((j) => j.attempts)).toEqual([1, 0, 0]);
    expect(new Set(jobs.map((j) => j.run_at.getTime())).size).toBe(1);

    t.clock.advance(1000);
    expect(await t.app.runJobs()).toBe(3);
    expect((await receivedAt('held')).map((r) => JSON.parse(r.body).data.id)).toEqual([ids[0], ...ids]);
    expect((await deliveries(env, endpoint.id)).map((d) => [d.status, d.attempts])).toEqual([['succeeded', 2], ['succeeded', 1], ['succeeded', 1]]);
  });

  it('postpones the rest of an endpoint\'s group once its time budget is spent, and sends it in order on the next claim', async () => {
    const hurried = await startTestApp({
      jobsInBackground: false, webhooks: { sender: { privateTargets: 'allow' }, delivery: { groupBudgetMs: 0 } },
    }, { ownDatabase: true });
    try {
      const env = await hurried.given.environment();
      await givenEndpoint(hurried.db, env, at('budget'));
      const ids = [(await hurried.given.user(env)).id, (await hurried.given.user(env)).id, (await hurried.given.user(env)).id];
      expect(await hurried.app.runJobs()).toBe(6);
      expect((await receivedAt('budget')).map((r) => JSON.parse(r.body).data.id)).toEqual(ids);
      const jobs = await hurried.db.selectFrom('jobs').select(['status', 'attempts']).where('environment_id', '=', env.id).orderBy('seq').execute();
      expect(jobs).toEqual(Array(3).fill({ status: 'done', attempts: 1 }));
    } finally {
      await hurried.close();
    }
  });

  it('counts a receiver that does not answer within the attempt timeout as a failed attempt, due again later', async () => {
    const impatient = await startTestApp({
      jobsInBackground: false, webhooks: { sender: { privateTargets: 'allow', timeoutMs: 300 }, delivery: { baseDelayMs: 1000, maxDelayMs: 8000 } },
    }, { ownDatabase: true });
    try {
      const env = await impatient.given.environment();
      await givenEndpoint(impatient.db, env, at('slow'));
      await receiver.script(['hang']);
      await impatient.given.user(env);
      expect(await impatient.app.runJobs()).toBe(1);
      const [delivery] = await impatient.db.selectFrom('webhook_deliveries').selectAll().where('environment_id', '=', env.id).execute();
      expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_response_status: null, last_error: expect.stringMatching(/timeout|aborted/i) });
      expect(delivery!.next_attempt_at!.getTime()).toBeGreaterThan(impatient.clock.now().getTime());
      expect((await receivedAt('slow')).map((r) => r.answeredWith)).toEqual(['hang']);
    } finally {
      await impatient.close();
    }
  });

  it("never sends one environment's events to another environment's endpoint", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    await givenEndpoint(t.db, mine, at('mine'));
    await t.given.user(theirs);
    await t.app.runJobs();
    expect(await receivedAt('mine')).toEqual([]);
    expect(await t.db.selectFrom('webhook_events').select('id').where('environment_id', '=', theirs.id).execute()).toEqual([]);
  });

  it('disables an endpoint whose every attempt failed for the whole window, records why, and sends its pending deliveries nowhere', async () => {
    const env = await t.given.environment();
    const endpoint = await givenEndpoint(t.db, env, at('dying'));
    await receiver.script(Array(40).fill(500));
    await t.given.user(env);
    await t.app.runJobs();
    t.clock.advance(24 * HOUR);
    await t.given.user(env);
    await t.app.runJobs();

    const row = await t.db.selectFrom('webhook_endpoints').selectAll().where('environment_id', '=', env.id).where('id', '=', endpoint.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ enabled: false, disabled_reason: 'failing' });
    const trail = await t.server(env).get('/audit-events?action=webhook_endpoint.disabled');
    expect(trail.json().items).toEqual([expect.objectContaining({ action: 'webhook_endpoint.disabled', targets: [{ type: 'webhook_endpoint', id: endpoint.id }] })]);

    const sent = (await receivedAt('dying')).length;
    t.clock.advance(HOUR);
    await t.app.runJobs();
    expect(await receivedAt('dying')).toHaveLength(sent);
    expect((await deliveries(env, endpoint.id)).map((d) => [d.status, d.last_error])).toEqual([['failed', 'HTTP 500'], ['failed', 'endpoint disabled']]);
  });
});

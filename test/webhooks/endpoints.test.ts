import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSealer } from '../../src/platform/crypto/encryption.js';
import { WEBHOOK_EVENT_TYPE_NAMES, WEBHOOK_EVENT_TYPES, examplePayload } from '../../src/webhooks/catalogue.js';
import { startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/app.js';
import { createEndpoint, DAY_MS, endpointActions, eventsOf, expectProblem, MISSING_ID, storedEndpoints } from './support.js';

const SECRET = /^whsec_[A-Za-z0-9+/]{32}$/;
const sealer = createSealer(TEST_ENCRYPTION_KEY);
const opened = (sealed: Buffer | null) => sealed && sealer.open(sealed).toString('utf8');

describe('Server API: /webhook-endpoints', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({ jobsInBackground: false }); });
  afterAll(() => t.close());

  it('creates an endpoint: 201 with its secret once, stored sealed, and the trail records it', async () => {
    const env = await t.given.environment();
    const now = t.clock.now().toISOString();
    const res = await t.server(env).post('/webhook-endpoints', {
      url: 'https://hooks.example.com/in?x=1', eventTypes: ['user.created', 'user.deleted'], description: 'CRM sync',
    });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json();
    expect(created).toEqual({
      id: expect.any(String), url: 'https://hooks.example.com/in?x=1', description: 'CRM sync', eventTypes: ['user.created', 'user.deleted'],
      enabled: true, disabledReason: null, createdAt: now, updatedAt: now, secret: expect.stringMatching(SECRET),
    });
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64')).toHaveLength(24);
    // A Standard Webhooks verifier takes it as it is, and verifies what it signs.
    const hook = new Webhook(created.secret);
    const payload = JSON.stringify(examplePayload('user.created'));
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
    expect(hook.verify(payload, { ...headers, 'webhook-signature': hook.sign('msg_1', new Date(), payload) })).toEqual(JSON.parse(payload));

    const [row] = await storedEndpoints(t, env);
    expect(row).toMatchObject({ id: created.id, enabled: true, disabled_reason: null, previous_secret_sealed: null, previous_secret_expires_at: null, failing_since: null });
    expect(row!.secret_sealed.toString('utf8')).not.toContain(created.secret.slice(6));
    expect(opened(row!.secret_sealed)).toBe(created.secret);

    const one = await t.server(env).get(`/webhook-endpoints/${created.id}`);
    expect(one.statusCode).toBe(200);
    const { secret: _shownOnce, ...endpoint } = created;
    expect(one.json()).toEqual(endpoint);
    expect((await t.server(env).get('/webhook-endpoints')).json()).toEqual({ items: [endpoint], nextCursor: null, hasMore: false });
    const [event] = await eventsOf(t, env, 'webhook_endpoint.created');
    expect(event).toMatchObject({ actor_type: 'api_key', targets: [{ type: 'webhook_endpoint', id: created.id }], metadata: { eventTypes: ['user.created', 'user.deleted'], enabled: true } });
    expect(JSON.stringify(event)).not.toContain(created.secret);
  });

  it('creates an endpoint for every type (eventTypes null), off when enabled is false, and accepts a loopback http URL', async () => {
    const env = await t.given.environment();
    const created = await createEndpoint(t, env, { url: 'http://127.0.0.1:8080/hook', enabled: false });
    expect(created).toMatchObject({ url: 'http://127.0.0.1:8080/hook', eventTypes: null, description: null, enabled: false, disabledReason: 'manual' });
  });

  it('keeps an event type named twice once', async () => {
    const env = await t.given.environment();
    const created = await createEndpoint(t, env, { eventTypes: ['user.created', 'user.banned', 'user.created'] });
    expect(created.eventTypes).toEqual(['user.created', 'user.banned']);
    expect((await storedEndpoints(t, env))[0]!.event_types).toEqual(['user.created', 'user.banned']);
  });

  it('lists endpoints oldest first, a page at a time', async () => {
    const env = await t.given.environment();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await createEndpoint(t, env, { description: `#${i}` })).id);
    const first = (await t.server(env).get('/webhook-endpoints?limit=2')).json();
    expect(first.items.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
    expect(first).toMatchObject({ nextCursor: ids[1], hasMore: true });
    const second = (await t.server(env).get(`/webhook-endpoints?limit=2&cursor=${first.nextCursor}`)).json();
    expect(second).toMatchObject({ items: [expect.objectContaining({ id: ids[2], description: '#2' })], nextCursor: null, hasMore: false });
  });

  it.each([
    ['a URL that does not parse', { url: 'not a url' }, '/body/url', 'must be an absolute URL'],
    ['a scheme other than http or https', { url: 'ftp://files.example.com/in' }, '/body/url', 'must be an https: or http: URL'],
    ['credentials in the URL', { url: 'https://ada:pw@hooks.example.com/in' }, '/body/url', 'must not carry a username or password'],
    ['an unknown event type, named', { eventTypes: ['user.created', 'user.exploded'] }, '/body/eventTypes/1', '"user.exploded" is not a webhook event type (GET /webhook-event-types lists them)'],
    ['an inherited property name as event type', { eventTypes: ['constructor'] }, '/body/eventTypes/0', '"constructor" is not a webhook event type (GET /webhook-event-types lists them)'],
  ])('refuses %s with 400 invalid_request and stores nothing', async (_case, body, path, message) => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/webhook-endpoints', { url: 'https://hooks.example.com/in', ...body });
    const problem = expectProblem(res, 400, 'invalid_request');
    expect(problem.properties.errors).toEqual([{ path, message }]);
    expect(problem.detail).toBe(`Invalid request body: ${path.slice(6).replaceAll('/', '.')} ${message}.`);
    expect(await storedEndpoints(t, env)).toEqual([]);
    expect(await endpointActions(t, env)).toEqual([]);
  });

  it.each([
    ['a URL over 2048 characters', { url: `https://hooks.example.com/${'a'.repeat(2048)}` }, '/body/url'],
    ['an empty eventTypes list', { eventTypes: [] }, '/body/eventTypes'],
    ['a description over 500 characters', { description: 'd'.repeat(501) }, '/body/description'],
    ['an unknown field', { secret: 'whsec_mine' }, '/body/secret'],
  ])('refuses %s with 400 invalid_request naming the field, and stores nothing', async (_case, body, path) => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/webhook-endpoints', { url: 'https://hooks.example.com/in', ...body });
    expect(expectProblem(res, 400, 'invalid_request').properties.errors).toEqual([expect.objectContaining({ path })]);
    expect(await storedEndpoints(t, env)).toEqual([]);
  });

  it('refuses a 21st endpoint with 409 webhook_endpoint_limit', async () => {
    const env = await t.given.environment();
    for (let i = 0; i < 20; i++) await createEndpoint(t, env);
    const problem = expectProblem(await t.server(env).post('/webhook-endpoints', { url: 'https://hooks.example.com/21' }), 409, 'webhook_endpoint_limit');
    expect(problem.properties.max).toBe(20);
    expect(await storedEndpoints(t, env)).toHaveLength(20);
  });

  it('keeps to 20 endpoints when creations race', async () => {
    const env = await t.given.environment();
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => t.server(env).post('/webhook-endpoints', { url: `https://hooks.example.com/${i}` })));
    expect(answers.map((res) => res.statusCode).sort()).toEqual([...Array(20).fill(201), ...Array(4).fill(409)]);
    expect(await storedEndpoints(t, env)).toHaveLength(20);
  });

  it('updates url, eventTypes and description; enabled false records manual, true clears the reason and failing_since', async () => {
    const env = await t.given.environment();
    const created = await createEndpoint(t, env, { eventTypes: ['user.created'] });
    t.clock.advance(1000);
    const later = t.clock.now().toISOString();
    const patched = await t.server(env).patch(`/webhook-endpoints/${created.id}`, { url: 'https://other.example.com/x', eventTypes: null, description: 'now all', enabled: false });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toEqual({
      id: created.id, url: 'https://other.example.com/x', description: 'now all', eventTypes: null, enabled: false, disabledReason: 'manual', createdAt: created.createdAt, updatedAt: later,
    });
    await t.db.updateTable('webhook_endpoints').set({ disabled_reason: 'failing', failing_since: new Date(later) }).where('id', '=', created.id).execute();
    const enabled = await t.server(env).patch(`/webhook-endpoints/${created.id}`, { enabled: true });
    expect(enabled.json()).toMatchObject({ enabled: true, disabledReason: null });
    const [row] = await storedEndpoints(t, env);
    expect(row).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    expect(opened(row!.secret_sealed)).toBe(created.secret);
    expect((await eventsOf(t, env, 'webhook_endpoint.updated')).map((e) => e.metadata)).toEqual([
      { changedFields: ['description', 'enabled', 'eventTypes', 'url'] }, { changedFields: ['enabled'] },
    ]);
  });

  it('refuses an invalid update with 400 and leaves the endpoint as it was', async () => {
    const env = await t.given.environment();
    const created = await createEndpoint(t, env);
    const res = await t.server(env).patch(`/webhook-endpoints/${created.id}`, { url: 'javascript:alert(1)', description: 'changed' });
    expect(expectProblem(res, 400, 'invalid_request').properties.errors).toEqual([{ path: '/body/url', message: 'must be an https: or http: URL' }]);
    expect(expectProblem(await t.server(env).patch(`/webhook-endpoints/${created.id}`, {}), 400, 'invalid_request')).toBeTruthy();
    expect((await t.server(env).get(`/webhook-endpoints/${created.id}`)).json()).toMatchObject({ url: created.url, description: null });
    expect(await endpointActions(t, env)).toEqual(['webhook_endpoint.created']);
  });

  it('rotates the secret: 200 with a new one; the old one is kept sealed as the previous, signing for 24 hours', async () => {
    const env = await t.given.environment();
    const created = await createEndpoint(t, env);
    t.clock.advance(5000);
    const res = await t.server(env).post(`/webhook-endpoints/${created.id}/rotate-secret`);
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json();
    const { secret: _old, ...endpoint } = created;
    expect(rotated).toEqual({ ...endpoint, updatedAt: t.clock.now().toISOString(), secret: expect.stringMatching(SECRET) });
    expect(rotated.secret).not.toBe(created.secret);
    expect(() => new Webhook(rotated.secret)).not.toThrow();
    const [row] = await storedEndpoints(t, env);
    expect(opened(row!.secret_sealed)).toBe(rotated.secret);
    expect(opened(row!.previous_secret_sealed)).toBe(created.secret);
    expect(row!.previous_secret_expires_at).toEqual(new Date(t.clock.now().getTime() + DAY_MS));
    expect((await t.server(env).get(`/webhook-endpoints/${created.id}`)).json()).not.toHaveProperty('secret');
    expect(await endpointActions(t, env)).toEqual(['webhook_endpoint.created', 'webhook_endpoint.secret_rotated']);
  });

  it('deletes an endpoint: 204, then 404 resource_not_found', async () => {
    const env = await t.given.environment();
    const created = await createEndpoint(t, env);
    const res = await t.server(env).delete(`/webhook-endpoints/${created.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expectProblem(await t.server(env).get(`/webhook-endpoints/${created.id}`), 404, 'resource_not_found');
    expectProblem(await t.server(env).delete(`/webhook-endpoints/${created.id}`), 404, 'resource_not_found');
    expect(await storedEndpoints(t, env)).toEqual([]);
    expect(await endpointActions(t, env)).toEqual(['webhook_endpoint.created', 'webhook_endpoint.deleted']);
  });

  it("answers 404 for another environment's endpoint on every route, and changes nothing", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const created = await createEndpoint(t, theirs);
    const before = await storedEndpoints(t, theirs);
    const api = t.server(mine);
    for (const res of [
      await api.get(`/webhook-endpoints/${created.id}`),
      await api.patch(`/webhook-endpoints/${created.id}`, { enabled: false }),
      await api.post(`/webhook-endpoints/${created.id}/rotate-secret`),
      await api.get(`/webhook-endpoints/${created.id}/deliveries`),
      await api.delete(`/webhook-endpoints/${created.id}`),
      await api.get(`/webhook-endpoints/${MISSING_ID}`),
    ]) expectProblem(res, 404, 'resource_not_found');
    expect((await api.get('/webhook-endpoints')).json()).toEqual({ items: [], nextCursor: null, hasMore: false });
    expect(await storedEndpoints(t, theirs)).toEqual(before);
    expect(await endpointActions(t, mine)).toEqual([]);
    expect(await endpointActions(t, theirs)).toEqual(['webhook_endpoint.created']);
  });

  it('lists every event type of the catalogue with its description and an example payload', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).get('/webhook-event-types');
    expect(res.statusCode).toBe(200);
    const { items } = res.json();
    expect(items.map((i: { type: string }) => i.type)).toEqual(WEBHOOK_EVENT_TYPE_NAMES);
    expect(items).toContainEqual({ type: 'user.created', description: WEBHOOK_EVENT_TYPES['user.created'], example: examplePayload('user.created') });
    expect(items.find((i: { type: string }) => i.type === 'session.created').example).toMatchObject({ type: 'session.created', data: { object: 'user', targets: [{ type: 'user' }, { type: 'session' }] } });
  });
});

import type { AddressInfo } from 'node:net';
import { createAdminClient, createClientPlane, createServerClient, GatehouseError, type ServerClientOptions } from '@gatehouse/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { signedInOperator } from '../operators/support.js';
import { PASSWORD } from '../helpers/given.js';
import { postEnvironmentOnOwnHost } from '../helpers/own-frontend-host.js';

let t: TestApp;
let baseUrl: string;
let port: number;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}`;
});
afterAll(() => t?.close());

const serverClient = (env: TestEnv, extra: Partial<Extract<ServerClientOptions, { secretKey: string }>> = {}) =>
  createServerClient({ baseUrl, secretKey: env.secretKey, ...extra });

/** A fetch that answers the first `times` calls itself with `status` (and Retry-After: 1), then goes through; it records every request. */
function flakyFetch(status: number, times: number) {
  const seen: Request[] = [];
  const fetchImpl = async (input: Request | string | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    seen.push(request.clone());
    if (seen.length <= times) {
      return new Response(JSON.stringify({ type: 'urn:gatehouse:problem:x', title: 'x', status, detail: 'try later', instance: 'urn:uuid:x', properties: { code: status === 429 ? 'rate_limited' : 'unavailable' } }),
        { status, headers: { 'content-type': 'application/problem+json', 'retry-after': '1' } });
    }
    return fetch(request);
  };
  return { fetch: fetchImpl as typeof fetch, seen };
}

describe('the Server API client', () => {
  it('creates and reads a user with typed methods taking one flat object', async () => {
    const env = await t.given.environment();
    const gatehouse = serverClient(env);
    const created = await gatehouse.createUser({ email: 'sdk.user@example.com', password: PASSWORD, firstName: 'Sdk' });
    expect(created).toMatchObject({ email: 'sdk.user@example.com', firstName: 'Sdk', status: 'active' });
    expect(await gatehouse.getUser({ userId: created.id })).toEqual(created);
    const banned = await gatehouse.banUser({ userId: created.id });
    expect(banned.status).toBe('banned');
    expect(await gatehouse.deleteUser({ userId: created.id })).toBeUndefined();
  });

  it('throws a GatehouseError with the status, the code and the refused fields', async () => {
    const env = await t.given.environment();
    const gatehouse = serverClient(env);
    const missing = await gatehouse.getUser({ userId: '01900000-0000-7000-8000-000000000000' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(GatehouseError);
    expect(missing).toMatchObject({ status: 404, code: 'user_not_found', errors: [], retryAfter: null, instance: expect.stringMatching(/^urn:uuid:/) });
    const invalid = await gatehouse.createUser({ email: 'not an email' }).catch((e: unknown) => e) as GatehouseError;
    expect(invalid).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(invalid.errors.map((e) => e.path)).toEqual(['/body/email']);
    const wrongKey = await serverClient(env, { secretKey: 'sk_wrong' }).listUsers().catch((e: unknown) => e);
    expect(wrongKey).toMatchObject({ status: 401, code: 'unauthenticated' });
  });

  it('walks every page of a list with paginate', async () => {
    const env = await t.given.environment();
    const gatehouse = serverClient(env);
    const ids = [];
    for (let i = 0; i < 7; i++) ids.push((await gatehouse.createUser({ email: `page-${i}@example.com` })).id);
    const seen = [];
    for await (const user of gatehouse.paginate('listUsers', { limit: 3 })) seen.push(user.id);
    expect(seen.sort()).toEqual(ids.sort());
    const searched = [];
    for await (const user of gatehouse.paginate('searchUsers', { emailSearch: 'page-', limit: 2 })) searched.push(user.id);
    expect(searched.sort()).toEqual(ids.sort());
  });

  it('gives every audit append its own Idempotency-Key, and replays one it is given', async () => {
    const env = await t.given.environment();
    const gatehouse = serverClient(env);
    const event = { action: 'document.shared', result: 'success', schemaVersion: 1 as const, occurredAt: new Date().toISOString(), actor: { type: 'service', id: null }, targets: [{ type: 'document', id: 'doc_1' }], metadata: {} };
    const first = await gatehouse.appendAuditEvent(event);
    const second = await gatehouse.appendAuditEvent(event);
    expect(second.id).not.toBe(first.id);
    const keyed = await gatehouse.appendAuditEvent(event, { idempotencyKey: 'order-42' });
    expect((await gatehouse.appendAuditEvent(event, { idempotencyKey: 'order-42' })).id).toBe(keyed.id);
  });

  it('retries a 503 on a read after Retry-After, and an audit append with the same key, but never an unkeyed create', async () => {
    const env = await t.given.environment();
    const reads = flakyFetch(503, 1);
    const users = await serverClient(env, { fetch: reads.fetch }).listUsers();
    expect(users.items).toEqual([]);
    expect(reads.seen).toHaveLength(2);

    const appends = flakyFetch(429, 2);
    const event = { action: 'a.b', result: 'success', schemaVersion: 1 as const, occurredAt: new Date().toISOString(), actor: { type: 'service', id: null }, targets: [], metadata: {} };
    await serverClient(env, { fetch: appends.fetch }).appendAuditEvent(event);
    expect(appends.seen).toHaveLength(3);
    expect(new Set(appends.seen.map((r) => r.headers.get('idempotency-key'))).size).toBe(1);

    const creates = flakyFetch(503, 1);
    const refused = await serverClient(env, { fetch: creates.fetch }).createUser({ email: 'once@example.com' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 503, retryAfter: 1 });
    expect(creates.seen).toHaveLength(1);
  });
});

describe('the clients of an operator session (the dashboard)', () => {
  it("calls the Server API with the operator's cookie and the Gatehouse-Environment header instead of a secret key", async () => {
    const env = await t.given.environment();
    const operator = await signedInOperator(t);
    const sent: Request[] = [];
    // Node's fetch keeps no cookies: this one adds the operator's, and the Origin a browser page on the base URL sends.
    const browserLike = async (request: Request) => {
      sent.push(request.clone());
      const headers = new Headers(request.headers);
      headers.set('cookie', `gatehouse_operator=${operator.cookie}`);
      headers.set('origin', baseUrl);
      return fetch(new Request(request, { headers }));
    };
    const gatehouse = createServerClient({ baseUrl, operator: { environmentId: env.id }, fetch: browserLike });
    const created = await gatehouse.createUser({ email: 'operator.made@example.com' });
    expect(created).toMatchObject({ email: 'operator.made@example.com', environmentId: env.id });
    expect(sent.map((r) => [r.headers.get('gatehouse-environment'), r.headers.get('authorization')])).toEqual([[env.id, null]]);
    expect(sent[0].credentials).toBe('same-origin');
    expect(() => createServerClient({ baseUrl, operator: { environmentId: '' } })).toThrow(expect.objectContaining({ code: 'missing_option' }));
  });

  it('calls the admin API with the admin token, or with the operator session and no token', async () => {
    const env = await t.given.environment();
    const withToken = createAdminClient({ baseUrl, adminToken: ADMIN_TOKEN });
    expect((await withToken.getEnvironment({ id: env.id })).id).toBe(env.id);
    const operator = await signedInOperator(t);
    const sent: Request[] = [];
    const withCookie = createAdminClient({
      baseUrl, operatorSession: true,
      fetch: async (request) => {
        sent.push(request.clone());
        return fetch(new Request(request, { headers: { ...Object.fromEntries(request.headers), cookie: `gatehouse_operator=${operator.cookie}` } }));
      },
    });
    expect((await withCookie.getCurrentOperator()).operator.email).toBe(operator.email);
    expect(sent[0].headers.get('authorization')).toBeNull();
    const refused = await createAdminClient({ baseUrl, operatorSession: true }).listEnvironments().catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(() => createAdminClient({ baseUrl, adminToken: '' })).toThrow(expect.objectContaining({ code: 'missing_option' }));
  });
});

describe('the client-plane client', () => {
  it('signs a native app in, keeps its session token, reads /me and the sessions, and signs out', async () => {
    const created = await postEnvironmentOnOwnHost(t, { name: 'sdk-client', frontendHost: `localhost:${port}`, settings: { emailVerificationRequired: false } });
    const env: TestEnv = { ...created.json(), name: 'sdk-client' };
    const user = await t.given.user(env, { email: 'native@example.com' });
    const app = createClientPlane({ frontendUrl: `http://localhost:${port}`, native: true });
    const signedIn = await app.signIn({ email: 'native@example.com', password: PASSWORD });
    if ('mfaRequired' in signedIn) throw new Error('no second factor was enrolled');
    expect(signedIn.user.id).toBe(user.id);
    expect(app.sessionToken()).toMatch(/^sess_/);
    expect((await app.getMe()).email).toBe('native@example.com');
    expect((await app.listMySessions()).items).toHaveLength(1);
    await app.signOut();
    expect(app.sessionToken()).toBeUndefined();
    await expect(app.getMe()).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
  });
});

import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { createEnvironment, expectProblem, throwawayApp, throwawayPglite, unreachablePostgres, type ThrowawayApp } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

const JSON_TYPE = { 'content-type': 'application/json' };
const userRows = (env: TestEnv) =>
  t.db.selectFrom('users').select(['id', 'email', 'updated_at', 'public_metadata']).where('environment_id', '=', env.id).orderBy('id').execute();

/** A valid create-user body, as raw JSON padded with trailing spaces to exactly `bytes` bytes. */
function createUserBodyOf(bytes: number) {
  const json = JSON.stringify({ email: `padded-${randomUUID()}@example.com`, password: PASSWORD });
  return json + ' '.repeat(bytes - Buffer.byteLength(json));
}

describe('malformed requests', () => {
  it('answers malformed JSON with 400 invalid_request', async () => {
    const env = await t.given.environment();
    const body = expectProblem(await t.server(env).post('/users', '{"email": "a@example.com",', { headers: JSON_TYPE }), 400, 'invalid_request');
    expect(body.detail).toBe('The request body is not valid JSON.');
  });

  it('refuses a body that tries to poison the prototype with 400 invalid_request', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users', '{"email":"a@example.com","__proto__":{"status":"banned"}}', { headers: JSON_TYPE });
    expectProblem(res, 400, 'invalid_request');
  });

  it.each([
    ['text/plain', 'email=a@example.com'],
    ['application/x-www-form-urlencoded', 'email=a%40example.com'],
    ['application/xml', '<user><email>a@example.com</email></user>'],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="email"\r\n\r\na@example.com\r\n--x--'],
  ])('answers a %s body on a JSON endpoint with 415 unsupported_media_type naming the type', async (contentType, payload) => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users', payload, { headers: { 'content-type': contentType } });
    const body = expectProblem(res, 415, 'unsupported_media_type');
    expect(body.detail).toContain(contentType);
    expect(body.detail).toContain('application/json');
    expect(body.title).toBe('Unsupported Media Type');
  });

  it('accepts application/json with a charset parameter', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users', JSON.stringify({ email: `charset-${randomUUID()}@example.com` }), { headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(res.statusCode).toBe(201);
  });

  it('answers a body over 64 KiB with 413 payload_too_large', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users', createUserBodyOf(64 * 1024 + 1), { headers: JSON_TYPE });
    const body = expectProblem(res, 413, 'payload_too_large');
    expect(body.title).toBe('Content Too Large');
    expect(await userRows(env)).toEqual([]);
  });

  it('accepts a body of exactly 64 KiB', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users', createUserBodyOf(64 * 1024), { headers: JSON_TYPE });
    expect(res.statusCode).toBe(201);
  });

  it('answers a path id that is not a uuid with 400 and the parameter in properties.errors', async () => {
    const env = await t.given.environment();
    const body = expectProblem(await t.server(env).get('/users/not-a-uuid'), 400, 'invalid_request');
    expect(body.properties.errors).toEqual([{ path: '/params/userId', message: 'must match format "uuid"' }]);
  });

  it('answers an unknown body field with 400 naming the field in properties.errors', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users', { email: `x-${randomUUID()}@example.com`, role: 'admin' });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.properties.errors).toEqual([{ path: '/body/role', message: 'must NOT have additional properties' }]);
  });

  it('lists every invalid field at once', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users', { email: 'not-an-email', firstName: '', role: 'admin' });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.properties.errors.map((e: { path: string }) => e.path).sort()).toEqual(['/body/email', '/body/firstName', '/body/role']);
    for (const error of body.properties.errors) expect(Object.keys(error).sort()).toEqual(['message', 'path']);
  });

  it('takes JSON body values as sent, never coercing a number, boolean or string into another type', async () => {
    const env = await t.given.environment();
    const before = await userRows(env);
    const numeric = expectProblem(await t.server(env).post('/users', { email: `n-${randomUUID()}@example.com`, password: 12345678 }), 400, 'invalid_request');
    expect(numeric.properties.errors).toEqual([{ path: '/body/password', message: 'must be string' }]);
    const named = expectProblem(await t.server(env).post('/users', { email: `n-${randomUUID()}@example.com`, firstName: true }), 400, 'invalid_request');
    expect(named.properties.errors).toEqual([{ path: '/body/firstName', message: 'must be string' }]);
    const single = expectProblem(await t.server(env).put('/allowed-origins', { origins: 'https://app.example.com' }), 400, 'invalid_request');
    expect(single.properties.errors).toEqual([{ path: '/body/origins', message: 'must be array' }]);
    expect(await userRows(env)).toEqual(before);
  });

  it('still reads query strings as text coerced to the declared types (numbers, repeated parameters)', async () => {
    const env = await t.given.environment();
    await t.given.user(env);
    const res = await t.server(env).get('/users?limit=1&status=active&status=banned');
    expect(res.statusCode).toBe(200);
    expect(res.json().items).toHaveLength(1);
  });

  it('answers an unknown query parameter and an out-of-range limit with 400 naming them', async () => {
    const env = await t.given.environment();
    const unknown = expectProblem(await t.server(env).get('/users?sort=email'), 400, 'invalid_request');
    expect(unknown.properties.errors).toEqual([{ path: '/querystring/sort', message: 'must NOT have additional properties' }]);
    const limit = expectProblem(await t.server(env).get('/users?limit=1000'), 400, 'invalid_request');
    expect(limit.properties.errors).toEqual([{ path: '/querystring/limit', message: 'must be <= 100' }]);
  });

  it('answers a badly percent-encoded URL with 400 problem+json', async () => {
    const env = await t.given.environment();
    const body = expectProblem(await t.server(env).get('/users/%E0%A4%A'), 400, 'invalid_request');
    expect(body.detail).not.toContain('%E0');
  });

  it('answers an overlong path segment with 400 problem+json, not a bare JSON error', async () => {
    const env = await t.given.environment();
    expectProblem(await t.server(env).get(`/users/${'a'.repeat(500)}`), 400, 'invalid_request');
  });

  it.each<[string, { url: string; method?: 'GET' | 'DELETE'; key?: boolean; admin?: boolean; client?: boolean }]>([
    ['at the root', { url: '/no-such-route' }],
    ['under the Server API, with a valid key', { url: '/api/server/v1/no-such-route', key: true }],
    ['under the Server API, without a key', { url: '/api/server/v1/no-such-route' }],
    ['under the admin plane', { url: '/api/admin/v1/no-such-route', admin: true }],
    ['on the client plane', { url: '/_svc/no-such-route', client: true }],
    ['for a method the path does not serve', { url: '/api/server/v1/allowed-origins', method: 'DELETE', key: true }],
  ])('answers an unknown route %s with 404 resource_not_found', async (_where, route) => {
    const env = await t.given.environment();
    const headers: Record<string, string> = {};
    if (route.key) headers.authorization = `Bearer ${env.secretKey}`;
    if (route.admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
    if (route.client) headers.host = env.frontendHost;
    const res = await t.app.inject({ method: route.method ?? 'GET', url: route.url, headers });
    expectProblem(res, 404, 'resource_not_found');
  });

  it('answers a missing secret key with 401 unauthenticated and WWW-Authenticate: Bearer', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/server/v1/users' });
    expectProblem(res, 401, 'unauthenticated');
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('gives every error its own instance id', async () => {
    const env = await t.given.environment();
    const instances = new Set<string>();
    for (let i = 0; i < 5; i++) instances.add((await t.server(env).get('/users/not-a-uuid')).json().instance);
    expect(instances.size).toBe(5);
  });

  it('changes no stored state for any refused request', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { publicMetadata: { plan: 'free' } });
    const before = await userRows(env);
    expect(before).toHaveLength(1);
    const server = t.server(env);
    const refused = [
      await server.post('/users', '{"email":', { headers: JSON_TYPE }),
      await server.post('/users', 'email=evil@example.com', { headers: { 'content-type': 'text/plain' } }),
      await server.post('/users', createUserBodyOf(64 * 1024 + 1), { headers: JSON_TYPE }),
      await server.post('/users', { email: 'evil@example.com', role: 'admin' }),
      await server.patch('/users/not-a-uuid', { firstName: 'Evil' }),
      await server.patch(`/users/${user.id}`, { firstName: 'Evil', status: 'banned' }),
      await server.patch(`/users/${user.id}/metadata`, '{"publicMetadata":{"plan":"pro"}', { headers: JSON_TYPE }),
      await server.patch(`/users/${user.id}/metadata`, 'plan=pro', { headers: { 'content-type': 'text/plain' } }),
      await server.post(`/users/${user.id}/no-such-action`),
    ];
    expect(refused.map((r) => r.statusCode)).toEqual([400, 415, 413, 400, 400, 400, 400, 415, 404]);
    expect(await userRows(env)).toEqual(before);
  });
});

describe('server faults on the embedded database', () => {
  // One throwaway database for both faults (PGlite is slow to start): first a table goes missing, then it closes.
  let broken: ThrowawayApp;
  let env: { secretKey: string };
  beforeAll(async () => {
    broken = await throwawayApp(await throwawayPglite());
    env = await createEnvironment(broken.app);
  });
  afterAll(() => broken.close());

  it('answers an unexpected failure with an opaque 500 whose instance is in the log line, without stack or SQL', async () => {
    await sql`alter table users rename to users_gone`.execute(broken.database.db);
    const email = `fault-${randomUUID()}@example.com`;
    const res = await broken.app.inject({
      method: 'POST', url: '/api/server/v1/users', headers: { authorization: `Bearer ${env.secretKey}` }, payload: { email, password: PASSWORD },
    });

    const body = expectProblem(res, 500, 'internal_error');
    expect(body).toMatchObject({ title: 'Internal Server Error', detail: 'An unexpected error occurred.', properties: { code: 'internal_error' } });
    for (const leak of ['users', 'relation', 'insert', 'select', 'stack', ' at ', '.ts', 'node_modules', email, PASSWORD, env.secretKey]) {
      expect(res.body.toLowerCase()).not.toContain(leak.toLowerCase());
    }
    const logged = broken.logLines().filter((line) => line.instance === body.instance);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 50, msg: 'unhandled error', err: { message: 'relation "users" does not exist' } });
    const line = JSON.stringify(logged[0]);
    for (const secret of [email, PASSWORD, env.secretKey, 'argon2id']) expect(line).not.toContain(secret);
  });

  it('answers 503 unavailable with Retry-After once the database is closed', async () => {
    await broken.database.close();
    // The secret key may be answered from the process cache; listing users must reach the database.
    const res = await broken.app.inject({ method: 'GET', url: '/api/server/v1/users', headers: { authorization: `Bearer ${env.secretKey}` } });
    expectProblem(res, 503, 'unavailable');
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).not.toContain('destroyed');
  });
});

describe('server faults on PostgreSQL', () => {
  it('answers 503 unavailable at once when PostgreSQL refuses connections, on every plane', async () => {
    const broken = await throwawayApp(await unreachablePostgres(), { migrate: false });
    try {
      const server = await broken.app.inject({ method: 'GET', url: '/api/server/v1/users', headers: { authorization: 'Bearer sk_anything' } });
      const client = await broken.app.inject({ method: 'GET', url: '/_svc/me', headers: { host: 'app.localhost:3000' } });
      const admin = await broken.app.inject({ method: 'GET', url: '/api/admin/v1/environments', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      for (const res of [server, client, admin]) {
        expectProblem(res, 503, 'unavailable');
        expect(res.headers['retry-after']).toBe('1');
        expect(res.body).not.toContain('ECONNREFUSED');
      }
    } finally {
      await broken.close();
    }
  });
});

import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';

let t: TestApp;
const logLines: string[] = [];
beforeAll(async () => { t = await startTestApp({ logLevel: 'warn', logStream: { write: (line) => { logLines.push(line); } } }); });
afterAll(() => t.close());

const APP = 'https://app.example.com';

async function withOrigins(origins: string[]): Promise<TestEnv> {
  const env = await t.given.environment();
  const res = await t.server(env).put('/allowed-origins', { origins });
  expect(res.statusCode).toBe(200);
  return env;
}

const storedOrigins = async (env: TestEnv) =>
  (await t.db.selectFrom('environments').select('allowed_origins').where('id', '=', env.id).executeTakeFirstOrThrow()).allowed_origins;

function preflight(env: TestEnv, origin: string, path = '/_svc/auth/sign-in', method = 'POST', headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'OPTIONS', url: path,
    headers: { host: env.frontendHost, origin, 'access-control-request-method': method, ...headers },
  });
}

/**
 * A refused preflight grants nothing: its Access-Control-Allow-Origin, when it has one, is a sentence for the
 * browser console (src/platform/http/cors.ts), never the origin nor '*', and no other allow header is sent.
 */
function expectRefusedPreflight(res: LightMyRequestResponse, origin: string) {
  expect(res.statusCode).toBe(403);
  expect(res.json().properties.code).toBe('origin_not_allowed');
  expect(res.headers['access-control-allow-origin']).not.toBe(origin);
  expect(res.headers['access-control-allow-origin']).not.toBe('*');
  expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  expect(res.headers['access-control-allow-methods']).toBeUndefined();
  expect(res.headers['access-control-allow-headers']).toBeUndefined();
}

function expectNoCors(res: LightMyRequestResponse) {
  expect(res.headers['access-control-allow-origin']).toBeUndefined();
  expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  expect(res.headers['access-control-allow-methods']).toBeUndefined();
}

describe('PUT and GET /api/server/v1/allowed-origins', () => {
  it('starts with an empty list', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).get('/allowed-origins');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ origins: [] });
  });

  it('replaces the whole list on every PUT and GET returns the current list', async () => {
    const env = await t.given.environment();
    const first = await t.server(env).put('/allowed-origins', { origins: [APP, 'https://admin.example.com'] });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ origins: [APP, 'https://admin.example.com'] });

    const second = await t.server(env).put('/allowed-origins', { origins: ['https://other.example.com'] });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual({ origins: ['https://other.example.com'] });
    expect((await t.server(env).get('/allowed-origins')).json()).toEqual({ origins: ['https://other.example.com'] });
    expect(await storedOrigins(env)).toEqual(['https://other.example.com']);
  });

  it('clears the list with an empty array', async () => {
    const env = await withOrigins([APP]);
    const res = await t.server(env).put('/allowed-origins', { origins: [] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ origins: [] });
    expect(await storedOrigins(env)).toEqual([]);
  });

  it('normalises host case, scheme case and default ports, and keeps the first of each duplicate in order', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).put('/allowed-origins', {
      origins: ['https://App.Example.com:443', 'http://localhost:3000', 'HTTPS://app.example.com', 'http://LOCALHOST:80', 'http://localhost', 'https://app.example.com'],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ origins: [APP, 'http://localhost:3000', 'http://localhost'] });
    expect(await storedOrigins(env)).toEqual([APP, 'http://localhost:3000', 'http://localhost']);
  });

  it('accepts origins with non-http schemes used by native and extension apps', async () => {
    const env = await t.given.environment();
    const origins = ['capacitor://localhost', 'chrome-extension://abcdefghijklmnop', 'tauri://localhost', 'ionic://localhost'];
    const res = await t.server(env).put('/allowed-origins', { origins });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ origins });
    expect(await storedOrigins(env)).toEqual(origins);
  });

  it.each([
    ['a path', 'https://a.com/x'],
    ['a trailing slash', 'https://a.com/'],
    ['a wildcard', 'https://*.a.com'],
    ['a query', 'https://a.com?x=1'],
    ['a fragment', 'https://a.com#x'],
    ['credentials', 'https://u@a.com'],
    ['free text', 'not a url'],
    ['javascript:', 'javascript:alert(1)'],
    ['javascript: written as an authority', 'javascript://a.com'],
    ['the opaque origin "null"', 'null'],
    ['a host without a scheme', 'app.example.com'],
  ])('refuses an entry with %s with 400 naming the entry, and keeps the stored list', async (_what, bad) => {
    const env = await withOrigins([APP]);
    const res = await t.server(env).put('/allowed-origins', { origins: ['https://ok.example.com', bad] });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body = res.json();
    expect(body.properties.code).toBe('invalid_request');
    expect(body.properties.errors).toEqual([{ path: '/body/origins/1', message: `"${bad}" is not a full origin` }]);
    expect(await storedOrigins(env)).toEqual([APP]);
  });

  it('names every bad entry at once', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).put('/allowed-origins', { origins: ['https://a.com/x', APP, 'https://*.a.com'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().properties.errors.map((e: { path: string }) => e.path)).toEqual(['/body/origins/0', '/body/origins/2']);
    expect(await storedOrigins(env)).toEqual([]);
  });

  it('refuses a body that is not {origins: string[]} with 400 invalid_request', async () => {
    const env = await t.given.environment();
    for (const body of [{}, { origins: null }, { origins: { 0: APP } }, { origins: [''] }, { origins: [APP], extra: true }]) {
      const res = await t.server(env).put('/allowed-origins', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().properties.code).toBe('invalid_request');
      expect(res.json().properties.errors.length).toBeGreaterThan(0);
    }
    expect(await storedOrigins(env)).toEqual([]);
  });

  it('refuses more than 100 origins', async () => {
    const env = await t.given.environment();
    const origins = Array.from({ length: 101 }, (_, i) => `https://app${i}.example.com`);
    const res = await t.server(env).put('/allowed-origins', { origins });
    expect(res.statusCode).toBe(400);
    expect(res.json().properties.errors).toEqual([{ path: '/body/origins', message: expect.any(String) }]);
    expect(await storedOrigins(env)).toEqual([]);
    expect((await t.server(env).put('/allowed-origins', { origins: origins.slice(0, 100) })).statusCode).toBe(200);
  });

  it("keeps each environment's list to itself", async () => {
    const mine = await withOrigins([APP]);
    const theirs = await withOrigins(['https://theirs.example.com']);
    expect((await t.server(mine).get('/allowed-origins')).json()).toEqual({ origins: [APP] });
    expect((await t.server(theirs).get('/allowed-origins')).json()).toEqual({ origins: ['https://theirs.example.com'] });
    await t.server(mine).put('/allowed-origins', { origins: [] });
    expect(await storedOrigins(theirs)).toEqual(['https://theirs.example.com']);
  });

  it('answers 401 unauthenticated without a valid secret key and changes nothing', async () => {
    const env = await withOrigins([APP]);
    const none = await t.app.inject({ method: 'PUT', url: '/api/server/v1/allowed-origins', payload: { origins: [] } });
    const wrong = await t.server(env, 'sk_not-a-real-key').put('/allowed-origins', { origins: [] });
    for (const res of [none, wrong]) {
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.json().properties.code).toBe('unauthenticated');
    }
    expect(await storedOrigins(env)).toEqual([APP]);
  });
});

describe('CORS on the client plane', () => {
  it('answers a request from an allowed origin with that origin and credentials allowed', async () => {
    const env = await withOrigins([APP]);
    const res = await t.client(env, { origin: APP }).post('/auth/sign-up', { email: 'cors@example.com', password: 'a long enough password 1' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(String(res.headers.vary)).toMatch(/\bOrigin\b/);
  });

  it('adds the CORS headers to error responses too, so the page can read the problem', async () => {
    const env = await withOrigins([APP]);
    const res = await t.client(env, { origin: APP }).get('/me');
    expect(res.statusCode).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
  });

  it('matches the normalised origin a browser sends against an entry stored in another spelling', async () => {
    const env = await withOrigins(['https://App.Example.com:443']);
    const res = await t.client(env, { origin: APP }).get('/me');
    expect(res.headers['access-control-allow-origin']).toBe(APP);
  });

  it('allows a non-http origin such as capacitor://localhost', async () => {
    const env = await withOrigins(['capacitor://localhost']);
    const res = await t.client(env, { origin: 'capacitor://localhost' }).get('/me');
    expect(res.headers['access-control-allow-origin']).toBe('capacitor://localhost');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
  });

  it('gives a foreign origin no CORS headers', async () => {
    const env = await withOrigins([APP]);
    const res = await t.client(env, { origin: 'https://evil.example.com' }).get('/me');
    expect(res.statusCode).toBe(401);
    expectNoCors(res);
  });

  it('refuses a state change from a foreign origin with 403 forbidden and no CORS headers, creating nothing', async () => {
    const env = await withOrigins([APP]);
    const res = await t.client(env, { origin: 'https://evil.example.com' }).post('/auth/sign-up', { email: 'evil@example.com', password: 'a long enough password 1' });
    expect(res.statusCode).toBe(403);
    expect(res.json().properties.code).toBe('forbidden');
    expectNoCors(res);
    const users = await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).execute();
    expect(users).toEqual([]);
  });

  it('does not treat an origin that merely starts with an allowed one as allowed', async () => {
    const env = await withOrigins([APP]);
    for (const origin of ['https://app.example.com.evil.com', 'http://app.example.com', 'https://app.example.com:8443']) {
      expectNoCors(await t.client(env, { origin }).get('/me'));
    }
  });

  it("does not honour another environment's allowed origins", async () => {
    await withOrigins([APP]);
    const other = await t.given.environment();
    expectNoCors(await t.client(other, { origin: APP }).get('/me'));
    expectRefusedPreflight(await preflight(other, APP), APP);
  });

  it('answers a preflight from an allowed origin with 204 and the allow headers', async () => {
    const env = await withOrigins([APP]);
    const res = await preflight(env, APP, '/_svc/auth/sign-in', 'POST', { 'access-control-request-headers': 'content-type' });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(String(res.headers['access-control-allow-methods']).split(/,\s*/)).toEqual(expect.arrayContaining(['GET', 'POST', 'PATCH', 'DELETE']));
    expect(res.headers['access-control-allow-headers']).toBe('content-type');
    expect(res.headers['access-control-max-age']).toBe('600');
  });

  it('answers a preflight for a signed-in route without needing a session', async () => {
    const env = await withOrigins([APP]);
    const res = await preflight(env, APP, '/_svc/me', 'PATCH', { 'access-control-request-headers': 'authorization, content-type' });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-allow-headers']).toBe('authorization, content-type');
  });

  it('refuses a preflight from a foreign origin with 403 origin_not_allowed naming the origin and both ways to allow it', async () => {
    const env = await withOrigins([APP]);
    const evil = 'https://evil.example.com';
    const res = await preflight(env, evil, '/_svc/auth/sign-in', 'POST', { 'access-control-request-headers': 'content-type' });
    const body = expectProblem(res, 403, 'origin_not_allowed');
    expect(body.detail).toBe(`The origin ${evil} is not an allowed origin of this environment (${env.id}), so browsers refuse its pages' calls. `
      + `Allow it with PUT /api/server/v1/allowed-origins (the Server API) or npx gatehouse allowed-origins add ${env.id} ${evil}.`);
    expect(body.properties.origin).toBe(evil);
    expect(res.headers.vary).toMatch(/Origin/);
    expectRefusedPreflight(res, evil);
  });

  it('puts the refusal where the browser console shows it: the Access-Control-Allow-Origin value, a sentence that matches no origin', async () => {
    const env = await withOrigins([APP]);
    const res = await preflight(env, 'http://localhost:5173');
    expect(res.headers['access-control-allow-origin']).toBe(`origin_not_allowed: Gatehouse does not allow http://localhost:5173 for environment ${env.id}; `
      + `allow it with PUT /api/server/v1/allowed-origins (the Server API) or npx gatehouse allowed-origins add ${env.id} http://localhost:5173`);
  });

  it('logs a refused preflight at warn with the environment id and the origin', async () => {
    const env = await withOrigins([APP]);
    const res = await preflight(env, 'https://logged.example.com', '/_svc/me', 'PATCH');
    const reqId = String(res.json().instance).replace('urn:uuid:', '');
    const lines = logLines.map((line) => JSON.parse(line)).filter((line) => line.reqId === reqId && line.level === 40);
    expect(lines).toEqual([expect.objectContaining({ code: 'origin_not_allowed', environmentId: env.id, origin: 'https://logged.example.com' })]);
  });

  it('does not echo an origin that is not printable ASCII in the refusal', async () => {
    const env = await withOrigins([APP]);
    const res = await preflight(env, 'https://caf\u00e9.example.com');
    expect(res.statusCode).toBe(403);
    expect(res.json().properties.origin).toBe('this origin');
  });

  it('still answers an OPTIONS request that is not a preflight (no Access-Control-Request-Method) with 404', async () => {
    const env = await withOrigins([APP]);
    const res = await t.app.inject({ method: 'OPTIONS', url: '/_svc/auth/sign-in', headers: { host: env.frontendHost, origin: 'https://evil.example.com' } });
    expect(res.statusCode).toBe(404);
  });

  it('stops allowing an origin on the very next request once it is removed from the list', async () => {
    const env = await withOrigins([APP]);
    expect((await preflight(env, APP)).headers['access-control-allow-origin']).toBe(APP);
    await t.server(env).put('/allowed-origins', { origins: [] });
    expectRefusedPreflight(await preflight(env, APP), APP);
    expectNoCors(await t.client(env, { origin: APP }).get('/me'));
  });

  it('never sends CORS headers on the Server API, even for an allowed origin', async () => {
    const env = await withOrigins([APP]);
    const res = await t.server(env).get('/allowed-origins', { headers: { origin: APP } });
    expect(res.statusCode).toBe(200);
    expectNoCors(res);
  });
});

import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PACKAGE_VERSION } from '../../src/platform/version.js';
import { expectProblem, servedRoutes, throwawayApp, throwawayPglite, unreachablePostgres } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

const get = (url: string) => t.app.inject({ method: 'GET', url });

describe('GET /', () => {
  it('sends a browser to the API reference', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/docs');
  });

  it('answers anything else with a map of the service and its version', async () => {
    const res = await get('/');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Gatehouse', version: PACKAGE_VERSION, reference: '/docs', openapi: '/openapi.json', serverApi: '/api/server/v1' });
  });
});

describe('health', () => {
  it('answers /healthz with 200 while the process is up', async () => {
    const res = await get('/healthz');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 200 while the database answers', async () => {
    const res = await get('/readyz');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready' });
  });

  it('answers /readyz with 503 problem+json once the embedded database is gone, while /healthz stays 200', async () => {
    const broken = await throwawayApp(await throwawayPglite());
    try {
      expect((await broken.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      await broken.database.close();
      const res = await broken.app.inject({ method: 'GET', url: '/readyz' });
      expectProblem(res, 503, 'unavailable');
      expect(res.headers['retry-after']).toBe('1');
      expect((await broken.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await broken.close();
    }
  });

  it('answers /readyz with 503 problem+json when PostgreSQL refuses connections', async () => {
    const broken = await throwawayApp(await unreachablePostgres(), { migrate: false });
    try {
      const res = await broken.app.inject({ method: 'GET', url: '/readyz' });
      expectProblem(res, 503, 'unavailable');
      expect(res.body).not.toContain('ECONNREFUSED');
      const warned = broken.logLines().filter((line) => line.msg === 'readiness check failed');
      expect(warned).toHaveLength(1);
    } finally {
      await broken.close();
    }
  });
});

interface Sample { name: string; labels: Record<string, string>; value: number }

function parseMetrics(text: string): Sample[] {
  return text.split('\n').filter((line) => line && !line.startsWith('#')).map((line) => {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample: ${line}`);
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    return { name: match[1], labels, value: Number(match[3]) };
  });
}

async function scrape() {
  const res = await get('/metrics');
  expect(res.statusCode).toBe(200);
  return { res, samples: parseMetrics(res.body) };
}

const valueOf = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? 0;

describe('GET /metrics', () => {
  it('serves Prometheus text with the request counter, the latency histogram and process metrics', async () => {
    const { res, samples } = await scrape();
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toContain('# TYPE http_requests_total counter');
    expect(res.body).toContain('# TYPE http_request_duration_seconds histogram');
    expect(samples.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
  });

  it('labels requests by route pattern and status code, never by the raw id', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const labels = { method: 'GET', route: '/api/server/v1/users/:userId', status_code: '200' };
    const before = valueOf((await scrape()).samples, 'http_requests_total', labels);

    expect((await t.server(env).get(`/users/${user.id}`)).statusCode).toBe(200);
    expect((await t.server(env).get(`/users/${user.id}`)).statusCode).toBe(200);
    expect((await t.server(env).get(`/users/${randomUUID()}`)).statusCode).toBe(404);

    const { res, samples } = await scrape();
    expect(valueOf(samples, 'http_requests_total', labels) - before).toBe(2);
    expect(valueOf(samples, 'http_requests_total', { ...labels, status_code: '404' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, 'http_request_duration_seconds_count', labels)).toBeGreaterThanOrEqual(2);
    expect(valueOf(samples, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(valueOf(samples, 'http_request_duration_seconds_count', labels));
    expect(valueOf(samples, 'http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
    expect(res.body).not.toContain(user.id);
    expect(res.body).not.toContain(env.id);
  });

  it('labels the client plane by route pattern too', async () => {
    const env = await t.given.environment();
    const labels = { method: 'GET', route: '/_svc/me', status_code: '401' };
    const before = valueOf((await scrape()).samples, 'http_requests_total', labels);
    await t.client(env).get('/me');
    expect(valueOf((await scrape()).samples, 'http_requests_total', labels) - before).toBe(1);
  });

  it('counts unknown routes under one label instead of their paths', async () => {
    const path = `/no-such-route-${randomUUID()}`;
    const labels = { method: 'GET', route: 'unmatched', status_code: '404' };
    const before = valueOf((await scrape()).samples, 'http_requests_total', labels);
    await get(path);
    const { res, samples } = await scrape();
    expect(valueOf(samples, 'http_requests_total', labels) - before).toBe(1);
    expect(res.body).not.toContain(path);
  });

  it('never exposes secrets, tokens or query strings', async () => {
    const env = await t.given.environment();
    await t.server(env).get('/users?limit=5&emailSearch=secret-search-term');
    await t.client(env).post('/auth/sign-in?_is_native=true', { email: 'nobody@example.com', password: 'a wrong password' });
    const { res } = await scrape();
    for (const secret of [env.secretKey, 'secret-search-term', 'nobody@example.com', env.frontendHost, '?']) {
      expect(res.body).not.toContain(secret);
    }
  });
});

describe('GET /openapi.json', () => {
  let doc: { openapi: string; info: { title: string; version: string }; servers: unknown; tags: { name: string }[]; paths: Record<string, Record<string, any>>; components: any };
  /** A schema with a component reference resolved (named schemas live under components.schemas). */
  const deref = (schema: { $ref?: string } | undefined) =>
    (schema?.$ref ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema);
  beforeAll(async () => {
    const res = await get('/openapi.json');
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });

  const PLANES = /^\/(api\/server\/v1|_svc|api\/admin\/v1)\//;
  const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  const served = () => servedRoutes(t.app).filter(([, path]) => PLANES.test(path)).map(([method, path]) => [method, toOpenApiPath(path)] as const);
  const documented = () => Object.entries(doc.paths).filter(([path]) => PLANES.test(path))
    .flatMap(([path, ops]) => Object.keys(ops).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).map((m) => [m.toUpperCase(), path] as const));

  /** Actions that take no body at all; every other POST, PUT and PATCH must document one. */
  const BODYLESS = new Set([
    'POST /api/server/v1/users/{userId}/ban',
    'POST /api/server/v1/webhook-endpoints/{endpointId}/rotate-secret',
    'POST /api/server/v1/organizations/{organizationId}/directories/{directoryId}/token',
    'POST /api/server/v1/webhook-deliveries/{deliveryId}/retry',
    'POST /api/server/v1/users/{userId}/unban',
    'POST /api/admin/v1/environments/{id}/secret-keys',
    'POST /api/server/v1/invitations/{invitationId}/revoke',
    'POST /api/server/v1/invitations/{invitationId}/resend',
    'POST /_svc/auth/sign-out',
    'POST /_svc/organizations/{organizationId}/leave',
    'POST /_svc/organizations/{organizationId}/invitations/{invitationId}/revoke',
    'POST /api/server/v1/organizations/{organizationId}/invitations/{invitationId}/revoke',
    'POST /api/server/v1/organizations/{organizationId}/domains/{domainId}/verify',
    'POST /_svc/me/organization-suggestions/{organizationId}/accept',
    'POST /api/server/v1/impersonations/{impersonationId}/revoke',
    'POST /api/admin/v1/environments/{id}/signing-keys/rotate',
    'POST /_svc/sessions/current/token',
    'POST /_svc/me/data-requests/{requestId}/cancel',
    'POST /api/server/v1/data-requests/{requestId}/cancel',
    'POST /_svc/me/email-addresses/{id}/make-primary',
    'POST /_svc/me/mfa/totp',
    'POST /_svc/me/mfa/backup-codes',
    'POST /_svc/me/passkeys/options',
    'POST /api/admin/v1/operators/me/mfa/totp',
  ]);
  /** Browser navigations: each answers a redirect (these statuses), never a JSON body. */
  const REDIRECTS = new Map([
    ['GET /_svc/auth/session/impersonate', ['303']],
    ['GET /_svc/auth/oauth2/{provider}/authorize', ['302', '303']],
    ['GET /_svc/auth/oauth2/{provider}/callback', ['303']],
    ['GET /_svc/auth/sso/authorize', ['302', '303']],
    ['POST /_svc/auth/sso/{connectionId}/acs', ['303']],
    ['GET /_svc/auth/sso/{connectionId}/callback', ['303']],
  ]);
  // Posted by another site's page as a form (a SAML IdP's HTTP-POST binding), not by a JSON client.
  const FORM_BODIES = new Set(['POST /_svc/auth/sso/{connectionId}/acs']);

  it('is OpenAPI 3.1', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBe('Gatehouse');
  });

  it('parses the served routes (guards the route listing this suite relies on)', () => {
    const routes = served().map(([m, p]) => `${m} ${p}`);
    expect(routes).toEqual(expect.arrayContaining([
      'POST /api/server/v1/users', 'GET /api/server/v1/users/{userId}', 'DELETE /api/server/v1/users/{userId}/sessions/{sessionId}',
      'PUT /api/server/v1/allowed-origins', 'POST /_svc/auth/sign-in', 'PATCH /_svc/me', 'DELETE /api/admin/v1/secret-keys/{keyId}',
      'GET /api/admin/v1/environments/{id}/outbox',
    ]));
    expect(routes.length).toBeGreaterThanOrEqual(38);
  });

  it('documents every route the app serves on the three planes, and nothing else', () => {
    const key = ([m, p]: readonly [string, string]) => `${m} ${p}`;
    expect(documented().map(key).sort()).toEqual(served().map(key).sort());
  });

  it('gives every operation a success response with a schema, or 204, or a 303 for a browser link', () => {
    for (const [method, path] of served()) {
      const op = doc.paths[path][method.toLowerCase()];
      if (REDIRECTS.has(`${method} ${path}`)) {
        expect(Object.keys(op.responses).filter((status) => /^[23]\d\d$/.test(status)), `${method} ${path}`).toEqual(REDIRECTS.get(`${method} ${path}`));
        continue;
      }
      const successes = Object.keys(op.responses ?? {}).filter((status) => /^2\d\d$/.test(status));
      expect(successes, `${method} ${path}`).not.toEqual([]);
      for (const status of successes) {
        if (status === '204') continue;
        expect(op.responses[status].content?.['application/json']?.schema, `${method} ${path} ${status}`).toBeDefined();
      }
    }
  });

  it('gives every operation a summary and a tag, so the reference page reads as a table of contents', () => {
    for (const [method, path] of served()) {
      const op = doc.paths[path][method.toLowerCase()];
      expect(op.summary, `${method} ${path}`).toMatch(/^[A-Z].{5,}/);
      expect(op.tags?.length, `${method} ${path}`).toBeGreaterThan(0);
    }
  });

  it('documents the problem+json error shape for 4XX and 5XX on every operation', () => {
    for (const [method, path] of served()) {
      const responses = doc.paths[path][method.toLowerCase()].responses;
      for (const range of ['4XX', '5XX']) {
        const schema = deref(responses[range]?.content?.['application/problem+json']?.schema);
        expect(schema?.required, `${method} ${path} ${range}`).toEqual(['type', 'title', 'status', 'detail', 'instance', 'properties']);
      }
    }
  });

  it('documents a JSON request body for every POST, PUT and PATCH that takes one', () => {
    for (const [method, path] of served().filter(([m]) => m !== 'GET' && m !== 'DELETE')) {
      const op = doc.paths[path][method.toLowerCase()];
      if (BODYLESS.has(`${method} ${path}`)) {
        expect(op.requestBody, `${method} ${path}`).toBeUndefined();
        continue;
      }
      const mediaType = FORM_BODIES.has(`${method} ${path}`) ? 'application/x-www-form-urlencoded' : 'application/json';
      const schema = deref(op.requestBody?.content?.[mediaType]?.schema);
      expect(schema, `${method} ${path} has no request body schema`).toBeDefined();
      expect(schema.type).toBe('object');
      expect(Object.keys(schema.properties ?? {}).length, `${method} ${path}`).toBeGreaterThan(0);
    }
  });

  it('documents every path parameter as a required parameter', () => {
    for (const [method, path] of served()) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const params = (doc.paths[path][method.toLowerCase()].parameters ?? []).filter((p: { in: string }) => p.in === 'path');
      expect(params.map((p: { name: string }) => p.name).sort(), `${method} ${path}`).toEqual([...names].sort());
      for (const param of params) expect(param.required).toBe(true);
    }
  });

  it('states each plane\'s credentials: secret key, admin token, operator or client session, or none on the public routes', () => {
    expect(Object.keys(doc.components.securitySchemes).sort())
      .toEqual(['adminToken', 'operatorEnvironment', 'operatorSession', 'secretKey', 'sessionCookie', 'sessionToken']);
    const security = (method: string, path: string) => doc.paths[path][method.toLowerCase()].security;
    const OPERATOR_PUBLIC = ['POST /api/admin/v1/operator-sessions', 'POST /api/admin/v1/operator-sessions/mfa', 'POST /api/admin/v1/operators/set-password'];
    for (const [method, path] of served()) {
      if (path.startsWith('/api/server/v1/')) expect(security(method, path), `${method} ${path}`).toEqual([{ secretKey: [] }, { operatorSession: [], operatorEnvironment: [] }]);
      if (path.startsWith('/api/admin/v1/')) {
        expect(security(method, path), `${method} ${path}`).toEqual(OPERATOR_PUBLIC.includes(`${method} ${path}`) ? [] : [{ adminToken: [] }, { operatorSession: [] }]);
      }
    }
    expect(security('GET', '/_svc/me')).toEqual([{ sessionCookie: [] }, { sessionToken: [] }]);
    expect(security('POST', '/_svc/auth/sign-out')).toEqual([{ sessionCookie: [] }, { sessionToken: [] }]);
    expect(security('POST', '/_svc/auth/sign-in')).toEqual([]);
    expect(security('GET', '/_svc/.well-known/jwks.json')).toEqual([]);
  });

  it('names every operation with a unique camelCase operationId', () => {
    const ids = served().map(([method, path]) => doc.paths[path][method.toLowerCase()].operationId);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z]+$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths['/api/server/v1/users/{userId}'].get.operationId).toBe('getUser');
    expect(doc.paths['/_svc/auth/sign-in'].post.operationId).toBe('signIn');
  });

  it('names the shapes clients work with as component schemas, referenced where they are used', () => {
    for (const name of ['User', 'ClientUser', 'Problem', 'Invitation', 'Organization', 'AuditEvent', 'Identity', 'OAuthProvider']) {
      expect(doc.components.schemas[name], name).toMatchObject({ title: name });
    }
    expect(doc.paths['/api/server/v1/users/{userId}'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/User' });
  });

  it('describes what the main operations answer, with examples of a user and of a problem', () => {
    for (const [path, method, status] of [['/api/server/v1/users', 'post', '201'], ['/api/server/v1/users/{userId}', 'get', '200'], ['/api/server/v1/users', 'get', '200'],
      ['/api/server/v1/invitations', 'post', '201'], ['/api/server/v1/organizations', 'post', '201'], ['/api/server/v1/audit-events', 'post', '201'], ['/_svc/auth/sign-in', 'post', '200']]) {
      expect(doc.paths[path][method].responses[status].description, `${method} ${path}`).not.toBe('Default Response');
    }
    expect(doc.components.schemas.User.examples[0]).toMatchObject({ email: 'ada@example.com' });
    expect(doc.components.schemas.Problem.examples[0].properties.code).toBe('user_not_found');
  });

  it('says which server, which version and which tags', () => {
    expect(doc.servers).toEqual([{ url: 'http://localhost:3000', description: expect.any(String) }]);
    expect(doc.info.version).toBe(PACKAGE_VERSION);
    const declared = new Set(doc.tags.map((tag: { name: string }) => tag.name));
    for (const [method, path] of served()) for (const tag of doc.paths[path][method.toLowerCase()].tags) expect(declared, tag).toContain(tag);
  });
});

describe('GET /docs', () => {
  async function follow(url: string): Promise<LightMyRequestResponse> {
    let res = await get(url);
    for (let hops = 0; hops < 3 && res.statusCode >= 300 && res.statusCode < 400; hops++) {
      res = await get(new URL(String(res.headers.location), `http://localhost${url}`).pathname);
    }
    return res;
  }

  it('serves an HTML reference page', async () => {
    const res = await follow('/docs');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<!DOCTYPE html>/i);
    expect(res.body).toContain('swagger-ui');
  });

  it('points the page at the same document as /openapi.json', async () => {
    const spec = await get('/docs/json');
    expect(spec.statusCode).toBe(200);
    expect(spec.json()).toEqual((await get('/openapi.json')).json());
  });
});

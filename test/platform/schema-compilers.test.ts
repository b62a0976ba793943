import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerProblemHandlers } from '../../src/platform/http/problem.js';
import { registerSchemaCompilers } from '../../src/platform/http/validation.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

describe('route schemas compiled on first use', () => {
  it('a route with a schema Ajv cannot compile still starts, fails at its first request, and compileSchemas() reports it', async () => {
    const app = Fastify({ logger: false });
    registerSchemaCompilers(app);
    registerProblemHandlers(app);
    app.post('/broken', { schema: { body: { type: 'object', properties: { n: { type: 'number', minimum: 'one' } } } } }, () => ({}));
    await app.ready();
    expect((await app.inject({ method: 'POST', url: '/broken', payload: { n: 1 } })).statusCode).toBe(500);
    await expect(app.compileSchemas()).rejects.toThrow(/minimum/);
    await app.close();
  });

  it('validates and serializes exactly as an eagerly compiled schema does', async () => {
    const app = Fastify({ logger: false });
    registerSchemaCompilers(app);
    registerProblemHandlers(app);
    app.post('/echo', {
      schema: {
        body: { type: 'object', required: ['n'], properties: { n: { type: 'number' } }, additionalProperties: false },
        response: { 200: { type: 'object', properties: { n: { type: 'number' } } } },
      },
    }, (req) => ({ ...(req.body as object), secret: 'dropped by the response schema' }));
    await app.ready();
    const bad = await app.inject({ method: 'POST', url: '/echo', payload: { n: 'x' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().properties.errors).toEqual([expect.objectContaining({ path: '/body/n' })]);
    const good = await app.inject({ method: 'POST', url: '/echo', payload: { n: 2 } });
    expect(good.body).toBe('{"n":2}');
    await app.close();
  });
});

describe('every route of the service', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('has request and response schemas that compile (they otherwise compile at the first request)', async () => {
    await expect(t.app.compileSchemas()).resolves.toBeUndefined();
  });
});

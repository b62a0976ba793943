import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageQuery } from '../../src/platform/http/common-schemas.js';
import { registerProblemHandlers } from '../../src/platform/http/problem.js';
import { registerSchemaCompilers } from '../../src/platform/http/validation.js';

describe('the page query schema', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = Fastify();
    registerSchemaCompilers(app);
    registerProblemHandlers(app);
    app.get('/rejecting', { schema: { querystring: pageQuery() } }, (req) => req.query);
    app.get('/clamping', { schema: { querystring: pageQuery({ outOfRange: 'clamp' }) } }, (req) => req.query);
    await app.ready();
  });
  afterAll(() => app.close());
  const get = (url: string) => app.inject({ method: 'GET', url });

  it('refuses a limit outside 1 to 100 with 400 invalid_request by default', async () => {
    for (const limit of ['0', '101', '-5']) {
      const res = await get(`/rejecting?limit=${limit}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().properties).toMatchObject({ code: 'invalid_request', errors: [{ path: '/querystring/limit' }] });
    }
  });

  it('takes an out-of-range limit as the nearest bound when the list clamps', async () => {
    expect((await get('/clamping?limit=0')).json()).toEqual({ limit: 1 });
    expect((await get('/clamping?limit=-7')).json()).toEqual({ limit: 1 });
    expect((await get('/clamping?limit=1000')).json()).toEqual({ limit: 100 });
    expect((await get('/clamping?limit=99999999999999999999')).json()).toEqual({ limit: 100 });
    expect((await get('/clamping?limit=42')).json()).toEqual({ limit: 42 });
  });

  it('defaults the limit to 20 and still refuses a limit that is not an integer, either way', async () => {
    expect((await get('/clamping')).json()).toEqual({ limit: 20 });
    expect((await get('/rejecting')).json()).toEqual({ limit: 20 });
    expect((await get('/clamping?limit=ten')).statusCode).toBe(400);
    expect((await get('/clamping?limit=2.5')).statusCode).toBe(400);
  });
});

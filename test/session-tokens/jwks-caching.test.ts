import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_JWKS_CACHE_SECONDS } from '../../packages/sdk/src/verify.js';
import { JWKS_MAX_AGE_SECONDS } from '../../src/session-tokens/service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

describe('how long the JWKS may be cached', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('is the window the SDK trusts a fetched key set, so a cache in front does not stretch a revoked key past it', async () => {
    const env = await t.given.environment();
    for (const url of ['/_svc/.well-known/jwks.json', '/.well-known/jwks.json']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { host: env.frontendHost } });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('public, max-age=60');
    }
    expect(JWKS_MAX_AGE_SECONDS).toBe(DEFAULT_JWKS_CACHE_SECONDS);
  });

  it('leaves the discovery document, which names no key, cacheable for 5 minutes', async () => {
    const env = await t.given.environment();
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration', headers: { host: env.frontendHost } });
    expect(res.headers['cache-control']).toBe('public, max-age=300');
  });
});

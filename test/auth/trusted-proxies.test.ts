import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';

/** Per-IP sign-in throttling must key on the real client address, and only trust X-Forwarded-For from configured proxies. */
describe('client IP for sign-in throttling', () => {
  const throttled = { lockout: { ipMaxFailures: 2, ipWindowSeconds: 600 } };
  const wrongSignIn = (t: TestApp, env: TestEnv, remoteAddress: string, forwardedFor?: string) =>
    t.client(env).post('/auth/sign-in', { email: 'nobody@example.com', password: 'wrong password here' }, {
      remoteAddress, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
    });

  describe('without trusted proxies', () => {
    let t: TestApp;
    beforeAll(async () => { t = await startTestApp(); });
    afterAll(() => t.close());

    it('ignores X-Forwarded-For, so a client cannot dodge the throttle by inventing addresses', async () => {
      const env = await t.given.environment(throttled);
      expect((await wrongSignIn(t, env, '203.0.113.7', '198.51.100.1')).statusCode).toBe(401);
      expect((await wrongSignIn(t, env, '203.0.113.7', '198.51.100.2')).statusCode).toBe(401);
      const third = await wrongSignIn(t, env, '203.0.113.7', '198.51.100.3');
      expect(third.statusCode).toBe(429);
      expect(third.json().properties.code).toBe('rate_limited');
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
    });
  });

  describe('behind a trusted proxy', () => {
    let t: TestApp;
    beforeAll(async () => { t = await startTestApp({ trustedProxies: ['10.0.0.1'] }); });
    afterAll(() => t.close());

    it('throttles each forwarded client address separately', async () => {
      const env = await t.given.environment(throttled);
      await wrongSignIn(t, env, '10.0.0.1', '198.51.100.1');
      await wrongSignIn(t, env, '10.0.0.1', '198.51.100.1');
      expect((await wrongSignIn(t, env, '10.0.0.1', '198.51.100.1')).statusCode).toBe(429);
      expect((await wrongSignIn(t, env, '10.0.0.1', '198.51.100.2')).statusCode).toBe(401);
    });

    it('still ignores X-Forwarded-For from an address that is not a trusted proxy', async () => {
      const env = await t.given.environment(throttled);
      await wrongSignIn(t, env, '203.0.113.9', '198.51.100.1');
      await wrongSignIn(t, env, '203.0.113.9', '198.51.100.2');
      expect((await wrongSignIn(t, env, '203.0.113.9', '198.51.100.3')).statusCode).toBe(429);
    });
  });
});

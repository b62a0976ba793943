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

  describe('IPv6 clients', () => {
    let t: TestApp;
    beforeAll(async () => { t = await startTestApp(); });
    afterAll(() => t.close());

    it('share one budget per /64: 30 addresses of one /64 get 20 answers of 401, then 429, while another /64 keeps its own', async () => {
      const env = await t.given.environment({ lockout: { ipMaxFailures: 20, ipWindowSeconds: 600 } });
      const statuses = [];
      for (let i = 1; i <= 30; i++) statuses.push((await wrongSignIn(t, env, `2001:db8:1:2:${i.toString(16)}::${i}`)).statusCode);
      expect(statuses).toEqual([...Array(20).fill(401), ...Array(10).fill(429)]);
      expect((await wrongSignIn(t, env, '2001:db8:1:3::1')).statusCode).toBe(401);
    });

    it('count an IPv4 address mapped into IPv6 as that IPv4 address', async () => {
      const env = await t.given.environment(throttled);
      await wrongSignIn(t, env, '198.51.100.20');
      await wrongSignIn(t, env, '::ffff:198.51.100.20');
      expect((await wrongSignIn(t, env, '198.51.100.20')).statusCode).toBe(429);
    });
  });

  describe('the warning about X-Forwarded-For from a peer that is not trusted', () => {
    it('is logged once (not per request) when it arrives untrusted, naming the peer and the variable to set; never for a trusted proxy', async () => {
      const lines: Record<string, unknown>[] = [];
      const t = await startTestApp({ trustedProxies: ['10.0.0.1'], logLevel: 'warn', logStream: { write: (line: string) => { lines.push(JSON.parse(line)); } } });
      try {
        const env = await t.given.environment();
        await wrongSignIn(t, env, '10.0.0.1', '198.51.100.1');
        expect(lines.filter((l) => String(l.msg).includes('X-Forwarded-For'))).toEqual([]);
        await wrongSignIn(t, env, '203.0.113.50', '198.51.100.1');
        await wrongSignIn(t, env, '203.0.113.50', '198.51.100.2');
        const warnings = lines.filter((l) => String(l.msg).includes('X-Forwarded-For'));
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatchObject({ level: 40, peer: '203.0.113.50' });
        expect(warnings[0]!.msg).toContain('GATEHOUSE_TRUSTED_PROXIES');
      } finally {
        await t.close();
      }
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

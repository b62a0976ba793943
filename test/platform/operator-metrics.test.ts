import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveMetrics } from '../../src/platform/http/metrics-server.js';
import { createMetrics } from '../../src/platform/metrics.js';
import { append, eventBody } from '../audit/support.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signIn } from '../helpers/flows.js';
import { PASSWORD } from '../helpers/given.js';

/** One sample of the Prometheus text, 0 when the series has no sample yet. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('metrics an operator alerts on', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const scrape = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    return res.body;
  };
  /** The change of each series across `act`. */
  async function deltas(series: string[], act: () => Promise<unknown>) {
    const before = await scrape();
    await act();
    const after = await scrape();
    return Object.fromEntries(series.map((s) => [s, sample(after, s) - sample(before, s)]));
  }

  it('counts password sign-ins by result and the failure that locks an account', async () => {
    const env = await t.given.environment({ lockout: { maxFailedAttempts: 2 } });
    const user = await t.given.user(env);
    const counted = await deltas(
      ['gatehouse_sign_ins_total{result="success"}', 'gatehouse_sign_ins_total{result="failure"}', 'gatehouse_lockouts_total'],
      async () => {
        expect((await signIn(t, env, user.email, PASSWORD)).statusCode).toBe(200);
        expect((await signIn(t, env, 'nobody@example.com', PASSWORD)).statusCode).toBe(401);
        expect((await signIn(t, env, user.email, 'wrong password one')).statusCode).toBe(401);
        expect((await signIn(t, env, user.email, 'wrong password two')).statusCode).toBe(401);
      });
    expect(counted).toEqual({
      'gatehouse_sign_ins_total{result="success"}': 1, 'gatehouse_sign_ins_total{result="failure"}': 3, 'gatehouse_lockouts_total': 1,
    });
  });

  it('counts refusals by rate limit, named by the limit and never by the client', async () => {
    const env = await t.given.environment({ invitationRateLimitPerHour: 1, signUpUrl: 'https://app.example.com/sign-up' });
    const invite = () => t.server(env).post('/invitations', { email: `${randomUUID()}@example.com`, publicMetadata: {}, privateMetadata: {} });
    const counted = await deltas(['gatehouse_rate_limited_total{limit="invitations"}'], async () => {
      expect((await invite()).statusCode).toBe(201);
      expect((await invite()).statusCode).toBe(429);
    });
    expect(counted).toEqual({ 'gatehouse_rate_limited_total{limit="invitations"}': 1 });
    expect(await scrape()).not.toMatch(/limit="[^"]*(127\.0\.0\.1|@)/);
  });

  it('counts mail kept in the outbox as queued', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const counted = await deltas(['gatehouse_mail_total{outcome="queued"}'], () => t.client(env).post('/auth/forgot-password', { email: user.email }));
    expect(counted).toEqual({ 'gatehouse_mail_total{outcome="queued"}': 1 });
  });

  it('counts audit appends stored and replayed', async () => {
    const env = await t.given.environment();
    const body = eventBody(t);
    const counted = await deltas(['gatehouse_audit_appends_total{outcome="stored"}', 'gatehouse_audit_appends_total{outcome="replayed"}'], async () => {
      expect((await append(t, env, body, 'key-1')).statusCode).toBe(201);
      expect((await append(t, env, body, 'key-1')).statusCode).toBe(201);
    });
    expect(counted).toEqual({ 'gatehouse_audit_appends_total{outcome="stored"}': 1, 'gatehouse_audit_appends_total{outcome="replayed"}': 1 });
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('shows the database pool in use, idle and waiting', async () => {
    const text = await scrape();
    expect(text).toMatch(/^gatehouse_db_pool_connections\{state="in_use"\} \d+$/m);
    expect(text).toMatch(/^gatehouse_db_pool_connections\{state="idle"\} \d+$/m);
    expect(text).toMatch(/^gatehouse_db_pool_waiting \d+$/m);
  });
});

describe('where /metrics is served', () => {
  const TOKEN = 'metrics-token-0123456789';

  it('asks for the bearer token when GATEHOUSE_METRICS_TOKEN is set', async () => {
    const t = await startTestApp({ metricsExposure: { on: 'app', token: TOKEN } });
    try {
      const refused = await t.app.inject({ method: 'GET', url: '/metrics' });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['content-type']).toBe('application/problem+json');
      expect(refused.json().properties.code).toBe('unauthenticated');
      expect((await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer not-the-token-at-all' } })).statusCode).toBe(401);
      const allowed = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      expect(allowed.statusCode).toBe(200);
      expect(allowed.body).toContain('gatehouse_sign_ins_total');
    } finally {
      await t.close();
    }
  });

  it('serves them only on their own port when GATEHOUSE_METRICS_PORT is set, counting the app requests', async () => {
    const metrics = createMetrics();
    const t = await startTestApp({ metrics, metricsExposure: { on: 'own_port' } });
    const own = await serveMetrics(metrics, { port: 0, host: '127.0.0.1', token: TOKEN });
    try {
      expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
      const url = `http://127.0.0.1:${own.port}`;
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      expect((await fetch(`${url}/other`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
      const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(await res.text()).toMatch(/^http_requests_total\{method="GET",route="unmatched",status_code="404"\} 1$/m);
    } finally {
      await own.close();
      await t.close();
    }
  });
});

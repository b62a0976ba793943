import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';

const WRONG = 'definitely not the password';
const WARN = 40;
const INFO = 30;

type LogLine = Record<string, unknown> & { level: number; msg: string; reqId?: string };

describe('request log lines', () => {
  let t: TestApp;
  const lines: string[] = [];
  beforeAll(async () => { t = await startTestApp({ logLevel: 'info', logStream: { write: (line) => { lines.push(line); } } }); });
  afterAll(() => t.close());

  /** The lines written for one request, found by the request id its problem's instance carries. */
  const linesOf = (res: LightMyRequestResponse): LogLine[] => {
    const reqId = String(res.json().instance).replace('urn:uuid:', '');
    return lines.map((line) => JSON.parse(line) as LogLine).filter((line) => line.reqId === reqId);
  };
  const completion = (res: LightMyRequestResponse) => linesOf(res).find((line) => line.msg === 'request completed');
  const warnings = (res: LightMyRequestResponse) => linesOf(res).filter((line) => line.level === WARN);
  const signIn = (env: TestEnv, email: string, password: string, ip: string) =>
    t.client(env).post('/auth/sign-in', { email, password }, { remoteAddress: ip });

  it('puts the problem code on the "request completed" line of a request that ends in a problem', async () => {
    const env = await t.given.environment();
    const unauthenticated = await t.server(env, 'sk_not-a-real-key-0123456789abcdefghijklmno').get('/users');
    const missing = await t.server(env).get('/users/00000000-0000-4000-8000-000000000000');
    const noRoute = await t.server(env).get('/no-such-route');

    expect(completion(unauthenticated)).toMatchObject({ level: INFO, code: 'unauthenticated', res: { statusCode: 401 }, responseTime: expect.any(Number) });
    expect(completion(missing)).toMatchObject({ level: INFO, code: 'user_not_found', res: { statusCode: 404 } });
    expect(completion(noRoute)).toMatchObject({ level: INFO, code: 'resource_not_found', res: { statusCode: 404 } });
  });

  it('leaves the code off the completion line of a request that succeeds', async () => {
    const before = lines.length;
    const env = await t.given.environment();
    expect((await t.server(env).get('/users')).statusCode).toBe(200);
    const completed = lines.slice(before).map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.msg === 'request completed' && (line.res as { statusCode: number }).statusCode === 200);
    expect(completed.length).toBeGreaterThan(0);
    for (const line of completed) expect(line).not.toHaveProperty('code');
  });

  it('logs a failed sign-in at warn with its code, method, path and client IP, never the email or password', async () => {
    const env = await t.given.environment();
    await t.given.user(env, { email: 'ada@example.com' });
    const res = await signIn(env, 'ada@example.com', WRONG, '203.0.113.7');

    expect(res.statusCode).toBe(401);
    expect(warnings(res)).toEqual([{
      level: WARN, time: expect.any(Number), pid: process.pid, hostname: expect.any(String), reqId: expect.any(String),
      code: 'invalid_credentials', status: 401, method: 'POST', path: '/_svc/auth/sign-in', ip: '203.0.113.7', msg: 'The email or password is incorrect.',
    }]);
    expect(completion(res)).toMatchObject({ code: 'invalid_credentials', res: { statusCode: 401 } });
    const written = JSON.stringify(linesOf(res));
    for (const secret of ['ada@example.com', WRONG]) expect(written).not.toContain(secret);
  });

  it('logs a sign-in refused by the account lockout at warn too, without the right password it carried', async () => {
    const env = await t.given.environment({ lockout: { maxFailedAttempts: 2 } });
    const email = 'grace@example.com';
    const user = await t.given.user(env, { email });
    for (let i = 0; i < 2; i++) expect((await signIn(env, email, WRONG, '203.0.113.8')).statusCode).toBe(401);

    const locked = await signIn(env, email, user.password, '203.0.113.8');

    expect(locked.statusCode).toBe(401);
    expect(warnings(locked)).toMatchObject([{ code: 'invalid_credentials', method: 'POST', path: '/_svc/auth/sign-in', ip: '203.0.113.8' }]);
    expect(JSON.stringify(linesOf(locked))).not.toContain(user.password);
  });

  it('logs a 429 at warn with its code', async () => {
    const env = await t.given.environment({ lockout: { ipMaxFailures: 1, ipWindowSeconds: 600 } });
    expect((await signIn(env, 'nobody@example.com', WRONG, '203.0.113.9')).statusCode).toBe(401);

    const throttled = await signIn(env, 'nobody@example.com', WRONG, '203.0.113.9');

    expect(throttled.statusCode).toBe(429);
    expect(warnings(throttled)).toMatchObject([{ code: 'rate_limited', status: 429, method: 'POST', path: '/_svc/auth/sign-in', ip: '203.0.113.9' }]);
    expect(completion(throttled)).toMatchObject({ code: 'rate_limited', res: { statusCode: 429 } });
  });

  it('keeps other client errors at info', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users', { email: 'not an email' });
    expect(res.statusCode).toBe(400);
    expect(warnings(res)).toEqual([]);
    expect(completion(res)).toMatchObject({ level: INFO, code: 'invalid_request' });
  });
});

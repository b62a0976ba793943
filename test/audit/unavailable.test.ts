import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/platform/db/database.js';
import { databaseUrls } from '../helpers/database-urls.js';
import { expectProblem } from '../helpers/problem.js';
import { tcpProxy } from '../helpers/tcp-proxy.js';
import { createEnvironment, throwawayApp, throwawayPglite, unreachablePostgres, type ThrowawayApp } from '../platform/support.js';

const body = () => ({
  action: 'document.shared', result: 'success', schemaVersion: 1, occurredAt: new Date().toISOString(),
  actor: { type: 'service' }, targets: [], metadata: {},
});

const appendTo = (app: ThrowawayApp['app'], secretKey: string) => app.inject({
  method: 'POST', url: '/api/server/v1/audit-events', payload: body(),
  headers: { authorization: `Bearer ${secretKey}`, 'idempotency-key': randomUUID() },
});

describe('audit append while the database is unavailable', () => {
  it('answers 503 unavailable with Retry-After once the embedded database is closed, for appends and reads', async () => {
    const broken = await throwawayApp(await throwawayPglite());
    try {
      const env = await createEnvironment(broken.app);
      expect((await appendTo(broken.app, env.secretKey)).statusCode).toBe(201);
      await broken.database.close();

      const res = await appendTo(broken.app, env.secretKey);
      expectProblem(res, 503, 'unavailable');
      expect(res.headers['retry-after']).toBe('1');
      const feed = await broken.app.inject({ method: 'GET', url: '/api/server/v1/audit-events/feed', headers: { authorization: `Bearer ${env.secretKey}` } });
      expectProblem(feed, 503, 'unavailable');
    } finally {
      await broken.close();
    }
  });

  it('answers 503 unavailable when PostgreSQL refuses connections', async () => {
    const broken = await throwawayApp(await unreachablePostgres(), { migrate: false });
    try {
      const res = await appendTo(broken.app, 'sk_anything');
      expectProblem(res, 503, 'unavailable');
      expect(res.body).not.toContain('ECONNREFUSED');
    } finally {
      await broken.close();
    }
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('audit append when PostgreSQL goes away (needs TEST_DATABASE_URL)', () => {
  it('answers 503 unavailable, not a hang, after the connection to a working database is cut', async () => {
    const proxy = await tcpProxy(new URL(process.env.TEST_DATABASE_URL!));
    const broken = await throwawayApp(await openDatabase({ ...databaseUrls(process.env.TEST_DATABASE_URL!, proxy.url), poolSize: 2 }));
    try {
      const env = await createEnvironment(broken.app, `cut-${randomUUID().slice(0, 8)}`);
      expect((await appendTo(broken.app, env.secretKey)).statusCode).toBe(201);
      await proxy.cut();

      const results = await Promise.all(Array.from({ length: 5 }, () => appendTo(broken.app, env.secretKey)));
      for (const res of results) {
        expectProblem(res, 503, 'unavailable');
        expect(res.headers['retry-after']).toBe('1');
      }
    } finally {
      await proxy.cut().catch(() => {});
      await broken.close();
    }
  });
});

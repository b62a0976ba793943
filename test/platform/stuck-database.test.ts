import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/platform/db/database.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { databaseUrls } from '../helpers/database-urls.js';
import { untilBlockedBy } from '../helpers/patience.js';
import { expectProblem } from '../helpers/problem.js';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { createEnvironment, throwawayApp, type ThrowawayApp } from './support.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

/** A second connection, as a psql session would be, holding a users row FOR UPDATE until release(). */
async function holdUserRow(env: TestEnv, userId: string) {
  const locker = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await locker.connect();
  await locker.query('begin');
  await locker.query('select id from users where environment_id = $1 and id = $2 for update', [env.id, userId]);
  return { locker, release: async () => { await locker.query('commit'); await locker.end(); } };
}

// A stuck row lock and a silent link are faults of a real server: PGlite serves one statement at a time.
describe.skipIf(!TEST_DATABASE_URL)('a stuck database (PostgreSQL)', () => {
  describe('one users row locked by another session', () => {
    let t: TestApp;
    // The production pool's size; a lock timeout long enough that the blocked requests stay blocked while the test looks.
    beforeAll(async () => { t = await startTestApp({}, { poolSize: 10, limits: { statementTimeoutMs: 120_000, lockTimeoutMs: 60_000 } }); });
    afterAll(() => t.close());

    it('holds up only the requests that need the row: other environments and /readyz keep answering while 12 of them wait', async () => {
      const [hot, other] = [await t.given.environment(), await t.given.environment()];
      const user = await t.given.user(hot);
      const { locker, release } = await holdUserRow(hot, user.id);
      let released = false;
      let servedWhileLocked = 0;
      // 12 of the pool's 10: the environment's share (8) waits on the lock, the rest waits for the share up to the pool's 3 s.
      const blocked = Array.from({ length: 12 }, (_, i) => t.server(hot).patch(`/users/${user.id}`, { firstName: `Waiting ${i}` })
        .then((res) => { if (!released && res.statusCode === 200) servedWhileLocked++; return res; }));
      try {
        await untilBlockedBy(locker);
        expect((await t.server(other).post('/users', { email: 'still-served@example.com', password: 'a long passphrase' })).statusCode).toBe(201);
        expect((await t.server(other).get('/users')).statusCode).toBe(200);
        expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      } finally {
        released = true;
        await release();
      }
      const answers = await Promise.all(blocked);
      expect(servedWhileLocked).toBe(0);
      expect(answers.filter((res) => res.statusCode === 200).length).toBeGreaterThanOrEqual(8);
      for (const res of answers.filter((r) => r.statusCode !== 200)) {
        expectProblem(res, 503, 'unavailable');
        expect(res.headers['retry-after']).toBe('1');
      }
    });
  });

  describe('with the lock timeout PostgreSQL is given', () => {
    let t: TestApp;
    beforeAll(async () => { t = await startTestApp({}, { poolSize: 10, limits: { statementTimeoutMs: 120_000, lockTimeoutMs: 300 } }); });
    afterAll(() => t.close());

    it('answers the requests that wait on the row longer than the lock timeout with 503 and Retry-After, and stores none of them', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env, { firstName: 'Before' });
      const { release } = await holdUserRow(env, user.id);
      try {
        const answers = await Promise.all(Array.from({ length: 3 }, () => t.server(env).patch(`/users/${user.id}`, { firstName: 'During' })));
        for (const res of answers) {
          expectProblem(res, 503, 'unavailable');
          expect(res.headers['retry-after']).toBe('1');
        }
      } finally {
        await release();
      }
      expect((await t.server(env).get(`/users/${user.id}`)).json().firstName).toBe('Before');
    });
  });

  describe('a database link that goes silent (no reset)', () => {
    let proxy: TcpProxy;
    let app: ThrowawayApp;
    beforeAll(async () => {
      proxy = await tcpProxy(new URL(TEST_DATABASE_URL!));
      app = await throwawayApp(await openDatabase({ ...databaseUrls(TEST_DATABASE_URL!, proxy.url), poolSize: 3, limits: { statementTimeoutMs: 1000, lockTimeoutMs: 1000 } }));
    });
    afterAll(async () => { await proxy.cut(); await app.close(); });
    afterEach(() => proxy.heal());

    it('answers in-flight requests and /readyz with 503 instead of hanging, and serves again once the link is back', async () => {
      const env = await createEnvironment(app.app, `silent-${Date.now()}`);
      const list = () => app.app.inject({ method: 'GET', url: '/api/server/v1/users', headers: { authorization: `Bearer ${env.secretKey}` } });
      expect((await list()).statusCode).toBe(200);

      proxy.silence();
      const [inFlight, ready] = await Promise.all([list(), app.app.inject({ method: 'GET', url: '/readyz' })]);
      expectProblem(inFlight, 503, 'unavailable');
      expectProblem(ready, 503, 'unavailable');

      proxy.heal();
      let again = await list();
      // The connections the silence held are dropped as their deadlines pass; new ones go through the healed proxy.
      while (again.statusCode === 503) again = await list();
      expect(again.statusCode).toBe(200);
    });
  });

  it('answers 503 with Retry-After, never 500, when PostgreSQL has no connection slot left (53300; 08P01 through PgBouncer)', async () => {
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    const role = `gatehouse_full_${process.pid}`;
    await admin.query(`create role ${role} login connection limit 0`);
    const url = Object.assign(new URL(TEST_DATABASE_URL!), { username: role, password: '' }).toString();
    const full = await throwawayApp(await openDatabase({ ...databaseUrls(url), poolSize: 2 }), { migrate: false });
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, () =>
        full.app.inject({ method: 'GET', url: '/api/server/v1/users', headers: { authorization: 'Bearer sk_anything' } })));
      for (const res of answers) {
        expectProblem(res, 503, 'unavailable');
        expect(res.headers['retry-after']).toBe('1');
      }
    } finally {
      await full.close();
      await admin.query(`drop role ${role}`);
      await admin.end();
    }
  });
});

import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { spawnServer, type ServerProcess } from '../helpers/processes.js';
import { startServerPair, type PairEnv, type ServerPair } from '../helpers/server-pair.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
const ERASURES = 12;
// A job whose process died runs again this long after its claim, in the test that kills one. The race
// keeps the default lease: a worker leases its line of jobs at once, and on a busy machine a short lease
// ends before the last of them starts, so another worker takes it again (an extra attempt, no extra effect).
const LEASE_SECONDS = 2;

describe.skipIf(!TEST_DATABASE_URL)('data requests with server processes on one PostgreSQL (needs TEST_DATABASE_URL)', () => {
  let pair: ServerPair;
  let db: pg.Client;
  const extra: ServerProcess[] = [];
  beforeAll(async () => {
    pair = await startServerPair(TEST_DATABASE_URL!);
    db = new pg.Client({ connectionString: pair.databaseUrl });
    await db.connect();
  });
  afterEach(async () => { await Promise.all(extra.splice(0).map((s) => s.stop())); });
  afterAll(async () => {
    await db?.end();
    await pair?.stop();
  });

  const started = async (server: ServerProcess, env: PairEnv, userId: string, type: string) => {
    const res = await pair.serverApi(server, env, 'POST', `/users/${userId}/data-requests`, { type });
    expect(res.status, res.body).toBe(202);
    return res.json() as { id: string; status: string };
  };

  it('runs each erasure exactly once while every process races for it (grace 0)', async () => {
    const env = await pair.environment({ dataErasureGraceDays: 0 });
    const users = await Promise.all(Array.from({ length: ERASURES }, () => pair.user(env)));

    const requests = await Promise.all(users.map((user, i) => started(pair.roundRobin(i), env, user.id, 'erasure')));

    await eventually(async () => {
      const { rows } = await db.query(`select status from data_requests where environment_id = $1`, [env.id]);
      expect(rows).toEqual(Array(ERASURES).fill({ status: 'completed' }));
    }, { interval: 100 });
    const { rows: jobs } = await db.query(`select status, attempts from jobs where environment_id = $1`, [env.id]);
    expect(jobs).toEqual(Array(ERASURES).fill({ status: 'done', attempts: 1 }));
    const { rows: events } = await db.query(
      `select action, targets -> 1 ->> 'id' as request_id, count(*)::int as n from audit_events
       where environment_id = $1 and action in ('user.erased', 'data_request.completed') group by 1, 2 order by 1, 2`, [env.id]);
    const expected = ['data_request.completed', 'user.erased']
      .flatMap((action) => requests.map((r) => ({ action, request_id: r.id, n: 1 })))
      .sort((x, y) => (x.action + x.request_id).localeCompare(y.action + y.request_id));
    expect(events).toEqual(expected);
    const { rows: erased } = await db.query(`select count(*)::int as n from users where environment_id = $1 and status = 'deleted' and email is null`, [env.id]);
    expect(erased).toEqual([{ n: ERASURES }]);
  });

  it('finishes an export whose process was killed with SIGKILL in the middle of it, once the lease ends, on a restarted process', async () => {
    const env = await pair.environment();
    const user = await pair.user(env);
    // One process with a short lease runs jobs alone, so it is the one whose attempt dies.
    await Promise.all(pair.servers.map((s) => s.stop()));
    const shortLease = { ...pair.serverEnv, GATEHOUSE_JOB_LEASE_SECONDS: String(LEASE_SECONDS) };
    const doomed = await spawnServer({ env: shortLease });
    extra.push(doomed);
    // Hold a table the export reads, so the doomed process's attempt is inside its transaction when it dies.
    const blocker = new pg.Client({ connectionString: pair.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query('lock table user_identities in access exclusive mode');
      const request = await started(doomed, env, user.id, 'export');
      await eventually(async () => {
        const { rows } = await db.query(`select attempts from jobs j join data_requests d on d.environment_id = j.environment_id and d.job_id = j.id
          where d.environment_id = $1 and d.id = $2`, [env.id, request.id]);
        expect(rows).toEqual([{ attempts: 1 }]);
      }, { interval: 20 });
      doomed.signal('SIGKILL');
      expect(await doomed.exited).toMatchObject({ signal: 'SIGKILL' });
      await blocker.query('rollback');

      const { rows: before } = await db.query(`select status from data_requests where environment_id = $1 and id = $2`, [env.id, request.id]);
      expect(before).toEqual([{ status: 'pending' }]);
      const restarted = await spawnServer({ env: shortLease });
      extra.push(restarted);

      await eventually(async () => {
        const res = await pair.serverApi(restarted, env, 'GET', `/data-requests/${request.id}`);
        expect(res.json()).toMatchObject({ status: 'ready' });
      }, { interval: 100 });
      const { rows: jobs } = await db.query(`select j.status, j.attempts from jobs j join data_requests d on d.environment_id = j.environment_id and d.job_id = j.id
        where d.environment_id = $1 and d.id = $2`, [env.id, request.id]);
      expect(jobs).toEqual([{ status: 'done', attempts: 2 }]);
      const { rows: completed } = await db.query(`select count(*)::int as n from audit_events where environment_id = $1 and action = 'data_request.completed'`, [env.id]);
      expect(completed).toEqual([{ n: 1 }]);
      const { rows: archive } = await db.query(`select archive -> 'sections' -> 'user' ->> 'id' as id from data_requests where environment_id = $1 and id = $2`, [env.id, request.id]);
      expect(archive).toEqual([{ id: user.id }]);
    } finally {
      await blocker.end();
    }
  });
});

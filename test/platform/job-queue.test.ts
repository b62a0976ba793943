import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClock } from '../../src/platform/clock.js';
import type { Database, Db } from '../../src/platform/db/database.js';
import { enqueueJob } from '../../src/platform/jobs/queue.js';
import { createJobsStore } from '../../src/platform/jobs/store.js';
import { createJobWorker, JOB_WORKER_DEFAULTS, type ExternalJobHandler, type JobHandler } from '../../src/platform/jobs/worker.js';
import { eventually } from '../helpers/eventually.js';
import { openTestDatabase, startTestApp, type TestApp } from '../helpers/app.js';

/** The queue on its own: a worker over the file's own database with handlers of the test's making. */
describe('the job queue (platform/jobs)', () => {
  let t: TestApp;
  let database: Database;
  let db: Db;
  let environmentId: string;
  const clock = createTestClock('2026-01-01T00:00:00.000Z');
  beforeAll(async () => {
    // A database of its own (PostgreSQL), since a worker claims due jobs of every environment.
    database = await openTestDatabase({ own: true });
    db = database.db;
    t = await startTestApp({ db, jobsInBackground: false });
    environmentId = (await t.given.environment()).id;
    await sql`create table test_effects (n int)`.execute(db);
  });
  afterAll(async () => { await t.close(); await database.close(); });

  const worker = (handlers: Record<string, JobHandler | ExternalJobHandler>, options = {}) =>
    createJobWorker({ db, clock, log: t.app.log, handlers, options: { ...JOB_WORKER_DEFAULTS, baseDelayMs: 1000, maxDelayMs: 4000, ...options } });
  const job = (id: string) => db.selectFrom('jobs').selectAll().where('environment_id', '=', environmentId).where('id', '=', id).executeTakeFirstOrThrow();
  const enqueue = (kind: string, maxAttempts?: number) => enqueueJob(db, environmentId, { kind, payload: { n: 1 }, maxAttempts }, clock.now());

  it('commits the effect and the completion together, and a failed attempt leaves no effect and is retried with backoff until it fails for good', async () => {
    let calls = 0;
    const flaky: JobHandler = async (trx) => {
      calls += 1;
      await sql`insert into test_effects values (${calls})`.execute(trx);
      throw new Error(`boom ${calls}`);
    };
    const id = await enqueue('test.flaky', 3);
    const w = worker({ 'test.flaky': flaky });

    expect(await w.runDue()).toBe(1);
    expect(await job(id)).toMatchObject({ status: 'queued', attempts: 1, last_error: 'boom 1', finished_at: null, locked_until: null });
    const retryAt = (await job(id)).run_at.getTime() - clock.now().getTime();
    expect(retryAt).toBeGreaterThanOrEqual(500);
    expect(retryAt).toBeLessThanOrEqual(1000);
    expect(await w.runDue()).toBe(0);
    clock.advance(1000);
    expect(await w.runDue()).toBe(1);
    clock.advance(2000);
    expect(await w.runDue()).toBe(1);
    expect(await job(id)).toMatchObject({ status: 'failed', attempts: 3, last_error: 'boom 3', finished_at: clock.now() });
    clock.advance(60_000);
    expect(await w.runDue()).toBe(0);
    expect(calls).toBe(3);
    expect((await sql<{ n: number }>`select count(*)::int as n from test_effects`.execute(db)).rows).toEqual([{ n: 0 }]);
  });

  it('runs a job whose lease ran out again, and the attempt that lost it has no effect', async () => {
    const id = await enqueue('test.once');
    const store = createJobsStore(db);
    // A worker that claimed the job and died: its claim committed, its work never did.
    const [lost] = await store.claimDue(clock.now(), new Date(clock.now().getTime() + 60_000), 10);
    expect(lost).toMatchObject({ id, attempts: 1 });
    const ran: number[] = [];
    const w = worker({ 'test.once': async (_trx, claimed) => { ran.push(claimed.attempts); } });
    expect(await w.runDue()).toBe(0);
    clock.advance(60_000);
    expect(await w.runDue()).toBe(1);
    expect(ran).toEqual([2]);
    expect(await job(id)).toMatchObject({ status: 'done', attempts: 2 });
    // The first attempt, were it to come back now, finds the job taken.
    expect(await store.finish(lost!, clock.now())).toBe(false);
  });

  it('counts a job of a kind this process has no handler for as a failed attempt (here its only one), and prunes finished jobs after their retention', async () => {
    const id = await enqueue('test.unknown', 1);
    await worker({}).runDue();
    expect(await job(id)).toMatchObject({ status: 'failed', last_error: 'no handler for jobs of kind "test.unknown" in this process' });
    const pruned = await createJobsStore(db).pruneFinished(new Date(clock.now().getTime() + 1));
    expect(pruned).toBeGreaterThanOrEqual(1);
    expect(await db.selectFrom('jobs').select('id').where('environment_id', '=', environmentId).where('id', '=', id).execute()).toEqual([]);
  });

  it('runs a long line of jobs done in a transaction one at a time, a few per claim, giving the rest back unattempted, until all are done', async () => {
    let ran = 0;
    let running = 0;
    let mostAtOnce = 0;
    const ids = await Promise.all(Array.from({ length: 12 }, () => enqueue('test.line')));
    const w = worker({ 'test.line': async () => {
      running += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      ran += 1;
    } });
    expect(await w.runDue()).toBe(12);
    expect([ran, mostAtOnce]).toEqual([12, 1]);
    for (const id of ids) expect(await job(id)).toMatchObject({ status: 'done', attempts: 1 });
  });

  it('goes on draining when a line of jobs done in a transaction ends while a claim that passed over the rest of it is answered', async () => {
    // The worker's transactions, watched from outside: the second claim (made while the line runs, so passing over
    // its kind) answers only once the whole line is done, as a slow claim through a pooler under load may.
    let attemptsDone = 0;
    let claims = 0;
    let lineDone!: () => void;
    const whenLineDone = new Promise<void>((resolve) => { lineDone = resolve; });
    const watched = new Proxy(db, {
      get(target, prop) {
        if (prop === 'transaction') {
          return () => ({
            async execute<T>(fn: (trx: Db) => Promise<T>): Promise<T> {
              const result = await target.transaction().execute(fn);
              if (!Array.isArray(result)) {
                if (++attemptsDone === 5) lineDone();
              } else if (++claims === 2) {
                await whenLineDone;
                // The line's own ending (a few promise steps after its last commit) runs before this.
                await new Promise((resolve) => setImmediate(resolve));
              }
              return result;
            },
          });
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    let ran = 0;
    const ids = await Promise.all(Array.from({ length: 12 }, () => enqueue('test.line')));
    const w = createJobWorker({
      db: watched, clock, log: t.app.log, handlers: { 'test.line': async () => { ran += 1; } }, options: JOB_WORKER_DEFAULTS,
    });
    expect(await w.runDue()).toBe(12);
    expect(ran).toBe(12);
    for (const id of ids) expect(await job(id)).toMatchObject({ status: 'done', attempts: 1 });
  });

  /** External work whose perform waits for the test to open its gate; it notes what ran, and settles as done. */
  function gatedExternal(name: string, log: string[], gate: Promise<void> = Promise.resolve()): ExternalJobHandler<string> {
    return {
      async perform(jobs) {
        log.push(`${name} performs ${jobs.length}`);
        await gate;
        return jobs.map((j) => j.id);
      },
      async settle(trx, jobs, results) {
        for (const _id of results) await sql`insert into test_effects values (${name === 'A' ? 1 : 2})`.execute(trx);
        log.push(`${name} settles ${jobs.length}`);
        return jobs.map(() => ({ status: 'done' as const }));
      },
    };
  }

  it("does not record the result of an attempt whose lease ran out and whose job another worker took and finished", async () => {
    await sql`delete from test_effects`.execute(db);
    const id = await enqueue('test.external');
    const log: string[] = [];
    let open!: () => void;
    const slow = worker({ 'test.external': gatedExternal('A', log, new Promise((resolve) => { open = resolve; })) });
    const running = slow.runDue();
    await eventually(() => expect(log).toEqual(['A performs 1']));
    clock.advance(JOB_WORKER_DEFAULTS.leaseMs);
    expect(await worker({ 'test.external': gatedExternal('B', log) }).runDue()).toBe(1);
    open();
    await running;

    expect(log).toEqual(['A performs 1', 'B performs 1', 'B settles 1']);
    expect(await job(id)).toMatchObject({ status: 'done', attempts: 2 });
    expect((await sql<{ n: number }>`select n from test_effects`.execute(db)).rows).toEqual([{ n: 2 }]);
  });

  it('never splits the jobs of one ordering key between two workers claiming at once: one group at a time, in order', async () => {
    const queued: string[] = [];
    for (let i = 0; i < 12; i++) queued.push(await enqueueJob(db, environmentId, { kind: 'test.ordered', payload: { i }, orderingKey: 'endpoint-1' }, clock.now()));
    let running = 0;
    let mostAtOnce = 0;
    const performed: string[] = [];
    const handler: ExternalJobHandler<null> = {
      async perform(jobs) {
        running += 1;
        mostAtOnce = Math.max(mostAtOnce, running);
        performed.push(...jobs.map((j) => j.id));
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        return jobs.map(() => null);
      },
      settle: async (_trx, jobs) => jobs.map(() => ({ status: 'done' as const })),
    };
    const [a, b] = [worker({ 'test.ordered': handler }, { batchSize: 3 }), worker({ 'test.ordered': handler }, { batchSize: 3 })];
    const counts = await Promise.all([a.runDue(), b.runDue()]);
    expect(counts[0] + counts[1]).toBe(12);
    expect(mostAtOnce).toBe(1);
    expect(performed).toEqual(queued);
  });
});

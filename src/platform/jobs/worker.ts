import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import { inTransaction, type Db } from '../db/database.js';
import type { Notifications } from '../db/notifications.js';
import { retryDelayMs } from './backoff.js';
import { createWakeLoop } from '../wake-loop.js';
import { JOB_QUEUED_MESSAGE, type ClaimedJob } from './queue.js';
import { createJobsStore } from './store.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Runs every job due now and answers how many ran (tests, after moving the clock, instead of waiting for the worker). */
    runJobs(): Promise<number>;
  }
}

/**
 * Does a job's work in `trx`, the transaction that also marks the job done: its effect commits if and
 * only if the job is recorded as done. Throwing rolls both back, and the job is retried later.
 */
export type JobHandler = (trx: Db, job: ClaimedJob) => Promise<void>;

/** What became of an attempt of work outside the database, as the job records it. */
export type JobOutcome = { status: 'done' } | { status: 'retry'; at: Date; error: string } | { status: 'failed'; error: string };

/**
 * Work whose effect is outside the database (a mail, an HTTP call), which no transaction can take back:
 * `perform` runs with the job leased and no transaction open (so a slow receiver holds no connection),
 * then `settle` records its result in one transaction with the job's new state. At least once: a process
 * killed between the two performs the job again after its lease.
 */
export interface ExternalJobHandler<Result = unknown> {
  perform(job: ClaimedJob): Promise<Result>;
  settle(trx: Db, job: ClaimedJob, result: Result, now: Date): Promise<JobOutcome>;
}

const isExternal = (handler: JobHandler | ExternalJobHandler): handler is ExternalJobHandler => typeof handler !== 'function';

export interface JobWorkerOptions {
  /** The first retry comes after about this long; each next one after twice as long, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * How long after a claim another worker may take the job when its attempt has not finished. A running
   * attempt holds the job's row lock, which claims skip, so this is how long a job whose process died
   * (SIGKILL, a lost machine) waits before it runs again, not a limit on how long a job may run.
   */
  leaseMs: number;
  /** The longest the worker sleeps before looking for due jobs (a queued job wakes it sooner). */
  pollIntervalMs: number;
  /**
   * Jobs claimed at a time. Those with an ordering key run one after another per key, other external
   * ones side by side; those done in a transaction one after another.
   */
  batchSize: number;
}

export const JOB_WORKER_DEFAULTS: JobWorkerOptions = {
  baseDelayMs: 10_000, maxDelayMs: 3_600_000, leaseMs: 60_000, pollIntervalMs: 5_000, batchSize: 50,
};

export interface JobWorkerDeps {
  db: Db; clock: Clock; log: FastifyBaseLogger; notifications?: Notifications;
  /** The handler of each kind of job this process runs. */
  handlers: Record<string, JobHandler | ExternalJobHandler>;
  options: JobWorkerOptions;
}

/**
 * The claimed jobs in lanes that run side by side, each lane's jobs one after another (in queue order):
 * one lane per ordering key, one per other external job, and one for every job done in a transaction
 * (on the embedded database they share its one connection anyway).
 */
function lanes(claimed: ClaimedJob[], handlers: Record<string, JobHandler | ExternalJobHandler>): ClaimedJob[][] {
  const byKey = new Map<string, ClaimedJob[]>();
  for (const job of claimed) {
    const handler = handlers[job.kind];
    const key = handler && isExternal(handler) ? (job.orderingKey ?? `job:${job.id}`) : 'in-transaction';
    byKey.set(key, [...(byKey.get(key) ?? []), job]);
  }
  return [...byKey.values()];
}

/** What is kept of a failure in the job row: the message only, cut short (never a stack). */
const errorSummary = (err: unknown) => String((err as Error)?.message ?? err).slice(0, 500);

/**
 * The worker of the job queue (platform/jobs): it drains every due job, then sleeps until the next is due
 * (at most pollIntervalMs); a job queued by any process (NOTIFY at commit) wakes it. Every process runs
 * one; claims with SKIP LOCKED and a lease, and the completion committed with the effect, make each job
 * take effect once. Its timers never keep the process alive; stop() lets the job in flight finish.
 */
export function createJobWorker({ db, clock, log, notifications, handlers, options }: JobWorkerDeps) {
  const store = createJobsStore(db);

  /** One attempt of external work: perform, then settle with the job's new state in one transaction. */
  async function attemptExternal(handler: ExternalJobHandler, job: ClaimedJob) {
    const fields = { environmentId: job.environmentId, jobId: job.id, kind: job.kind, attempt: job.attempts };
    try {
      const result = await handler.perform(job);
      await inTransaction(db, async (trx) => {
        const now = clock.now();
        const outcome = await handler.settle(trx, job, result, now);
        const jobs = createJobsStore(trx);
        if (outcome.status === 'done') await jobs.markDone(job, now);
        else if (outcome.status === 'retry') await jobs.scheduleRetry(job, outcome.at, outcome.error);
        else await jobs.markFailed(job, now, outcome.error);
      });
    } catch (err) {
      // The outcome is lost, not the job: it is performed again when its lease ends.
      log.warn({ ...fields, err: { message: (err as Error).message } }, 'could not settle a job attempt; it runs again after its lease');
    }
  }

  /** One attempt: the handler and the completion in one transaction; a failure is recorded after it. */
  async function attempt(job: ClaimedJob) {
    const fields = { environmentId: job.environmentId, jobId: job.id, kind: job.kind, attempt: job.attempts };
    try {
      const handler = handlers[job.kind];
      if (!handler) throw new Error(`no handler for jobs of kind "${job.kind}" in this process`);
      if (isExternal(handler)) return await attemptExternal(handler, job);
      await inTransaction(db, async (trx) => {
        // First: it locks the row, and tells whether this attempt still owns the job.
        if (!(await createJobsStore(trx).finish(job, clock.now()))) return;
        await handler(trx, job);
      });
    } catch (err) {
      const now = clock.now();
      try {
        if (job.attempts >= job.maxAttempts) {
          await store.markFailed(job, now, errorSummary(err));
          log.error({ ...fields, err }, 'job failed for good');
        } else {
          const at = new Date(now.getTime() + retryDelayMs(job.attempts, options));
          await store.scheduleRetry(job, at, errorSummary(err));
          log.warn({ ...fields, err, retryAt: at }, 'job attempt failed; will retry');
        }
      } catch (recordErr) {
        // The outcome is lost, not the job: it is claimed again when its lease ends.
        log.warn({ ...fields, err: { message: (recordErr as Error).message } }, 'could not record a failed job attempt; it is retried after its lease');
      }
    }
  }

  /** Runs due jobs until none is left (while the worker runs, or all of them when forced); answers how many were claimed. */
  async function drain(force = false) {
    let claimedCount = 0;
    while (force || !loop.stopped()) {
      const now = clock.now();
      const claimed = await store.claimDue(now, new Date(now.getTime() + options.leaseMs), options.batchSize);
      if (claimed.length === 0) return claimedCount;
      claimedCount += claimed.length;
      await Promise.all(lanes(claimed, handlers).map(async (lane) => { for (const job of lane) await attempt(job); }));
    }
    return claimedCount;
  }

  const loop = createWakeLoop({
    clock, log, drain: () => drain(), nextDueAt: store.nextDueAt, pollIntervalMs: options.pollIntervalMs,
    drainFailure: 'job worker could not read the queue', notifications, queuedMessage: JOB_QUEUED_MESSAGE,
  });

  return {
    start: loop.start,
    /** Looks for due jobs now (after this process queued one). */
    wake: loop.wake,
    /**
     * Runs every job due by the clock now, after the worker's own run in flight, and answers when none is
     * left: what tests call after moving the test clock, instead of waiting for the timer.
     */
    runDue: (): Promise<number> => loop.runExclusive(() => drain(true)),
    stop: loop.stop,
  };
}
export type JobWorker = ReturnType<typeof createJobWorker>;

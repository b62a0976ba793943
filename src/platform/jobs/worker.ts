import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import { inTransaction, type Db } from '../db/database.js';
import type { Notifications } from '../db/notifications.js';
import { retryDelayMs } from './backoff.js';
import { createWakeLoop } from '../wake-loop.js';
import { JOB_QUEUED_MESSAGE, type ClaimedJob } from './queue.js';
import { createJobsStore, type JobOutcome } from './store.js';

export type { JobOutcome } from './store.js';

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

/**
 * Work whose effect is outside the database (a mail, an HTTP call), which no transaction can take back,
 * a claimed batch of one kind at a time: `perform` runs with the jobs leased and no transaction open (so a
 * slow receiver holds no connection) and answers one result per job, in order; then `settle` records the
 * results in one transaction with the jobs' new states (one outcome per job, in order). At least once: a
 * process killed between the two performs the jobs again after their lease. `perform` must finish well
 * within the lease, or another worker takes the jobs and performs them too.
 */
export interface ExternalJobHandler<Result = unknown> {
  perform(jobs: ClaimedJob[]): Promise<Result[]>;
  settle(trx: Db, jobs: ClaimedJob[], results: Result[], now: Date): Promise<JobOutcome[]>;
}

/**
 * A handler of one job at a time as a batch handler: the batch's jobs performed side by side, at most
 * `concurrency` at once (an SMTP server takes only so many connections), settled one after another.
 */
export function eachJob<Result>(one: {
  perform(job: ClaimedJob): Promise<Result>;
  settle(trx: Db, job: ClaimedJob, result: Result, now: Date): Promise<JobOutcome>;
}, concurrency = 10): ExternalJobHandler<Result> {
  return {
    async perform(jobs) {
      const results: Result[] = new Array(jobs.length);
      let next = 0;
      await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, async () => {
        for (let i = next++; i < jobs.length; i = next++) results[i] = await one.perform(jobs[i]!);
      }));
      return results;
    },
    async settle(trx, jobs, results, now) {
      const outcomes: JobOutcome[] = [];
      for (const [i, job] of jobs.entries()) outcomes.push(await one.settle(trx, job, results[i] as Result, now));
      return outcomes;
    },
  };
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
   * Jobs in flight at a time (claimed together as far as room allows). External ones run in groups of one
   * kind and ordering key, side by side; of those done in a transaction, at most LOCAL_JOBS_PER_CLAIM per
   * claim run one after another, and the rest is given back at once.
   */
  batchSize: number;
}

const LOCAL_JOBS_PER_CLAIM = 5;

export const JOB_WORKER_DEFAULTS: JobWorkerOptions = {
  baseDelayMs: 10_000, maxDelayMs: 3_600_000, leaseMs: 60_000, pollIntervalMs: 5_000, batchSize: 200,
};

export interface JobWorkerDeps {
  db: Db; clock: Clock; log: FastifyBaseLogger; notifications?: Notifications;
  /** The handler of each kind of job this process runs. */
  handlers: Record<string, JobHandler | ExternalJobHandler>;
  options: JobWorkerOptions;
}

/**
 * The claimed jobs done in a transaction (and those of an unknown kind, which fail there), and the
 * external ones in groups of one handler and one ordering key (jobs without a key: one group per handler).
 */
function groupsOf(claimed: ClaimedJob[], handlers: Record<string, JobHandler | ExternalJobHandler>) {
  const local: ClaimedJob[] = [];
  const external = new Map<string, { handler: ExternalJobHandler; jobs: ClaimedJob[] }>();
  for (const job of claimed) {
    const handler = handlers[job.kind];
    if (!handler || !isExternal(handler)) { local.push(job); continue; }
    const key = `${job.kind} ${job.orderingKey ?? ''}`;
    const group = external.get(key) ?? { handler, jobs: [] };
    group.jobs.push(job);
    external.set(key, group);
  }
  return { inTransaction: local, external: [...external.values()] };
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

  /** One attempt of a batch of external work: perform, then settle with the jobs' new states in one transaction. */
  async function attemptExternal(handler: ExternalJobHandler, jobs: ClaimedJob[]) {
    try {
      const results = await handler.perform(jobs);
      await inTransaction(db, async (trx) => {
        const now = clock.now();
        const store = createJobsStore(trx);
        // A job whose lease ran out may have been taken by another worker since: its result is not recorded here.
        const owned = await store.owned(jobs);
        const mine = jobs.flatMap((job, i) => (owned.has(job.id) ? [{ job, result: results[i] }] : []));
        if (mine.length === 0) return;
        const outcomes = await handler.settle(trx, mine.map((m) => m.job), mine.map((m) => m.result), now);
        await store.settle(mine.map(({ job }, i) => ({ job, outcome: outcomes[i]! })), now);
      });
    } catch (err) {
      // The outcome is lost, not the jobs: they are performed again when their lease ends.
      log.warn({ kind: jobs[0]!.kind, jobs: jobs.length, err: { message: (err as Error).message } }, 'could not settle job attempts; they run again after their lease');
    }
  }

  /** One attempt: the handler and the completion in one transaction; a failure is recorded after it. */
  async function attempt(job: ClaimedJob) {
    const fields = { environmentId: job.environmentId, jobId: job.id, kind: job.kind, attempt: job.attempts };
    try {
      const handler = handlers[job.kind];
      // groupsOf sends only jobs done in a transaction, or of a kind this process does not know, here.
      if (!handler || isExternal(handler)) throw new Error(`no handler for jobs of kind "${job.kind}" in this process`);
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

  /** Claims up to `limit` due jobs, serialized with other processes' claims (see lockClaims). */
  const claim = (now: Date, limit: number, skipKinds: string[]) => inTransaction(db, async (trx) => {
    const jobs = createJobsStore(trx);
    await jobs.lockClaims();
    return jobs.claimDue(now, new Date(now.getTime() + options.leaseMs), limit, skipKinds);
  });

  /**
   * Runs due jobs until none is left (while the worker runs, or all of them when forced); answers how many
   * were claimed. Groups run side by side and the worker claims more while they do, up to batchSize jobs
   * in flight, so a slow receiver holds up only its own group (a later job with its ordering key is not
   * claimed while an earlier one is in flight).
   */
  async function drain(force = false) {
    let claimedCount = 0;
    let running = 0;
    let localRunning = false;
    const localKinds = Object.entries(handlers).flatMap(([kind, handler]) => (isExternal(handler) ? [] : [kind]));
    const inFlight = new Set<Promise<void>>();
    const track = (count: number, work: () => Promise<void>) => {
      running += count;
      const done: Promise<void> = work().finally(() => { running -= count; inFlight.delete(done); });
      inFlight.add(done);
    };
    try {
      while (force || !loop.stopped()) {
        const now = clock.now();
        const room = options.batchSize - running;
        // A claim made while work of this drain is in flight passes over jobs that work holds back (the rest of a
        // line, later jobs of an ordering key in flight), which may be due by the time it answers.
        const passedOver = inFlight.size > 0;
        // While a line of jobs done in a transaction runs, no more of them is claimed (one line at a time).
        const claimed = room > 0 ? await claim(now, room, localRunning ? localKinds : []) : [];
        if (claimed.length === 0) {
          // Nothing due, unless what this claim passed over was let go meanwhile: then look once more.
          if (inFlight.size === 0) {
            if (passedOver) continue;
            return claimedCount;
          }
          await Promise.race(inFlight);
          continue;
        }
        const { inTransaction, external } = groupsOf(claimed, handlers);
        // Jobs done in a transaction may each take seconds (an export): a long line of them would outlive their lease.
        const local = inTransaction.slice(0, LOCAL_JOBS_PER_CLAIM);
        const extra = inTransaction.slice(LOCAL_JOBS_PER_CLAIM);
        if (extra.length > 0) await store.settle(extra.map((job) => ({ job, outcome: { status: 'postponed', at: now } })), now);
        claimedCount += claimed.length - extra.length;
        if (local.length > 0) {
          localRunning = true;
          track(local.length, async () => {
            try { for (const job of local) await attempt(job); } finally { localRunning = false; }
          });
        }
        for (const { handler, jobs } of external) track(jobs.length, () => attemptExternal(handler, jobs));
      }
    } finally {
      await Promise.all(inFlight);
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

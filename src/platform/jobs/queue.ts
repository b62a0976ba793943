import type { Db } from '../db/database.js';
import { publishInvalidation } from '../db/notifications.js';
import type { JsonObject } from '../json.js';
import { createJobsStore } from './store.js';

export type { ClaimedJob } from './store.js';

/**
 * The message every process's job worker hears (on the channel that also carries cache evictions) when a
 * job is queued: at commit when queued in a transaction, so no worker looks before the job is there.
 */
export const JOB_QUEUED_MESSAGE = 'jobs:queued';

/** Attempts before a job is given up on, unless the kind says otherwise. */
export const DEFAULT_MAX_ATTEMPTS = 10;

export interface JobRequest {
  kind: string; payload: JsonObject; runAt?: Date; maxAttempts?: number;
  /** Jobs with the same key are not claimed while an earlier one is in flight: they run in the order queued, where possible. */
  orderingKey?: string;
}

/**
 * Queues a job in the caller's transaction, so the job exists if and only if the change that asks for it
 * commits. It runs at `runAt` (default now) on whichever process's worker claims it first. Answers its id.
 */
export async function enqueueJob(trx: Db, environmentId: string, job: JobRequest, now: Date): Promise<string> {
  const id = await createJobsStore(trx).insert(environmentId, {
    kind: job.kind, payload: job.payload, runAt: job.runAt ?? now, maxAttempts: job.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, orderingKey: job.orderingKey ?? null,
  }, now);
  await publishInvalidation(trx, JOB_QUEUED_MESSAGE);
  return id;
}

/**
 * Makes a queued job due now, in the caller's transaction (a retry asked for by a person); other
 * processes' workers hear of it at commit. False when the job is no longer queued: queue another then.
 */
export async function makeJobDueNow(trx: Db, environmentId: string, jobId: string, now: Date): Promise<boolean> {
  const made = await createJobsStore(trx).makeDue(environmentId, jobId, now);
  if (made) await publishInvalidation(trx, JOB_QUEUED_MESSAGE);
  return made;
}

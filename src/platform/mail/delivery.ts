import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/database.js';
import type { Metrics } from '../metrics.js';
import { retryDelayMs } from '../jobs/backoff.js';
import { enqueueJob, type ClaimedJob } from '../jobs/queue.js';
import { eachJob, type ExternalJobHandler, type JobOutcome } from '../jobs/worker.js';
import { createOutboxStore, type Mail } from './outbox-store.js';

/** The job (platform/jobs) that sends one outbox message: payload `{ messageId }`. */
export const MAIL_DELIVER_JOB = 'mail.deliver';

export interface DeliveryOptions {
  /** Attempts before a message is given up on (marked failed). */
  maxAttempts: number;
  /** The first retry comes after about this long; each next one after twice as long, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * Twenty attempts spread over about 6 to 11 hours (after 10 s, 20 s, 40 s, ... then hourly), so mail queued during a
 * night-long SMTP outage still goes out; an SMTP send gives up within SMTP_TIMEOUTS_MS, well inside the job's lease.
 */
export const DELIVERY_DEFAULTS: DeliveryOptions = { maxAttempts: 20, baseDelayMs: 10_000, maxDelayMs: 3_600_000 };

/**
 * Keeps the mail in the outbox (pending) and queues the job that sends it, both through `trx`: in a
 * transaction, the mail goes out if and only if it commits (and its NOTIFY wakes every process's worker).
 */
export async function queueMail(trx: Db, environmentId: string, mail: Mail, now: Date, maxAttempts: number) {
  const messageId = await createOutboxStore(trx).insertPending(environmentId, mail, now);
  await enqueueJob(trx, environmentId, { kind: MAIL_DELIVER_JOB, payload: { messageId }, maxAttempts }, now);
}

export interface DeliveryDeps {
  db: Db;
  log: FastifyBaseLogger;
  metrics: Pick<Metrics, 'mail'>;
  /** Hands one message to the SMTP server; throws when it was not accepted. */
  transmit(mail: Mail): Promise<void>;
  options: Pick<DeliveryOptions, 'baseDelayMs' | 'maxDelayMs'>;
}

/** What an attempt came to: nothing to send (the message is no longer pending), sent, or not taken by the server. */
type Attempt =
  | { outcome: 'nothing' }
  | { outcome: 'sent'; message: Sending }
  | { outcome: 'refused'; message: Sending; failure: unknown };
/** What settle needs of the message: never its subject or body. */
type Sending = { id: string; to: string };

/** A refusal that no retry will change: the server rejected the recipients or the message with a 5xx reply. */
function isPermanent(err: unknown): boolean {
  const { code, responseCode } = err as { code?: string; responseCode?: number };
  return (code === 'EENVELOPE' || code === 'EMESSAGE') && responseCode !== undefined && responseCode >= 500 && responseCode < 600;
}

/** What is kept of an error in the outbox row and the job: its code and SMTP reply code, never text that could quote the mail. */
const errorSummary = (err: unknown) => {
  const { code, responseCode } = err as { code?: string; responseCode?: number };
  return [code ?? 'ERROR', responseCode].filter((part) => part !== undefined).join(' ');
};

/**
 * The handler of 'mail.deliver' jobs: perform sends the pending message over SMTP (the job leased, no
 * transaction open); settle records the result on the outbox row (sent, failed, or due again) with the
 * job's new state. A process killed between the two sends the message again after the lease (at least once).
 */
export function createDeliveryHandler({ db, log, metrics, transmit, options }: DeliveryDeps): ExternalJobHandler<Attempt> {
  return eachJob({
    async perform(job: ClaimedJob): Promise<Attempt> {
      const id = String(job.payload.messageId);
      const mail = await createOutboxStore(db).beginAttempt(job.environmentId, id, job.attempts);
      if (!mail) return { outcome: 'nothing' };
      const message = { id, to: mail.to };
      try {
        await transmit(mail);
        return { outcome: 'sent', message };
      } catch (err) {
        return { outcome: 'refused', message, failure: err ?? new Error('mail not accepted') };
      }
    },

    async settle(trx: Db, job: ClaimedJob, attempt: Attempt, now: Date): Promise<JobOutcome> {
      if (attempt.outcome === 'nothing') return { status: 'done' };
      const outbox = createOutboxStore(trx);
      const { message } = attempt;
      if (attempt.outcome === 'sent') {
        await outbox.markSent(job.environmentId, message.id, now);
        metrics.mail.inc({ outcome: 'sent' });
        return { status: 'done' };
      }
      const { failure } = attempt;
      // Never the subject or body in the log: they carry codes and links (security.md 27).
      const fields = { environmentId: job.environmentId, messageId: message.id, to: message.to, attempt: job.attempts, err: failure };
      const error = errorSummary(failure);
      if (isPermanent(failure) || job.attempts >= job.maxAttempts) {
        await outbox.markFailed(job.environmentId, message.id, job.attempts, now, error);
        metrics.mail.inc({ outcome: 'failed' });
        log.error(fields, 'mail delivery failed');
        return { status: 'failed', error };
      }
      const nextAttemptAt = new Date(now.getTime() + retryDelayMs(job.attempts, options));
      await outbox.scheduleRetry(job.environmentId, message.id, job.attempts, nextAttemptAt, error);
      metrics.mail.inc({ outcome: 'retried' });
      log.warn({ ...fields, nextAttemptAt }, 'mail delivery attempt failed; will retry');
      return { status: 'retry', at: nextAttemptAt, error };
    },
  });
}

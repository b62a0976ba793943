import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Notifications } from '../db/notifications.js';
import type { Metrics } from '../metrics.js';
import { createWakeLoop } from '../wake-loop.js';
import { retryDelayMs } from '../jobs/backoff.js';
import { MAIL_QUEUED_MESSAGE, type ClaimedMessage, type Mail, type OutboxStore } from './outbox-store.js';

export interface DeliveryOptions {
  /** Attempts before a message is given up on (marked failed). */
  maxAttempts: number;
  /** The first retry comes after about this long; each next one after twice as long, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** How long a claimed message is left to its worker before another may try it (longer than any send). */
  leaseMs: number;
  /** The longest a worker sleeps before looking for due mail (queued mail wakes it sooner). */
  pollIntervalMs: number;
  /** Messages claimed, and sent concurrently, at a time. */
  batchSize: number;
}

/**
 * Twenty attempts spread over about 6 to 11 hours (after 10 s, 20 s, 40 s, ... then hourly), so mail queued during a
 * night-long SMTP outage still goes out; an SMTP send gives up within SMTP_TIMEOUTS_MS, well inside the lease.
 */
export const DELIVERY_DEFAULTS: DeliveryOptions = {
  maxAttempts: 20, baseDelayMs: 10_000, maxDelayMs: 3_600_000, leaseMs: 120_000, pollIntervalMs: 5_000, batchSize: 10,
};

export interface DeliveryDeps {
  outbox: OutboxStore;
  clock: Clock;
  log: FastifyBaseLogger;
  metrics: Pick<Metrics, 'mail'>;
  notifications?: Notifications;
  /** Hands one message to the SMTP server; throws when it was not accepted. */
  transmit(mail: Mail): Promise<void>;
  options: DeliveryOptions;
}

/** A refusal that no retry will change: the server rejected the recipients or the message with a 5xx reply. */
function isPermanent(err: unknown): boolean {
  const { code, responseCode } = err as { code?: string; responseCode?: number };
  return (code === 'EENVELOPE' || code === 'EMESSAGE') && responseCode !== undefined && responseCode >= 500 && responseCode < 600;
}

/** What is kept of an error in the outbox row: its code and SMTP reply code, never text that could quote the mail. */
const errorSummary = (err: unknown) => {
  const { code, responseCode } = err as { code?: string; responseCode?: number };
  return [code ?? 'ERROR', responseCode].filter((part) => part !== undefined).join(' ');
};

/**
 * The worker that sends outbox mail: it drains every due message, then sleeps until the next one is due
 * (at most pollIntervalMs); queued mail (this process's, or any process's through NOTIFY) wakes it.
 * Its timers never keep the process alive; stop() lets the sends in flight finish.
 */
export function createDeliveryWorker({ outbox, clock, log, metrics, notifications, transmit, options }: DeliveryDeps) {

  async function deliver(message: ClaimedMessage) {
    const fields = { environmentId: message.environmentId, messageId: message.id, to: message.to, attempt: message.attempts };
    let failure: unknown;
    try {
      await transmit(message);
    } catch (err) {
      failure = err ?? new Error('mail not accepted');
    }
    const now = clock.now();
    try {
      if (failure === undefined) {
        await outbox.markSent(message.environmentId, message.id, now);
        metrics.mail.inc({ outcome: 'sent' });
      } else if (isPermanent(failure) || message.attempts >= options.maxAttempts) {
        await outbox.markFailed(message, now, errorSummary(failure));
        metrics.mail.inc({ outcome: 'failed' });
        // Never the subject or body: they carry codes and links (security.md 27).
        log.error({ ...fields, err: failure }, 'mail delivery failed');
      } else {
        const nextAttemptAt = new Date(now.getTime() + retryDelayMs(message.attempts, options));
        await outbox.scheduleRetry(message, nextAttemptAt, errorSummary(failure));
        metrics.mail.inc({ outcome: 'retried' });
        log.warn({ ...fields, err: failure, nextAttemptAt }, 'mail delivery attempt failed; will retry');
      }
    } catch (err) {
      // The outcome is lost, not the mail: the message is due again when its lease ends.
      log.warn({ ...fields, err: { message: (err as Error).message } }, 'could not record a mail delivery attempt; it is retried after its lease');
    }
  }

  async function drain() {
    while (!loop.stopped()) {
      const now = clock.now();
      const claimed = await outbox.claimDue(now, new Date(now.getTime() + options.leaseMs), options.batchSize);
      if (claimed.length === 0) return;
      await Promise.all(claimed.map(deliver));
    }
  }

  const loop = createWakeLoop({
    clock, log, drain, nextDueAt: outbox.nextDueAt, pollIntervalMs: options.pollIntervalMs,
    drainFailure: 'mail delivery worker could not read the outbox', notifications, queuedMessage: MAIL_QUEUED_MESSAGE,
  });

  return {
    start: loop.start,
    /** Looks for due mail now (after this process queued some). */
    wake: loop.wake,
    stop: loop.stop,
  };
}
export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;

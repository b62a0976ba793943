import type { FastifyBaseLogger } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { recordOwnEvent } from '../audit/service.js';
import { systemCaller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/encryption.js';
import type { Db } from '../platform/db/database.js';
import { retryDelayMs, type Backoff } from '../platform/jobs/backoff.js';
import type { ClaimedJob } from '../platform/jobs/store.js';
import type { ExternalJobHandler, JobOutcome } from '../platform/jobs/worker.js';
import type { Metrics } from '../platform/metrics.js';
import { createDeliveryStore, type DeliveryToSend } from './delivery-store.js';
import { RefusedTarget, type WebhookSender } from './target.js';

export const WEBHOOK_DELIVERY_JOB = 'webhook.deliver';

/** Attempts of one delivery before it is given up on: the trigger of migration 0028 queues each delivery's job with this many. */
export const WEBHOOK_MAX_ATTEMPTS = 20;

export interface WebhookDeliveryOptions extends Backoff {
  /** An endpoint whose every attempt failed for this long is disabled (and the operator told). */
  disableAfterMs: number;
}

/**
 * Twenty attempts over about three days: after 10 s, 20 s, 40 s, ... doubling to 12 h, each with a random
 * half of jitter (so about 2 to 4 days in all). An endpoint failing for 5 days straight is disabled.
 */
export const WEBHOOK_DELIVERY_DEFAULTS: WebhookDeliveryOptions = {
  baseDelayMs: 10_000, maxDelayMs: 12 * 3_600_000, disableAfterMs: 5 * 24 * 3_600_000,
};

/** What one attempt came to, carried from the send (no transaction open) to its settlement. */
type AttemptResult =
  | { kind: 'gone' }
  | { kind: 'disabled' }
  | { kind: 'attempted'; send: DeliveryToSend; startedAt: Date; durationMs: number; status: number | null; body: string | null; error: string | null; refused: boolean };

export interface WebhookDeliveryDeps {
  db: Db; clock: Clock; sealer: Sealer; log: FastifyBaseLogger; sender: WebhookSender;
  metrics: Pick<Metrics, 'webhookDeliveries'>;
  options: WebhookDeliveryOptions;
}

/** The Standard Webhooks body: `{type, timestamp, data}`, the same bytes on every attempt. */
const bodyOf = (send: DeliveryToSend) => JSON.stringify({ type: send.type, timestamp: send.occurredAt.toISOString(), data: send.data });

/** What is kept of a failure: the message, cut short, never a stack. */
const errorText = (err: unknown) => String((err as Error)?.message ?? err).slice(0, 300);

/**
 * The job that sends one delivery (one event to one endpoint): signed per Standard Webhooks with the
 * endpoint's secret, and during a rotation with the previous one too; `webhook-id` is the event's id on
 * every attempt, so a receiver drops a duplicate. A 2xx answer is success; anything else, a timeout or a
 * refused target is a failed attempt, retried with backoff until the last, after which the delivery fails.
 */
export function webhookDeliveryHandler({ db, clock, sealer, log, sender, metrics, options }: WebhookDeliveryDeps): ExternalJobHandler<AttemptResult> {
  function headersFor(send: DeliveryToSend, body: string, at: Date): Record<string, string> {
    const secrets = [send.secretSealed];
    if (send.previousSecretSealed && send.previousSecretExpiresAt && send.previousSecretExpiresAt > at) secrets.push(send.previousSecretSealed);
    const signatures = secrets.map((sealed) => new Webhook(sealer.open(sealed).toString('utf8')).sign(send.eventId, at, body));
    return { 'webhook-id': send.eventId, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signatures.join(' ') };
  }

  /** Notes the endpoint's failure; answers true when it is (now) disabled, so the delivery is not retried. */
  async function endpointFailed(trx: Db, send: DeliveryToSend, startedAt: Date, now: Date): Promise<boolean> {
    const store = createDeliveryStore(trx);
    const failing = await store.endpointFailed(send.environmentId, send.endpointId, startedAt);
    if (!failing?.enabled) return true;
    if (now.getTime() - failing.failingSince.getTime() < options.disableAfterMs) return false;
    if (!(await store.disableForFailing(send.environmentId, send.endpointId, now))) return true;
    log.error({ environmentId: send.environmentId, endpointId: send.endpointId, failingSince: failing.failingSince }, 'webhook endpoint disabled: every delivery failed');
    await recordOwnEvent(trx, send.environmentId, {
      action: 'webhook_endpoint.disabled', ...systemCaller('job'), targets: [{ type: 'webhook_endpoint', id: send.endpointId }],
      metadata: { reason: 'failing', failingSince: failing.failingSince.toISOString() },
    }, now);
    return true;
  }

  return {
    async perform(job: ClaimedJob): Promise<AttemptResult> {
      const send = await createDeliveryStore(db).pending(job.environmentId, String(job.payload.deliveryId));
      if (!send) return { kind: 'gone' };
      if (!send.enabled) return { kind: 'disabled' };
      const body = bodyOf(send);
      const startedAt = clock.now();
      const started = performance.now();
      try {
        const answer = await sender.post(send.url, headersFor(send, body, startedAt), body);
        const ok = answer.status >= 200 && answer.status < 300;
        return { kind: 'attempted', send, startedAt, durationMs: Math.round(performance.now() - started), status: answer.status, body: answer.body, error: ok ? null : `HTTP ${answer.status}`, refused: false };
      } catch (err) {
        return { kind: 'attempted', send, startedAt, durationMs: Math.round(performance.now() - started), status: null, body: null, error: errorText(err), refused: err instanceof RefusedTarget };
      }
    },

    async settle(trx: Db, job: ClaimedJob, result: AttemptResult, now: Date): Promise<JobOutcome> {
      if (result.kind === 'gone') return { status: 'done' };
      const store = createDeliveryStore(trx);
      const { environmentId, deliveryId } = { environmentId: job.environmentId, deliveryId: String(job.payload.deliveryId) };
      if (result.kind === 'disabled') {
        await store.finish(environmentId, deliveryId, 'failed', now, 'endpoint disabled');
        metrics.webhookDeliveries.inc({ result: 'failed' });
        return { status: 'done' };
      }
      const { send, error } = result;
      await store.recordAttempt(environmentId, deliveryId, {
        startedAt: result.startedAt, durationMs: result.durationMs, responseStatus: result.status, responseBody: result.body, error,
      });
      if (error === null) {
        await store.finish(environmentId, deliveryId, 'succeeded', now);
        await store.endpointAnswered(environmentId, send.endpointId);
        metrics.webhookDeliveries.inc({ result: 'succeeded' });
        return { status: 'done' };
      }
      const disabled = await endpointFailed(trx, send, result.startedAt, now);
      // A refused target stays refused on a retry: it fails at once, with its reason.
      if (disabled || result.refused || job.attempts >= job.maxAttempts) {
        await store.finish(environmentId, deliveryId, 'failed', now);
        metrics.webhookDeliveries.inc({ result: 'failed' });
        return { status: 'failed', error };
      }
      const at = new Date(now.getTime() + retryDelayMs(job.attempts, options));
      await store.retryAt(environmentId, deliveryId, at);
      metrics.webhookDeliveries.inc({ result: 'retried' });
      return { status: 'retry', at, error };
    },
  };
}

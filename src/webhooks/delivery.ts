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
import { createDeliveryStore, type AttemptRecord, type DeliveryChange, type DeliveryToSend } from './delivery-store.js';
import { RefusedTarget } from '../platform/net/outbound.js';
import type { WebhookSender } from './target.js';

export const WEBHOOK_DELIVERY_JOB = 'webhook.deliver';

/** Attempts of one delivery before it is given up on: the trigger (migrations 0028 and 0032) queues each delivery's job with this many, written there as a literal (test/webhooks/deliveries-api.test.ts holds the two together). */
export const WEBHOOK_MAX_ATTEMPTS = 20;

export interface WebhookDeliveryOptions extends Backoff {
  /**
   * How long one endpoint's group of deliveries may keep sending before the rest is postponed to the next
   * claim: with one attempt's timeout on top, well within the job lease, so no other worker takes them meanwhile.
   */
  groupBudgetMs: number;
  /** An endpoint whose every attempt failed for this long is disabled (and the operator told). */
  disableAfterMs: number;
}

/**
 * Twenty attempts over about three days: after 10 s, 20 s, 40 s, ... doubling to 12 h, each with a random
 * half of jitter (so about 2 to 4 days in all). An endpoint failing for 5 days straight is disabled.
 */
export const WEBHOOK_DELIVERY_DEFAULTS: WebhookDeliveryOptions = {
  baseDelayMs: 10_000, maxDelayMs: 12 * 3_600_000, disableAfterMs: 5 * 24 * 3_600_000, groupBudgetMs: 20_000,
};

/** What one attempt came to, carried from the send (no transaction open) to its settlement. */
type AttemptResult =
  | { kind: 'gone' }
  | { kind: 'disabled'; send: DeliveryToSend }
  | { kind: 'postponed'; send: DeliveryToSend }
  | { kind: 'attempted'; send: DeliveryToSend; startedAt: Date; durationMs: number; status: number | null; body: string | null; error: string | null; refused: boolean };
type Attempted = Extract<AttemptResult, { kind: 'attempted' }>;

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
 * The job that sends deliveries (one event to one endpoint each), a claimed group of one endpoint's at a
 * time, one after another in the order they were queued: signed per Standard Webhooks with the
 * endpoint's secret, and during a rotation with the previous one too; `webhook-id` is the event's id on
 * every attempt, so a receiver drops a duplicate. A 2xx answer is success; anything else, a timeout or a
 * refused target is a failed attempt, retried with backoff until the last, after which the delivery
 * fails. After a failure the rest of the group is postponed to the failed one's retry, so a receiver that
 * is down costs one timeout per retry, not one per delivery. The group settles in one transaction.
 */
export function webhookDeliveryHandler({ db, clock, sealer, log, sender, metrics, options }: WebhookDeliveryDeps): ExternalJobHandler<AttemptResult> {
  /** `secrets` keeps each sealed secret opened once per group (by its bytes, in hex). */
  function headersFor(send: DeliveryToSend, secrets: Map<string, string>, body: string, at: Date): Record<string, string> {
    const sealed = [send.secretSealed];
    if (send.previousSecretSealed && send.previousSecretExpiresAt && send.previousSecretExpiresAt > at) sealed.push(send.previousSecretSealed);
    const signatures = sealed.map((one) => {
      const key = Buffer.from(one).toString('hex');
      if (!secrets.has(key)) secrets.set(key, sealer.open(one).toString('utf8'));
      return new Webhook(secrets.get(key)!).sign(send.eventId, at, body);
    });
    return { 'webhook-id': send.eventId, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signatures.join(' ') };
  }

  async function attempt(send: DeliveryToSend, secrets: Map<string, string>): Promise<Attempted> {
    const body = bodyOf(send);
    const startedAt = clock.now();
    const started = performance.now();
    const attempted = { kind: 'attempted', send, startedAt } as const;
    try {
      const answer = await sender.post(send.url, headersFor(send, secrets, body, startedAt), body);
      const ok = answer.status >= 200 && answer.status < 300;
      return { ...attempted, durationMs: Math.round(performance.now() - started), status: answer.status, body: answer.body, error: ok ? null : `HTTP ${answer.status}`, refused: false };
    } catch (err) {
      return { ...attempted, durationMs: Math.round(performance.now() - started), status: null, body: null, error: errorText(err), refused: err instanceof RefusedTarget };
    }
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

  /** The group's failed attempt, its job and its outcome: retried (with the time) or given up. */
  async function failure(trx: Db, job: ClaimedJob, result: Attempted, now: Date): Promise<{ outcome: JobOutcome; retryAt: Date | null }> {
    const disabled = await endpointFailed(trx, result.send, result.startedAt, now);
    // A refused target stays refused on a retry: it fails at once, with its reason.
    if (disabled || result.refused || job.attempts >= job.maxAttempts) return { outcome: { status: 'failed', error: result.error! }, retryAt: null };
    const at = new Date(now.getTime() + retryDelayMs(job.attempts, options));
    return { outcome: { status: 'retry', at, error: result.error! }, retryAt: at };
  }

  return {
    async perform(jobs: ClaimedJob[]): Promise<AttemptResult[]> {
      const sends = await createDeliveryStore(db).pending(jobs.map((job) => ({ environmentId: job.environmentId, deliveryId: String(job.payload.deliveryId) })));
      const byId = new Map(sends.map((send) => [send.deliveryId, send]));
      const secrets = new Map<string, string>();
      const results: AttemptResult[] = [];
      const deadline = performance.now() + options.groupBudgetMs;
      let failed = false;
      let sent = 0;
      for (const job of jobs) {
        const send = byId.get(String(job.payload.deliveryId));
        if (!send) results.push({ kind: 'gone' });
        else if (!send.enabled) results.push({ kind: 'disabled', send });
        else if (failed || (sent > 0 && performance.now() > deadline)) results.push({ kind: 'postponed', send });
        else {
          const result = await attempt(send, secrets);
          sent += 1;
          // A refused target is refused at once: it holds nothing up.
          failed = result.error !== null && !result.refused;
          results.push(result);
        }
      }
      return results;
    },

    async settle(trx: Db, jobs: ClaimedJob[], results: AttemptResult[], now: Date): Promise<JobOutcome[]> {
      const store = createDeliveryStore(trx);
      const outcomes: JobOutcome[] = [];
      const attempts: AttemptRecord[] = [];
      const changes: DeliveryChange[] = [];
      let postponeUntil = now;
      let answered = false;
      for (const [i, job] of jobs.entries()) {
        const result = results[i]!;
        if (result.kind === 'gone') { outcomes.push({ status: 'done' }); continue; }
        const { send } = result;
        if (result.kind === 'postponed') {
          changes.push({ ...identify(send), status: 'pending', attempts: send.attempts, nextAttemptAt: postponeUntil, responseStatus: null, error: null, finishedAt: null });
          outcomes.push({ status: 'postponed', at: postponeUntil });
          continue;
        }
        if (result.kind === 'disabled') {
          changes.push({ ...identify(send), status: 'failed', attempts: send.attempts, nextAttemptAt: null, responseStatus: null, error: 'endpoint disabled', finishedAt: now });
          metrics.webhookDeliveries.inc({ result: 'failed' });
          outcomes.push({ status: 'done' });
          continue;
        }
        const attempt = send.attempts + 1;
        attempts.push({ ...identify(send), attempt, startedAt: result.startedAt, durationMs: result.durationMs, responseStatus: result.status, responseBody: result.body, error: result.error });
        const change = { ...identify(send), attempts: attempt, responseStatus: result.status, error: result.error };
        if (result.error === null) {
          // Its first success clears the endpoint's failing streak (a failure after it starts a new one).
          if (!answered) await store.endpointAnswered(send.environmentId, send.endpointId);
          answered = true;
          changes.push({ ...change, status: 'succeeded', nextAttemptAt: null, finishedAt: now });
          metrics.webhookDeliveries.inc({ result: 'succeeded' });
          outcomes.push({ status: 'done' });
          continue;
        }
        const { outcome, retryAt } = await failure(trx, job, result, now);
        changes.push({ ...change, status: retryAt ? 'pending' : 'failed', nextAttemptAt: retryAt, finishedAt: retryAt ? null : now });
        metrics.webhookDeliveries.inc({ result: retryAt ? 'retried' : 'failed' });
        postponeUntil = retryAt ?? now;
        outcomes.push(outcome);
      }
      await store.recordAttempts(attempts);
      await store.change(changes);
      return outcomes;
    },
  };
}

const identify = (send: DeliveryToSend) => ({ environmentId: send.environmentId, deliveryId: send.deliveryId });

import { sql } from 'kysely';
import type { Db } from '../platform/db/database.js';
import type { JsonObject } from '../platform/json.js';

/** What one attempt of a delivery needs: the delivery, its endpoint and its event. */
export interface DeliveryToSend {
  environmentId: string; deliveryId: string; eventId: string; type: string; data: JsonObject; occurredAt: Date;
  endpointId: string; url: string; enabled: boolean;
  secretSealed: Buffer; previousSecretSealed: Buffer | null; previousSecretExpiresAt: Date | null;
}

export interface AttemptRecord {
  attempt: number; startedAt: Date; durationMs: number;
  responseStatus: number | null; responseBody: string | null; error: string | null;
}

export function createDeliveryStore(db: Db) {
  const delivery = (environmentId: string, id: string) =>
    db.updateTable('webhook_deliveries').where('environment_id', '=', environmentId).where('id', '=', id);
  return {
    /** The pending delivery with its endpoint and event; undefined once it is settled or gone (endpoint deleted). */
    pending: (environmentId: string, deliveryId: string) =>
      db.selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_endpoints as e', (join) => join.onRef('e.environment_id', '=', 'd.environment_id').onRef('e.id', '=', 'd.endpoint_id'))
        .innerJoin('webhook_events as v', (join) => join.onRef('v.environment_id', '=', 'd.environment_id').onRef('v.id', '=', 'd.event_id'))
        .where('d.environment_id', '=', environmentId).where('d.id', '=', deliveryId).where('d.status', '=', 'pending')
        .select([
          'd.environment_id as environmentId', 'd.id as deliveryId', 'v.id as eventId', 'v.type', 'v.data', 'v.occurred_at as occurredAt',
          'e.id as endpointId', 'e.url', 'e.enabled', 'e.secret_sealed as secretSealed', 'e.previous_secret_sealed as previousSecretSealed',
          'e.previous_secret_expires_at as previousSecretExpiresAt',
        ])
        .executeTakeFirst() as Promise<DeliveryToSend | undefined>,
    /** Records an attempt and answers its number (one more than the delivery's attempts so far). */
    async recordAttempt(environmentId: string, deliveryId: string, attempt: Omit<AttemptRecord, 'attempt'>): Promise<number> {
      const { attempts } = await delivery(environmentId, deliveryId).set((eb) => ({
        attempts: eb('attempts', '+', 1), last_response_status: attempt.responseStatus, last_error: attempt.error,
      })).returning('attempts').executeTakeFirstOrThrow();
      await db.insertInto('webhook_attempts').values({
        environment_id: environmentId, delivery_id: deliveryId, attempt: attempts, started_at: attempt.startedAt, duration_ms: attempt.durationMs,
        response_status: attempt.responseStatus, response_body: attempt.responseBody, error: attempt.error,
      }).execute();
      return attempts;
    },
    finish: (environmentId: string, deliveryId: string, status: 'succeeded' | 'failed', now: Date, error?: string) =>
      delivery(environmentId, deliveryId).set({ status, next_attempt_at: null, finished_at: now, ...(error !== undefined && { last_error: error }) })
        .execute().then(() => undefined),
    retryAt: (environmentId: string, deliveryId: string, at: Date) =>
      delivery(environmentId, deliveryId).set({ next_attempt_at: at }).execute().then(() => undefined),
    /** The endpoint answered: it is no longer failing. */
    endpointAnswered: (environmentId: string, endpointId: string) =>
      db.updateTable('webhook_endpoints').where('environment_id', '=', environmentId).where('id', '=', endpointId)
        .where('failing_since', 'is not', null).set({ failing_since: null }).execute().then(() => undefined),
    /**
     * The endpoint failed at `at`: it has been failing since its first failure after its last success.
     * Answers since when, so the caller can tell whether it has failed long enough to be disabled.
     */
    endpointFailed: (environmentId: string, endpointId: string, at: Date) =>
      db.updateTable('webhook_endpoints').where('environment_id', '=', environmentId).where('id', '=', endpointId)
        .set({ failing_since: sql<Date>`coalesce(failing_since, ${at}::timestamptz)` })
        .returning(['failing_since', 'enabled']).executeTakeFirst()
        .then((row) => (row ? { failingSince: row.failing_since!, enabled: row.enabled } : undefined)),
    /** Turns the endpoint off for failing; answers whether this call did (so it is reported once). */
    disableForFailing: (environmentId: string, endpointId: string, now: Date) =>
      db.updateTable('webhook_endpoints').where('environment_id', '=', environmentId).where('id', '=', endpointId).where('enabled', '=', true)
        .set({ enabled: false, disabled_reason: 'failing', updated_at: now }).returning('id').executeTakeFirst().then((row) => row !== undefined),
  };
}

import { sql } from 'kysely';
import { deleteInBatches } from '../platform/db/batches.js';
import type { Db } from '../platform/db/database.js';
import type { WebhookDeliveryStatus } from '../platform/db/tables.js';
import type { JsonObject } from '../platform/json.js';

/** What one attempt of a delivery needs: the delivery, its endpoint and its event. */
export interface DeliveryToSend {
  environmentId: string; deliveryId: string; attempts: number; eventId: string; type: string; data: JsonObject; occurredAt: Date;
  endpointId: string; url: string; enabled: boolean;
  secretSealed: Buffer; previousSecretSealed: Buffer | null; previousSecretExpiresAt: Date | null;
}

export interface AttemptRecord {
  environmentId: string; deliveryId: string; attempt: number; startedAt: Date; durationMs: number;
  responseStatus: number | null; responseBody: string | null; error: string | null;
}

/** A delivery's state after an attempt (or after being found with its endpoint disabled). */
export interface DeliveryChange {
  environmentId: string; deliveryId: string; status: WebhookDeliveryStatus; attempts: number;
  nextAttemptAt: Date | null; responseStatus: number | null; error: string | null; finishedAt: Date | null;
}

/** Rows as one jsonb parameter, read back with jsonb_to_recordset: one statement for a whole batch. */
const asJson = (rows: object[]) => JSON.stringify(rows);

export function createDeliveryStore(db: Db) {
  const endpoint = (environmentId: string, endpointId: string) =>
    db.updateTable('webhook_endpoints').where('environment_id', '=', environmentId).where('id', '=', endpointId);
  return {
    /** The pending deliveries among these, with their endpoint and event; a settled or deleted one is left out. */
    pending: (keys: { environmentId: string; deliveryId: string }[]) =>
      sql<DeliveryToSend>`
        select d.environment_id as "environmentId", d.id as "deliveryId", d.attempts, v.id as "eventId", v.type, v.data,
          v.occurred_at as "occurredAt", e.id as "endpointId", e.url, e.enabled, e.secret_sealed as "secretSealed",
          e.previous_secret_sealed as "previousSecretSealed", e.previous_secret_expires_at as "previousSecretExpiresAt"
        from jsonb_to_recordset(${asJson(keys)}::jsonb) as k("environmentId" uuid, "deliveryId" uuid)
        join webhook_deliveries d on d.environment_id = k."environmentId" and d.id = k."deliveryId" and d.status = 'pending'
        join webhook_endpoints e on e.environment_id = d.environment_id and e.id = d.endpoint_id
        join webhook_events v on v.environment_id = d.environment_id and v.id = d.event_id`.execute(db).then((r) => r.rows),
    recordAttempts: (attempts: AttemptRecord[]) =>
      attempts.length === 0 ? Promise.resolve() : db.insertInto('webhook_attempts').values(attempts.map((a) => ({
        environment_id: a.environmentId, delivery_id: a.deliveryId, attempt: a.attempt, started_at: a.startedAt, duration_ms: a.durationMs,
        response_status: a.responseStatus, response_body: a.responseBody, error: a.error,
      }))).execute().then(() => undefined),
    /**
   * Each delivery's new state, unless it was settled meanwhile (a delivery is only ever changed while
   * pending). A change without a new attempt (postponed) keeps the last attempt's answer and error.
   */
    change: (changes: DeliveryChange[]) =>
      changes.length === 0 ? Promise.resolve() : sql`
        update webhook_deliveries d set status = c.status, attempts = c.attempts, next_attempt_at = c."nextAttemptAt",
          last_response_status = coalesce(c."responseStatus", case when c.attempts > d.attempts then null else d.last_response_status end),
          last_error = case when c.attempts > d.attempts or c.status <> 'pending' then c.error else d.last_error end,
          finished_at = c."finishedAt"
        from jsonb_to_recordset(${asJson(changes)}::jsonb) as c("environmentId" uuid, "deliveryId" uuid, status text, attempts int,
          "nextAttemptAt" timestamptz, "responseStatus" int, error text, "finishedAt" timestamptz)
        where d.environment_id = c."environmentId" and d.id = c."deliveryId" and d.status = 'pending'`.execute(db).then(() => undefined),
    /** The endpoint answered: it is no longer failing. */
    endpointAnswered: (environmentId: string, endpointId: string) =>
      endpoint(environmentId, endpointId).where('failing_since', 'is not', null).set({ failing_since: null }).execute().then(() => undefined),
    /**
     * The endpoint failed at `at`: it has been failing since its first failure after its last success.
     * Answers since when, and whether it is still enabled.
     */
    endpointFailed: (environmentId: string, endpointId: string, at: Date) =>
      endpoint(environmentId, endpointId).set({ failing_since: sql<Date>`coalesce(failing_since, ${at}::timestamptz)` })
        .returning(['failing_since', 'enabled']).executeTakeFirst()
        .then((row) => (row ? { failingSince: row.failing_since!, enabled: row.enabled } : undefined)),
    /**
     * Housekeeping, in every environment: deliveries settled before the cut-off with their attempts, then
     * events older than it that no delivery names any more. A pending delivery, and its event, stay.
     */
    async pruneSettled(before: Date) {
      const settled = (alias: string) =>
        sql<boolean>`${sql.raw(alias)}.status <> 'pending' and ${sql.raw(alias)}.finished_at < ${before}::timestamptz`;
      const attempts = await deleteInBatches(db, 'webhook_attempts', sql<boolean>`exists (select from webhook_deliveries d
        where d.environment_id = webhook_attempts.environment_id and d.id = webhook_attempts.delivery_id and ${settled('d')})`);
      const deliveries = await deleteInBatches(db, 'webhook_deliveries', settled('webhook_deliveries'));
      const events = await deleteInBatches(db, 'webhook_events', sql<boolean>`occurred_at < ${before}::timestamptz and not exists (
        select from webhook_deliveries d where d.environment_id = webhook_events.environment_id and d.event_id = webhook_events.id)`);
      return attempts + deliveries + events;
    },
    /** Turns the endpoint off for failing; answers whether this call did (so it is reported once). */
    disableForFailing: (environmentId: string, endpointId: string, now: Date) =>
      endpoint(environmentId, endpointId).where('enabled', '=', true).set({ enabled: false, disabled_reason: 'failing', updated_at: now })
        .returning('id').executeTakeFirst().then((row) => row !== undefined),
  };
}

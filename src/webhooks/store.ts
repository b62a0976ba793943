import { sql, type Selectable } from 'kysely';
import type { Db } from '../platform/db/database.js';
import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from '../platform/db/tables.js';
import type { PageQuery } from '../platform/http/common-schemas.js';
import { toPage } from '../platform/http/pagination.js';
import type { WebhookAttempt, WebhookDelivery, WebhookDeliveryStatus, WebhookEndpoint } from './schemas.js';

export interface NewWebhookEndpoint {
  id: string; url: string; description: string | null; eventTypes: string[] | null; enabled: boolean; secretSealed: Buffer;
}

/** What a PATCH sets; absent fields stay. */
export interface WebhookEndpointChanges { url?: string; description?: string | null; eventTypes?: string[] | null; enabled?: boolean }

/** A delivery as a retry reads it: its state, its job and whether its endpoint is enabled. */
export interface DeliveryForRetry { id: string; endpointId: string; status: WebhookDeliveryStatus; jobId: string; endpointEnabled: boolean }

type DeliveryListRow = Selectable<WebhookDeliveryRow> & { type: string };

export function createWebhooksStore(db: Db) {
  const endpoints = (environmentId: string) => db.selectFrom('webhook_endpoints').where('environment_id', '=', environmentId);
  const endpointById = (environmentId: string, id: string) =>
    db.updateTable('webhook_endpoints').where('environment_id', '=', environmentId).where('id', '=', id);
  return {
    /** Serialises endpoint creation in the environment until the transaction ends (the endpoint limit). */
    lockEndpoints: (environmentId: string) =>
      sql`select pg_advisory_xact_lock(hashtextextended(${`webhook-endpoints:${environmentId}`}, 0))`.execute(db).then(() => undefined),
    countEndpoints: (environmentId: string) =>
      endpoints(environmentId).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow().then((row) => Number(row.n)),
    insertEndpoint: (environmentId: string, endpoint: NewWebhookEndpoint, now: Date) =>
      db.insertInto('webhook_endpoints').values({
        environment_id: environmentId, id: endpoint.id, url: endpoint.url, description: endpoint.description, event_types: endpoint.eventTypes,
        enabled: endpoint.enabled, disabled_reason: endpoint.enabled ? null : 'manual', secret_sealed: endpoint.secretSealed,
        created_at: now, updated_at: now,
      }).returningAll().executeTakeFirstOrThrow().then(toEndpoint),
    findEndpoint: (environmentId: string, id: string) =>
      endpoints(environmentId).selectAll().where('id', '=', id).executeTakeFirst().then((row) => row && toEndpoint(row)),
    /** The environment's endpoints in creation order. */
    async listEndpoints(environmentId: string, page: PageQuery) {
      let query = endpoints(environmentId).selectAll();
      if (page.cursor) query = query.where('id', '>', page.cursor);
      const rows = await query.orderBy('id').limit(page.limit + 1).execute();
      return toPage(rows.map(toEndpoint), page.limit);
    },
    /**
     * Applies the changes; turning it off records why (`manual`), turning it on clears why and since when
     * it was failing. Undefined when no such endpoint.
     */
    updateEndpoint: (environmentId: string, id: string, changes: WebhookEndpointChanges, now: Date) =>
      endpointById(environmentId, id).set({
        ...(changes.url !== undefined && { url: changes.url }),
        ...(changes.description !== undefined && { description: changes.description }),
        ...(changes.eventTypes !== undefined && { event_types: changes.eventTypes }),
        ...(changes.enabled === false && { enabled: false, disabled_reason: 'manual' }),
        ...(changes.enabled === true && { enabled: true, disabled_reason: null, failing_since: null }),
        updated_at: now,
      }).returningAll().executeTakeFirst().then((row) => row && toEndpoint(row)),
    /** The new secret signs from now on; the one it replaces also signs until `previousExpiresAt`. */
    rotateSecret: (environmentId: string, id: string, secretSealed: Buffer, previousExpiresAt: Date, now: Date) =>
      endpointById(environmentId, id).set({
        previous_secret_sealed: sql<Buffer>`secret_sealed`, previous_secret_expires_at: previousExpiresAt, secret_sealed: secretSealed, updated_at: now,
      }).returningAll().executeTakeFirst().then((row) => row && toEndpoint(row)),
    /** The endpoint with its deliveries and their attempts; false when no such endpoint. */
    async deleteEndpoint(environmentId: string, id: string): Promise<boolean> {
      const deleted = await db.deleteFrom('webhook_endpoints').where('environment_id', '=', environmentId).where('id', '=', id)
        .returning('id').executeTakeFirst();
      if (!deleted) return false;
      await db.deleteFrom('webhook_attempts').where('environment_id', '=', environmentId)
        .where('delivery_id', 'in', (eb) => eb.selectFrom('webhook_deliveries').select('id')
          .where('environment_id', '=', environmentId).where('endpoint_id', '=', id))
        .execute();
      await db.deleteFrom('webhook_deliveries').where('environment_id', '=', environmentId).where('endpoint_id', '=', id).execute();
      return true;
    },
    /** An endpoint's deliveries, newest first, each with its attempts (oldest first) read in one more query for the page. */
    async listDeliveries(environmentId: string, endpointId: string, filter: { status?: WebhookDeliveryStatus }, page: PageQuery) {
      let query = db.selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_events as e', (join) => join.onRef('e.environment_id', '=', 'd.environment_id').onRef('e.id', '=', 'd.event_id'))
        .selectAll('d').select('e.type')
        .where('d.environment_id', '=', environmentId).where('d.endpoint_id', '=', endpointId);
      if (filter.status) query = query.where('d.status', '=', filter.status);
      if (page.cursor) query = query.where('d.id', '<', page.cursor);
      const rows: DeliveryListRow[] = await query.orderBy('d.id', 'desc').limit(page.limit + 1).execute();
      const listed = rows.slice(0, page.limit);
      const attempts = listed.length === 0 ? [] : await db.selectFrom('webhook_attempts').selectAll()
        .where('environment_id', '=', environmentId).where('delivery_id', 'in', listed.map((row) => row.id))
        .orderBy('delivery_id').orderBy('attempt').execute();
      const byDelivery = new Map<string, Selectable<WebhookAttemptRow>[]>();
      for (const attempt of attempts) byDelivery.set(attempt.delivery_id, [...(byDelivery.get(attempt.delivery_id) ?? []), attempt]);
      return toPage(rows.map((row) => toDelivery(row, byDelivery.get(row.id) ?? [])), page.limit);
    },
    /** The delivery locked until the transaction ends, with its endpoint's state; undefined when no such delivery. */
    lockDeliveryForRetry: (environmentId: string, id: string) =>
      db.selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_endpoints as w', (join) => join.onRef('w.environment_id', '=', 'd.environment_id').onRef('w.id', '=', 'd.endpoint_id'))
        .select(['d.id', 'd.endpoint_id', 'd.status', 'd.job_id', 'w.enabled'])
        .where('d.environment_id', '=', environmentId).where('d.id', '=', id)
        .forUpdate('d').executeTakeFirst()
        .then((row): DeliveryForRetry | undefined => row && { id: row.id, endpointId: row.endpoint_id, status: row.status, jobId: row.job_id, endpointEnabled: row.enabled }),
    /** The delivery pending again, due now, run by `jobId`; a finished one's end is cleared. */
    markPending: (environmentId: string, id: string, jobId: string, now: Date) =>
      db.updateTable('webhook_deliveries').where('environment_id', '=', environmentId).where('id', '=', id)
        .set({ status: 'pending', next_attempt_at: now, job_id: jobId, finished_at: null }).execute().then(() => undefined),
  };
}
export type WebhooksStore = ReturnType<typeof createWebhooksStore>;

const toEndpoint = (row: Selectable<WebhookEndpointRow>): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  description: row.description,
  eventTypes: row.event_types,
  enabled: row.enabled,
  disabledReason: row.disabled_reason,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

const toAttempt = (row: Selectable<WebhookAttemptRow>): WebhookAttempt => ({
  attempt: row.attempt,
  startedAt: row.started_at.toISOString(),
  durationMs: row.duration_ms,
  responseStatus: row.response_status,
  responseBody: row.response_body,
  error: row.error,
});

const toDelivery = (row: DeliveryListRow, attempts: Selectable<WebhookAttemptRow>[]): WebhookDelivery => ({
  id: row.id,
  eventId: row.event_id,
  endpointId: row.endpoint_id,
  type: row.type,
  status: row.status,
  responseStatus: row.last_response_status,
  attempt: row.attempts,
  nextAttemptAt: row.status === 'pending' && row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
  lastError: row.last_error,
  createdAt: row.created_at.toISOString(),
  finishedAt: row.finished_at?.toISOString() ?? null,
  attempts: attempts.map(toAttempt),
});

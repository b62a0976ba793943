import { sql, type RawBuilder, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { deleteBatch, deleteInBatches } from '../platform/db/batches.js';
import { inTransaction, jsonb, preparedAs, type Db } from '../platform/db/database.js';
import type { Cte, CteChain } from '../platform/db/cte.js';
import type { AuditEventRow } from '../platform/db/tables.js';
import { toPage } from '../platform/http/pagination.js';
import type { PageQuery } from '../platform/http/common-schemas.js';
import type { JsonObject } from '../platform/json.js';
import type { AuditEvent, AuditEventFeed, AuditEventFilter, SearchOrder } from './schemas.js';

/*
 * Where a stored row goes next, though nothing here imports it: every insert into audit_events fires the webhook
 * trigger (migrations/0028_webhooks.sql, replaced in 0032_webhook_trigger_early_exit.sql), which maps the action
 * through webhook_event_sources to an event type and enqueues one `webhook.deliver` job per enabled endpoint in
 * the same transaction (docs/architecture.md, "The webhook leg"). An action that should reach webhooks gets its
 * row in webhook_event_sources (a migration) and its type in src/webhooks/catalogue.ts.
 */

/** An event as it will be stored, before it has an id and a sequence. */
export interface NewAuditEvent {
  action: string; result: string; occurredAt: Date; recordedAt: Date;
  actor: { type: string; id: string | null; impersonatorId: string | null };
  targets: { type: string; id: string | null }[];
  context: { ipAddress: string | null; userAgent: string | null };
  producer: JsonObject; metadata: JsonObject; schemaVersion: number; correlationId: string | null;
}

export interface IdempotencyRecord { requestHash: Buffer; event: AuditEvent }

/**
 * The columns of a new event, in insert order; `sequence` is the CTE `s` below. The sequence comes from
 * the environment's counter row, whose lock (held until commit) makes events commit in sequence order.
 */
function eventValues(environmentId: string, id: string, e: NewAuditEvent) {
  return sql`${environmentId}::uuid, ${id}::uuid, s.last_sequence, ${e.action}, ${e.result}, ${e.occurredAt}::timestamptz,
    ${e.recordedAt}::timestamptz, ${e.actor.type}, ${e.actor.id}::uuid, ${e.actor.impersonatorId}::uuid, ${jsonb(e.targets)}::jsonb,
    ${e.context.ipAddress}, ${e.context.userAgent}, ${jsonb(e.producer)}::jsonb, ${jsonb(e.metadata)}::jsonb,
    ${e.schemaVersion}::integer, ${e.correlationId}::uuid`;
}

const COLUMN_NAMES = ['environment_id', 'id', 'sequence', 'action', 'result', 'occurred_at', 'recorded_at', 'actor_type', 'actor_id',
  'actor_impersonator_id', 'targets', 'ip_address', 'user_agent', 'producer', 'metadata', 'schema_version', 'correlation_id'];
const EVENT_COLUMNS = sql.raw(COLUMN_NAMES.join(', '));

/** Takes the environment's next sequence number (creating its counter at 1) and locks the counter row. */
const nextSequence = (environmentId: string) => sql`
  insert into audit_sequences (environment_id, last_sequence) values (${environmentId}::uuid, 1)
  on conflict (environment_id) do update set last_sequence = audit_sequences.last_sequence + 1
  returning last_sequence`;

/**
 * An event of the service's own trail as two CTEs of the caller's statement, stored once for each row
 * of `after` (none: no event), committing with it.
 */
export function addOwnEventAfter(chain: CteChain, after: Cte<unknown>, environmentId: string, event: NewAuditEvent) {
  const sequence = chain.add('audit_sequence', sql`
    insert into audit_sequences (environment_id, last_sequence) select ${environmentId}::uuid, 1 from ${after.from}
    on conflict (environment_id) do update set last_sequence = audit_sequences.last_sequence + 1
    returning last_sequence`);
  return chain.add('audit_event', sql`
    insert into audit_events (${EVENT_COLUMNS}) select ${eventValues(environmentId, uuidv7(), event)} from ${sequence.from} s
    returning id`);
}

export function createAuditStore(db: Db) {
  return {
    /**
     * Counts the attempt, inserts the idempotency key, takes the next sequence and inserts the event, in
     * ONE statement: the four commit together (or not at all) in one round trip, with nothing in between
     * while the counter rows are locked. Each step runs only when the one before it produced a row:
     * a full rate-limit window stores nothing (`count` undefined), and a key that already exists (or is
     * being inserted by a concurrent append, which this waits for) stores no event (`event` undefined;
     * the caller reads the existing record).
     */
    insertCounted: async (environmentId: string, hit: RawBuilder<{ count: number }>, key: string, requestHash: Buffer, event: NewAuditEvent) => {
      const id = uuidv7();
      const { rows } = await sql<{ attempt_count: number; sequence: number | null; metadata: JsonObject | null }>`${preparedAs('audit_append')}
        with rl as (${hit}), k as (
          insert into audit_idempotency_keys (environment_id, idempotency_key, request_hash, event_id, created_at)
          select ${environmentId}::uuid, ${key}, ${requestHash}, ${id}::uuid, ${event.recordedAt}::timestamptz from rl
          on conflict (environment_id, idempotency_key) do nothing
          returning environment_id
        ), s as (
          insert into audit_sequences (environment_id, last_sequence) select environment_id, 1 from k
          on conflict (environment_id) do update set last_sequence = audit_sequences.last_sequence + 1
          returning last_sequence
        ), e as (
          insert into audit_events (${EVENT_COLUMNS}) select ${eventValues(environmentId, id, event)} from s
          returning sequence, metadata
        )
        select rl.count as attempt_count, e.sequence, e.metadata from rl left join e on true`.execute(db);
      const row = rows[0];
      // The event is what was inserted; only the number and the metadata come back (metadata as jsonb
      // orders its keys, so this answer and every later read or replay of it are the same bytes).
      const stored = row?.sequence == null ? undefined : toAuditEvent({
        environment_id: environmentId, id, sequence: row.sequence, action: event.action, result: event.result,
        occurred_at: event.occurredAt, recorded_at: event.recordedAt, actor_type: event.actor.type, actor_id: event.actor.id,
        actor_impersonator_id: event.actor.impersonatorId, targets: event.targets, ip_address: event.context.ipAddress,
        user_agent: event.context.userAgent, producer: event.producer, metadata: row.metadata ?? {}, schema_version: event.schemaVersion,
        correlation_id: event.correlationId,
      });
      return { count: row?.attempt_count, event: stored };
    },
    /** An event without an idempotency key (the service's own trail), inside the caller's transaction. */
    insert: (environmentId: string, event: NewAuditEvent) =>
      sql<Selectable<AuditEventRow>>`
        with s as (${nextSequence(environmentId)})
        insert into audit_events (${EVENT_COLUMNS}) select ${eventValues(environmentId, uuidv7(), event)} from s
        returning *`.execute(db).then((r) => toAuditEvent(r.rows[0])),
    /** What a key stored: the request's hash and the event it appended, in one read. */
    findIdempotencyRecord: (environmentId: string, key: string) =>
      db.selectFrom('audit_idempotency_keys as k')
        .innerJoin('audit_events as e', (join) => join.onRef('e.environment_id', '=', 'k.environment_id').onRef('e.id', '=', 'k.event_id'))
        .selectAll('e').select('k.request_hash')
        .where('k.environment_id', '=', environmentId).where('k.idempotency_key', '=', key)
        .executeTakeFirst()
        .then((row): IdempotencyRecord | undefined => row && { requestHash: Buffer.from(row.request_hash), event: toAuditEvent(row) }),
    find: (environmentId: string, eventId: string) =>
      db.selectFrom('audit_events').selectAll().where('environment_id', '=', environmentId).where('id', '=', eventId)
        .executeTakeFirst().then((row) => row && toAuditEvent(row)),
    async list(environmentId: string, filter: AuditEventFilter, page: PageQuery, order: SearchOrder = 'asc') {
      let q = db.selectFrom('audit_events').selectAll().where('environment_id', '=', environmentId);
      if (filter.action !== undefined) q = q.where('action', '=', filter.action);
      if (filter.result !== undefined) q = q.where('result', '=', filter.result);
      if (filter.actorId !== undefined) q = q.where('actor_id', '=', filter.actorId);
      if (filter.correlationId !== undefined) q = q.where('correlation_id', '=', filter.correlationId);
      if (filter.occurredAfter !== undefined) q = q.where('occurred_at', '>=', new Date(filter.occurredAfter));
      if (filter.occurredBefore !== undefined) q = q.where('occurred_at', '<', new Date(filter.occurredBefore));
      if (filter.targetType !== undefined || filter.targetId !== undefined) {
        const target = { ...(filter.targetType !== undefined && { type: filter.targetType }), ...(filter.targetId !== undefined && { id: filter.targetId }) };
        q = q.where(sql<boolean>`targets @> ${jsonb([target])}::jsonb`);
      }
      if (page.cursor) q = q.where('id', order === 'asc' ? '>' : '<', page.cursor);
      const rows = await q.orderBy('id', order).limit(page.limit + 1).execute();
      return toPage(rows.map(toAuditEvent), page.limit);
    },
    /** Events after a sequence number, in sequence order: visible ones always form a gap-free prefix. */
    async listAfterSequence(environmentId: string, afterSequence: number, limit: number): Promise<AuditEventFeed> {
      const rows = await db.selectFrom('audit_events').selectAll()
        .where('environment_id', '=', environmentId).where('sequence', '>', afterSequence)
        .orderBy('sequence').limit(limit + 1).execute();
      const items = rows.slice(0, limit).map(toAuditEvent);
      return { items, nextAfterSequence: items.at(-1)?.sequence ?? afterSequence, hasMore: rows.length > limit };
    },
    /**
     * Retention: deletes up to `limit` events of the environment both recorded and occurred before the
     * cut-off. The append-only trigger lets a DELETE through only for the environment and cut-off this
     * transaction names first, so no other statement can remove an event.
     */
    deleteEventsBefore: (environmentId: string, cutoff: Date, limit: number) =>
      inTransaction(db, async (trx) => {
        await sql`select set_config('gatehouse.audit_retention_environment', ${environmentId}, true),
                         set_config('gatehouse.audit_retention_before', ${cutoff.toISOString()}, true)`.execute(trx);
        return deleteBatch(trx, 'audit_events', sql<boolean>`environment_id = ${environmentId}::uuid
          and occurred_at < ${cutoff}::timestamptz and recorded_at < ${cutoff}::timestamptz`, limit);
      }),
    /**
     * Erasure: nulls the IP address and user agent of the service's own events that name the user (as actor
     * or target). The append-only trigger lets this UPDATE through only for the environment and user this
     * transaction names first, only on own-trail events, and only for those two columns.
     */
    async scrubOwnEventsOf(environmentId: string, userId: string): Promise<number> {
      await sql`select set_config('gatehouse.audit_erasure_environment', ${environmentId}, true),
                       set_config('gatehouse.audit_erasure_user', ${userId}, true)`.execute(db);
      const result = await sql`update audit_events set ip_address = null, user_agent = null
        where environment_id = ${environmentId}::uuid and producer ->> 'type' = 'gatehouse'
          and (actor_id = ${userId}::uuid or targets @> ${jsonb([{ type: 'user', id: userId }])}::jsonb)
          and (ip_address is not null or user_agent is not null)`.execute(db);
      return Number(result.numAffectedRows ?? 0);
    },
    /** Keys older than the cutoff, across environments (maintenance). */
    deleteIdempotencyKeysBefore: (cutoff: Date) =>
      deleteInBatches(db, 'audit_idempotency_keys', sql<boolean>`created_at < ${cutoff}::timestamptz`),
  };
}
export type AuditStore = ReturnType<typeof createAuditStore>;

const toAuditEvent = (row: Selectable<AuditEventRow>): AuditEvent => ({
  id: row.id,
  environmentId: row.environment_id,
  sequence: row.sequence,
  action: row.action,
  result: row.result,
  occurredAt: row.occurred_at.toISOString(),
  recordedAt: row.recorded_at.toISOString(),
  actor: { type: row.actor_type, id: row.actor_id, impersonatorId: row.actor_impersonator_id },
  targets: row.targets,
  context: { ipAddress: row.ip_address, userAgent: row.user_agent },
  producer: row.producer as AuditEvent['producer'],
  metadata: row.metadata,
  schemaVersion: row.schema_version,
  correlationId: row.correlation_id,
});

import { sql, type Selectable } from 'kysely';
import { untilDone } from '../platform/db/batches.js';
import { jsonb, type Db } from '../platform/db/database.js';
import type { DataRequestRow } from '../platform/db/tables.js';
import type { PageQuery } from '../platform/http/common-schemas.js';
import { toPage } from '../platform/http/pagination.js';
import type { JsonObject } from '../platform/json.js';
import type { DataRequest, DataRequestFilter, DataRequestStatus, DataRequestType } from './schemas.js';

export interface NewDataRequest {
  id: string; userId: string; type: DataRequestType; status: DataRequestStatus; requestedBy: JsonObject;
  completesAt: Date | null; jobId: string;
}

/** An export's archive as kept, with what decides whether it can be downloaded. */
export interface StoredArchive { request: DataRequest; archive: JsonObject | null }

const ARCHIVE_SWEEP_BATCH = 1_000;

export function createDataRequestsStore(db: Db) {
  const rows = (environmentId: string) => db.selectFrom('data_requests').where('environment_id', '=', environmentId);
  const byId = (environmentId: string, id: string) =>
    db.updateTable('data_requests').where('environment_id', '=', environmentId).where('id', '=', id);
  // Every column but the archive, which only a download reads.
  const listed = ['environment_id', 'id', 'user_id', 'type', 'status', 'requested_by', 'created_at', 'updated_at', 'completes_at', 'ready_at',
    'expires_at', 'completed_at', 'cancelled_at', 'cancel_reason', 'job_id'] as const;
  return {
    /** Undefined when the user has a request of this type in flight already (the partial unique key). */
    insert: (environmentId: string, request: NewDataRequest, now: Date) =>
      sql<Selectable<DataRequestRow>>`
        insert into data_requests (environment_id, id, user_id, type, status, requested_by, created_at, updated_at, completes_at, job_id)
        values (${environmentId}::uuid, ${request.id}::uuid, ${request.userId}::uuid, ${request.type}, ${request.status},
          ${jsonb(request.requestedBy)}::jsonb, ${now}::timestamptz, ${now}::timestamptz, ${request.completesAt}::timestamptz, ${request.jobId}::uuid)
        on conflict (environment_id, user_id, type) where status in ('pending', 'scheduled') do nothing
        returning *`.execute(db).then((r) => r.rows[0] && toDataRequest(r.rows[0], now)),
    find: (environmentId: string, id: string, now: Date) =>
      rows(environmentId).select(listed).where('id', '=', id).executeTakeFirst().then((row) => row && toDataRequest(row, now)),
    /** The request with its archive, when it is the user's (undefined otherwise). */
    findWithArchive: (environmentId: string, userId: string, id: string, now: Date) =>
      rows(environmentId).selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst()
        .then((row): StoredArchive | undefined => row && { request: toDataRequest(row, now), archive: row.archive }),
    /** The request locked until the transaction ends, only while it has the status its job expects. */
    lockInStatus: (environmentId: string, id: string, status: DataRequestStatus) =>
      rows(environmentId).select(listed).where('id', '=', id).where('status', '=', status).forUpdate().executeTakeFirst()
        .then((row) => row && { id: row.id, userId: row.user_id, type: row.type }),
    /** The user's requests, newest first. */
    async listForUser(environmentId: string, userId: string, page: PageQuery, now: Date) {
      let query = rows(environmentId).select(listed).where('user_id', '=', userId);
      if (page.cursor) query = query.where('id', '<', page.cursor);
      const found = await query.orderBy('id', 'desc').limit(page.limit + 1).execute();
      return toPage(found.map((row) => toDataRequest(row, now)), page.limit);
    },
    /** The environment's requests in creation order, filtered; an export past its link reads as completed. */
    async list(environmentId: string, filter: DataRequestFilter, page: PageQuery, now: Date) {
      let query = rows(environmentId).select(listed);
      if (filter.userId) query = query.where('user_id', '=', filter.userId);
      if (filter.type) query = query.where('type', '=', filter.type);
      if (filter.status === 'ready') query = query.where('status', '=', 'ready').where('expires_at', '>', now);
      else if (filter.status === 'completed') {
        query = query.where((eb) => eb.or([eb('status', '=', 'completed'), eb.and([eb('status', '=', 'ready'), eb('expires_at', '<=', now)])]));
      } else if (filter.status) query = query.where('status', '=', filter.status);
      if (page.cursor) query = query.where('id', '>', page.cursor);
      const found = await query.orderBy('id').limit(page.limit + 1).execute();
      return toPage(found.map((row) => toDataRequest(row, now)), page.limit);
    },
    markReady: (environmentId: string, id: string, archive: JsonObject, now: Date, expiresAt: Date) =>
      byId(environmentId, id).where('status', '=', 'pending')
        .set({ status: 'ready', archive: jsonb(archive), ready_at: now, expires_at: expiresAt, updated_at: now }).execute().then(() => undefined),
    markCompleted: (environmentId: string, id: string, now: Date) =>
      byId(environmentId, id).where('status', '=', 'scheduled')
        .set({ status: 'completed', completed_at: now, updated_at: now }).execute().then(() => undefined),
    /** Cancels a scheduled erasure (of this user, when given); undefined when none matched. */
    cancel: (environmentId: string, id: string, userId: string | undefined, reason: string, now: Date) => {
      let query = byId(environmentId, id).where('type', '=', 'erasure').where('status', '=', 'scheduled');
      if (userId) query = query.where('user_id', '=', userId);
      return query.set({ status: 'cancelled', cancelled_at: now, cancel_reason: reason, updated_at: now })
        .returning(listed).executeTakeFirst().then((row) => row && toDataRequest(row, now));
    },
    /** Erasure: the user's export archives still kept are deleted, and their exports stored as completed. */
    dropArchivesOf: (environmentId: string, userId: string, now: Date) =>
      db.updateTable('data_requests').where('environment_id', '=', environmentId).where('user_id', '=', userId).where('archive', 'is not', null)
        .set((eb) => ({ archive: null, status: 'completed', completed_at: eb.fn.coalesce('completed_at', eb.val(now)), expires_at: now, updated_at: now }))
        .executeTakeFirst().then((r) => Number(r.numUpdatedRows)),
    /**
     * Housekeeping, in every environment: the archives whose link expired are deleted and their exports
     * stored as completed (they read so already), a batch at a time.
     */
    expireArchives: (now: Date) => untilDone(() => sql`
      update data_requests d set archive = null, status = 'completed', completed_at = d.expires_at, updated_at = ${now}::timestamptz
      where (d.environment_id, d.id) in (
        select environment_id, id from data_requests where archive is not null and expires_at <= ${now}::timestamptz limit ${ARCHIVE_SWEEP_BATCH})`
      .execute(db).then((r) => Number(r.numAffectedRows ?? 0)), ARCHIVE_SWEEP_BATCH),
  };
}
export type DataRequestsStore = ReturnType<typeof createDataRequestsStore>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The request as the wire shows it: a ready export past its link reads as completed at once, swept or not. */
export function toDataRequest(row: Omit<Selectable<DataRequestRow>, 'archive'>, now: Date): DataRequest {
  const expired = row.status === 'ready' && row.expires_at !== null && row.expires_at <= now;
  const requestedBy = row.requested_by as { type: string; id: string | null };
  return {
    id: row.id, userId: row.user_id, type: row.type, status: expired ? 'completed' : row.status,
    requestedBy: { type: requestedBy.type, id: requestedBy.id },
    createdAt: row.created_at.toISOString(), completesAt: iso(row.completes_at), readyAt: iso(row.ready_at), expiresAt: iso(row.expires_at),
    completedAt: expired ? iso(row.expires_at) : iso(row.completed_at), cancelledAt: iso(row.cancelled_at), cancelReason: row.cancel_reason,
  };
}

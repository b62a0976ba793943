import { uuidv7 } from 'uuidv7';
import { recordOwnEvent } from '../audit/service.js';
import { environmentIn, type EnvironmentsService } from '../environments/service.js';
import { systemCaller, type Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { PageQuery } from '../platform/http/common-schemas.js';
import type { JsonObject } from '../platform/json.js';
import { DAY_MS } from '../platform/maintenance.js';
import { pickLocale } from '../platform/i18n/locale.js';
import type { Mailer } from '../platform/mail/mailer.js';
import { composeMail, mailTime } from '../platform/mail/render.js';
import { hostedAccountDataUrl, mailBrand } from '../environments/settings.js';
import { enqueueJob, type ClaimedJob } from '../platform/jobs/queue.js';
import type { JobHandler } from '../platform/jobs/worker.js';
import { lastOwnedOrganizations, lockExistingUser, refuseLastOwner } from '../users/accounts.js';
import { eraseUser } from './erasure.js';
import {
  dataRequestInProgress, dataRequestNotFound, exportExpired, exportNotReady, graceDaysForErasureOnly, notCancellable,
} from './errors.js';
import { gatherSections } from './export.js';
import type { DataExportArchive, DataRequest, DataRequestFilter, StartDataRequestBody } from './schemas.js';
import { createDataRequestsStore } from './store.js';

/** How long an export's archive can be downloaded once it is ready; housekeeping deletes it after. */
export const EXPORT_LINK_DAYS = 7;
export const ARCHIVE_FORMAT = 'gatehouse.data-export.v1';

/** The kinds of job this domain queues (platform/jobs); their handlers are jobHandlers below. */
export const DATA_REQUEST_JOBS = { export: 'data_request.export', erasure: 'data_request.erasure' } as const;

/** The user section of an archive, as far as the ready mail needs it. */
interface ExportedUser { email: string | null; locale: string | null }

export interface DataRequestsDeps {
  db: Db; clock: Clock; mailer: Pick<Mailer, 'send'>;
  environments: Pick<EnvironmentsService, 'record'>;
  /** Tells this process's job worker to look now (other processes hear the NOTIFY at commit). */
  wakeJobs(): void;
}

const JOB_CALLER = systemCaller('job');

const requestTargets = (userId: string, requestId: string) => [{ type: 'user', id: userId }, { type: 'data_request', id: requestId }];

export function createDataRequestsService({ db, clock, environments, mailer, wakeJobs }: DataRequestsDeps) {
  const store = createDataRequestsStore(db);

  const record = (trx: Db, environmentId: string, action: string, userId: string, requestId: string, by: Caller, metadata: JsonObject) =>
    recordOwnEvent(trx, environmentId, { action, ...by, targets: requestTargets(userId, requestId), metadata }, clock.now());

  /**
   * Tells the user their export is ready, in their language, in the job's transaction (so the mail exists
   * if and only if the archive does); the link opens the hosted data page while the hosted pages are on.
   */
  async function mailExportReady(trx: Db, environmentId: string, user: ExportedUser | null, expiresAt: Date) {
    if (!user?.email) return;
    const env = await environmentIn(trx, environmentId);
    const locale = pickLocale({ user: user.locale });
    const page = hostedAccountDataUrl(env);
    await mailer.send(environmentId, composeMail({
      to: user.email, kind: 'dataExportReady', locale, brand: mailBrand(env), values: { expires: mailTime(expiresAt, locale) },
      ...(page && { action: { label: 'mail.dataExportReady.action', href: page } }),
    }), trx);
  }

  /** Export: gathers every section in the job's transaction and keeps the archive for EXPORT_LINK_DAYS. */
  const runExport: JobHandler = async (trx, job: ClaimedJob) => {
    const { environmentId } = job;
    const requests = createDataRequestsStore(trx);
    const request = await requests.lockInStatus(environmentId, String(job.payload.requestId), 'pending');
    if (!request) return;
    const now = clock.now();
    const archive: DataExportArchive = {
      format: ARCHIVE_FORMAT, requestId: request.id, userId: request.userId, environmentId, generatedAt: now.toISOString(),
      sections: await gatherSections(trx, environmentId, request.userId),
    };
    const expiresAt = new Date(now.getTime() + EXPORT_LINK_DAYS * DAY_MS);
    await requests.markReady(environmentId, request.id, archive as unknown as JsonObject, now, expiresAt);
    await mailExportReady(trx, environmentId, archive.sections.user as ExportedUser | null, expiresAt);
    await record(trx, environmentId, 'data_request.completed', request.userId, request.id, JOB_CALLER, { type: 'export' });
  };

  /**
   * Erasure, once its grace period is over: nothing when the request is no longer scheduled (cancelled),
   * checked under the request's row lock, so a cancel and the run never both take effect. A user who has
   * become the only active owner of an organization meanwhile is not erased: the request is cancelled
   * with reason last_owner (an organization nobody can manage is the greater harm; the operator sees it).
   */
  const runErasure: JobHandler = async (trx, job: ClaimedJob) => {
    const { environmentId } = job;
    const requests = createDataRequestsStore(trx);
    const request = await requests.lockInStatus(environmentId, String(job.payload.requestId), 'scheduled');
    if (!request) return;
    const now = clock.now();
    // The user before the organizations, the order a ban or a delete takes them in, so neither deadlocks with this.
    await lockExistingUser(trx, environmentId, request.userId);
    const organizationIds = await lastOwnedOrganizations(trx, environmentId, request.userId);
    if (organizationIds.length > 0) {
      await requests.cancel(environmentId, request.id, undefined, 'last_owner', now);
      await record(trx, environmentId, 'data_request.cancelled', request.userId, request.id, JOB_CALLER, { type: 'erasure', reason: 'last_owner', organizationIds });
      return;
    }
    const removed = await eraseUser(trx, environmentId, request.userId, now);
    await requests.markCompleted(environmentId, request.id, now);
    await recordOwnEvent(trx, environmentId, {
      action: 'user.erased', ...JOB_CALLER, targets: requestTargets(request.userId, request.id), metadata: { removed },
    }, now);
    await record(trx, environmentId, 'data_request.completed', request.userId, request.id, JOB_CALLER, { type: 'erasure' });
  };

  return {
    /**
     * Starts an export (run at once by a job) or an erasure (scheduled after the grace period: the
     * environment's dataErasureGraceDays unless an operator gives graceDays). One of each type in flight
     * per user (409 data_request_in_progress); an erasure of the only active owner of an organization is 409 last_owner.
     */
    async request(environmentId: string, userId: string, body: StartDataRequestBody, by: Caller): Promise<DataRequest> {
      if (body.type === 'export' && body.graceDays !== undefined) throw graceDaysForErasureOnly();
      const { settings } = await environments.record(environmentId);
      const created = await inTransaction(db, async (trx) => {
        await lockExistingUser(trx, environmentId, userId);
        if (body.type === 'erasure') await refuseLastOwner(trx, environmentId, userId);
        const now = clock.now();
        const id = uuidv7();
        const completesAt = body.type === 'erasure' ? new Date(now.getTime() + (body.graceDays ?? settings.dataErasureGraceDays) * DAY_MS) : null;
        const jobId = await enqueueJob(trx, environmentId, { kind: DATA_REQUEST_JOBS[body.type], payload: { requestId: id }, runAt: completesAt ?? now }, now);
        const request = await createDataRequestsStore(trx).insert(environmentId, {
          id, userId, type: body.type, status: body.type === 'export' ? 'pending' : 'scheduled',
          requestedBy: { type: by.actor.type, id: by.actor.id }, completesAt, jobId,
        }, now);
        if (!request) throw dataRequestInProgress(body.type);
        await record(trx, environmentId, 'data_request.created', userId, id, by, { type: body.type, ...(completesAt && { completesAt: completesAt.toISOString() }) });
        return request;
      });
      wakeJobs();
      return created;
    },
    listForUser: (environmentId: string, userId: string, page: PageQuery) => store.listForUser(environmentId, userId, page, clock.now()),
    list: (environmentId: string, filter: DataRequestFilter, page: PageQuery) => store.list(environmentId, filter, page, clock.now()),
    async get(environmentId: string, requestId: string) {
      const request = await store.find(environmentId, requestId, clock.now());
      if (!request) throw dataRequestNotFound();
      return request;
    },
    /**
     * Cancels an erasure during its grace period (of this user only, when `userId` is given: the client
     * plane). Anything else is 409 data_request_not_cancellable; another user's request is 404.
     */
    async cancel(environmentId: string, requestId: string, by: Caller, userId?: string): Promise<DataRequest> {
      const cancelled = await inTransaction(db, async (trx) => {
        const request = await createDataRequestsStore(trx).cancel(environmentId, requestId, userId, 'requested', clock.now());
        if (request) await record(trx, environmentId, 'data_request.cancelled', request.userId, request.id, by, { type: request.type, reason: 'requested' });
        return request;
      });
      if (cancelled) return cancelled;
      const request = await store.find(environmentId, requestId, clock.now());
      if (!request || (userId && request.userId !== userId)) throw dataRequestNotFound();
      throw notCancellable(request.status);
    },
    /** The archive of the user's ready export: 409 export_not_ready before, 410 export_expired after its link. */
    async download(environmentId: string, userId: string, requestId: string): Promise<DataExportArchive> {
      const found = await store.findWithArchive(environmentId, userId, requestId, clock.now());
      if (!found || found.request.type !== 'export') throw dataRequestNotFound();
      if (found.request.status === 'pending') throw exportNotReady();
      if (found.request.status !== 'ready' || !found.archive) throw exportExpired();
      return found.archive as unknown as DataExportArchive;
    },
    /** Housekeeping: deletes the archives whose link expired. */
    expireArchives: () => store.expireArchives(clock.now()),
    jobHandlers: { [DATA_REQUEST_JOBS.export]: runExport, [DATA_REQUEST_JOBS.erasure]: runErasure } as Record<string, JobHandler>,
  };
}
export type DataRequestsService = ReturnType<typeof createDataRequestsService>;

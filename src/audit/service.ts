import { isIP } from 'node:net';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { sha256 } from '../platform/crypto/tokens.js';
import { SWEEP_BATCH_SIZE, untilDone } from '../platform/db/batches.js';
import type { Db } from '../platform/db/database.js';
import type { Cte, CteChain } from '../platform/db/cte.js';
import type { PageQuery } from '../platform/http/common-schemas.js';
import { canonicalJson, jsonByteSize, type JsonObject } from '../platform/json.js';
import { ProblemError } from '../platform/http/problem.js';
import { metadataTooLarge } from '../platform/http/problems.js';
import { METADATA_BUDGET_BYTES } from '../platform/metadata.js';
import { DAY_MS } from '../platform/maintenance.js';
import type { Metrics } from '../platform/metrics.js';
import type { RateLimiter, RateLimitResult } from '../platform/rate-limit.js';
import {
  auditEventNotFound, auditRateLimited, auditStorageUnavailable, idempotencyKeyReused, invalidAuditEvent, invalidIdempotencyKey,
  referencedResourceNotFound,
} from './errors.js';
import {
  IDEMPOTENCY_KEY_PATTERN, MAX_AGE_MS, MAX_FUTURE_MS,
  type AppendAuditEventBody, type AuditEvent, type AuditEventFilter, type SearchOrder,
} from './schemas.js';
import { createAuditStore, addOwnEventAfter, type IdempotencyRecord, type NewAuditEvent } from './store.js';

/** 600 append attempts per environment per UTC clock minute, counted in PostgreSQL across processes. */
export const APPEND_LIMIT = { max: 600, windowSeconds: 60 };
const APPEND_BUCKET = 'audit_append';
/** Idempotency keys are kept at least this long (the sweep removes older ones). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;

export interface AuditDeps {
  db: Db;
  clock: Clock;
  limiter: RateLimiter;
  /** The environment's `auditLogEnabled` setting. */
  auditLogEnabled(environmentId: string): Promise<boolean>;
  /** Which of these user ids (valid uuids) are users of the environment, deleted ones included. */
  existingUserIds(environmentId: string, ids: string[]): Promise<Set<string>>;
  /** The environments whose events expire (setting `auditRetentionDays`), for the retention sweep. */
  auditRetentions(): Promise<{ environmentId: string; retentionDays: number }[]>;
  metrics: Pick<Metrics, 'auditAppends'>;
}

/** The stored event and the headers of the answer: the rate limit's, and `Idempotent-Replayed` on a replay. */
export interface AppendResult { event: AuditEvent; headers: Record<string, string> }

export interface AttemptCount { limit: number; windowSeconds: number; remaining: number; resetSeconds: number }

/**
 * The IETF RateLimit headers (draft-ietf-httpapi-ratelimit-headers, structured-field form) for an
 * append: the policy (quota per window) and what is left of the current window.
 */
const rateLimitHeaders = (a: AttemptCount): Record<string, string> => ({
  'RateLimit-Policy': `"audit";q=${a.limit};w=${a.windowSeconds}`,
  RateLimit: `"audit";r=${a.remaining};t=${a.resetSeconds}`,
});

/** An event of Gatehouse's own trail: what changed, who did it, to what. Never a password, code or token. */
export interface OwnEvent extends Pick<Caller, 'actor' | 'via'> {
  action: string;
  context?: Caller['context'];
  targets: { type: string; id: string }[];
  metadata?: JsonObject;
  result?: string;
}

/**
 * Records an event of Gatehouse's own trail inside the caller's transaction, so the event commits with
 * the change it records (or neither does). Call it as the LAST statement of the transaction: it locks
 * the environment's sequence counter until commit. Example from another domain's service:
 *
 *   await inTransaction(db, async (trx) => {
 *     const invitation = await createInvitationsStore(trx).insert(...);
 *     await recordOwnEvent(trx, environmentId, { action: 'invitation.created', ...by, targets: [{ type: 'invitation', id: invitation.id }] }, clock.now());
 *   });
 */
export function recordOwnEvent(trx: Db, environmentId: string, event: OwnEvent, now: Date): Promise<AuditEvent> {
  return createAuditStore(trx).insert(environmentId, storedOwnEvent(event, now));
}

/**
 * The event as CTEs of a statement the caller builds, recorded once per row of its CTE `after` (so only
 * when the change it records happened), committing with it.
 */
export const recordOwnEventAfter = (chain: CteChain, after: Cte<unknown>, environmentId: string, event: OwnEvent, now: Date) =>
  addOwnEventAfter(chain, after, environmentId, storedOwnEvent(event, now));

const storedOwnEvent = (event: OwnEvent, now: Date): NewAuditEvent => ({
  action: event.action, result: event.result ?? 'success', occurredAt: now, recordedAt: now,
  actor: event.actor, targets: event.targets, context: event.context ?? { ipAddress: null, userAgent: null },
  producer: { type: 'gatehouse', via: event.via }, metadata: event.metadata ?? {}, schemaVersion: 1, correlationId: null,
});

/**
 * Erasure, in the caller's transaction: the IP addresses and user agents in the service's own trail events
 * that name the user are nulled. The events stay, as do every event the customer appended. Answers how many changed.
 */
export const scrubOwnTrailOf = (trx: Db, environmentId: string, userId: string) =>
  createAuditStore(trx).scrubOwnEventsOf(environmentId, userId);

/** 400 invalid_idempotency_key unless the header holds 1 to 255 printable ASCII characters. */
function checkIdempotencyKey(key: string | string[] | undefined): string {
  if (key === undefined) throw invalidIdempotencyKey('Send an Idempotency-Key header: a unique value per event, such as a UUID.');
  if (Array.isArray(key)) throw invalidIdempotencyKey('Send exactly one Idempotency-Key header.');
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw invalidIdempotencyKey('The Idempotency-Key must be 1 to 255 printable ASCII characters.');
  return key;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Bounds the schema cannot express: time relative to the server clock, IP syntax. */
function boundErrors(body: AppendAuditEventBody, now: Date) {
  const errors: { path: string; message: string }[] = [];
  const occurredAt = Date.parse(body.occurredAt);
  if (occurredAt > now.getTime() + MAX_FUTURE_MS) errors.push({ path: '/body/occurredAt', message: 'must be at most 5 minutes in the future' });
  if (occurredAt < now.getTime() - MAX_AGE_MS) errors.push({ path: '/body/occurredAt', message: 'must be at most 30 days old' });
  const ip = body.context?.ipAddress;
  if (ip !== undefined && ip !== null && isIP(ip) === 0) errors.push({ path: '/body/context/ipAddress', message: 'must be a valid IPv4 or IPv6 address' });
  return errors;
}

/** The user ids the event names (a `user` actor or target with an id), with where they are in the body. */
function userReferences(body: AppendAuditEventBody) {
  const refs: { path: string; type: string; id: string }[] = [];
  if (body.actor.type === 'user' && body.actor.id) refs.push({ path: '/body/actor/id', type: 'user', id: body.actor.id });
  body.targets.forEach((target, i) => {
    if (target.type === 'user' && target.id) refs.push({ path: `/body/targets/${i}/id`, type: 'user', id: target.id });
  });
  return refs;
}

export function createAuditService({ db, clock, limiter, auditLogEnabled, existingUserIds, auditRetentions, metrics }: AuditDeps) {
  const store = createAuditStore(db);

  /** Every rule of an append beyond the schema; throws the first problem found. */
  async function validate(environmentId: string, body: AppendAuditEventBody) {
    const errors = boundErrors(body, clock.now());
    if (errors.length > 0) throw invalidAuditEvent(errors);
    const bytes = jsonByteSize(body.metadata);
    if (bytes > METADATA_BUDGET_BYTES) throw metadataTooLarge(bytes, METADATA_BUDGET_BYTES, 'The metadata takes');
    const refs = userReferences(body);
    if (refs.length === 0) return;
    const ids = [...new Set(refs.map((r) => r.id.toLowerCase()).filter((id) => UUID.test(id)))];
    const existing = ids.length > 0 ? await existingUserIds(environmentId, ids) : new Set<string>();
    const missing = refs.filter((r) => !existing.has(r.id.toLowerCase()));
    if (missing.length > 0) throw referencedResourceNotFound(missing);
  }

  /** The stored event for a key used before: the same request replays it, another is 422. */
  function replay(record: IdempotencyRecord, requestHash: Buffer, attempt: AttemptCount): AppendResult {
    if (!record.requestHash.equals(requestHash)) throw idempotencyKeyReused(rateLimitHeaders(attempt));
    metrics.auditAppends.inc({ outcome: 'replayed' });
    return { event: record.event, headers: { ...rateLimitHeaders(attempt), 'Idempotent-Replayed': 'true' } };
  }

  /** The attempt as counted; 429 rate_limited (with the headers) when the window was full. */
  function admitted(hit: RateLimitResult): AttemptCount {
    const attempt = {
      limit: APPEND_LIMIT.max, windowSeconds: APPEND_LIMIT.windowSeconds,
      remaining: Math.max(0, APPEND_LIMIT.max - hit.count), resetSeconds: hit.retryAfterSeconds,
    };
    if (!hit.allowed) throw auditRateLimited(hit.retryAfterSeconds, rateLimitHeaders(attempt));
    return attempt;
  }
  const countAttempt = async (environmentId: string) => admitted(await limiter.hit(environmentId, APPEND_BUCKET, APPEND_LIMIT));

  const toNewEvent = (body: AppendAuditEventBody, secretKeyId: string, now: Date): NewAuditEvent => ({
    action: body.action, result: body.result, occurredAt: new Date(body.occurredAt), recordedAt: now,
    actor: { type: body.actor.type, id: body.actor.id ?? null, impersonatorId: body.actor.impersonatorId ?? null },
    // User ids are uuids: stored in the canonical lower-case form, so a search by id finds them.
    targets: body.targets.map((t) => ({ type: t.type, id: t.id == null ? null : t.type === 'user' ? t.id.toLowerCase() : t.id })),
    context: { ipAddress: body.context?.ipAddress ?? null, userAgent: body.context?.userAgent ?? null },
    producer: { type: 'secret_key', keyId: secretKeyId }, metadata: body.metadata,
    schemaVersion: body.schemaVersion, correlationId: body.correlationId ?? null,
  });

  return {
    /**
     * Counts an append attempt that ended in an error before it was counted (malformed, invalid, audit
     * log off): every authenticated attempt counts. Answers the rate-limit headers for the error; throws
     * 429 rate_limited (with the headers) once the window is full.
     */
    countFailedAppend: async (environmentId: string) => rateLimitHeaders(await countAttempt(environmentId)),

    /**
     * Appends an event exactly once per idempotency key, counting the attempt against the limit. A new
     * key is validated, then counted and stored with its event in one statement; a key seen before
     * replays its event when the body is the same and is 422 otherwise, without validating again (a
     * replay a day later must not fail on occurredAt's age). A body that fails validation stores
     * nothing and is left for the caller to count (see countFailedAppend), unless it retries a stored request.
     */
    async append(environmentId: string, secretKeyId: string, idempotencyKeyHeader: string | string[] | undefined, body: AppendAuditEventBody): Promise<AppendResult> {
      const idempotencyKey = checkIdempotencyKey(idempotencyKeyHeader);
      if (!(await auditLogEnabled(environmentId))) throw auditStorageUnavailable();
      const requestHash = sha256(canonicalJson(body));
      try {
        await validate(environmentId, body);
      } catch (problem) {
        if (!(problem instanceof ProblemError)) throw problem;
        const record = await store.findIdempotencyRecord(environmentId, idempotencyKey);
        if (!record) throw problem;
        return replay(record, requestHash, await countAttempt(environmentId));
      }
      const hit = limiter.prepareHit(environmentId, APPEND_BUCKET, APPEND_LIMIT);
      const stored = await store.insertCounted(environmentId, hit.statement, idempotencyKey, requestHash, toNewEvent(body, secretKeyId, clock.now()));
      const attempt = admitted(hit.result(stored.count));
      if (stored.event) {
        metrics.auditAppends.inc({ outcome: 'stored' });
        return { event: stored.event, headers: rateLimitHeaders(attempt) };
      }
      // The key exists: stored earlier, or by a concurrent duplicate whose commit the insert waited for.
      const record = await store.findIdempotencyRecord(environmentId, idempotencyKey);
      if (!record) throw new Error('audit idempotency key conflicted but cannot be read');
      return replay(record, requestHash, attempt);
    },

    async get(environmentId: string, eventId: string) {
      const event = await store.find(environmentId, eventId);
      if (!event) throw auditEventNotFound();
      return event;
    },
    search: (environmentId: string, filter: AuditEventFilter, page: PageQuery, order?: SearchOrder) => store.list(environmentId, filter, page, order),
    poll: (environmentId: string, afterSequence: number, limit: number) => store.listAfterSequence(environmentId, afterSequence, limit),

    /** Housekeeping: idempotency keys older than 24 hours may go (a key is kept at least that long). */
    pruneIdempotencyKeys: () => store.deleteIdempotencyKeysBefore(new Date(clock.now().getTime() - IDEMPOTENCY_KEY_TTL_MS)),

    /**
     * Housekeeping: in each environment with an `auditRetentionDays`, deletes the events both recorded and
     * occurred longer ago than that (an event backdated on append stays until its recording is that old
     * too, so a feed reader always has the whole retention to read it), a batch at a time.
     */
    async pruneExpiredEvents() {
      let deleted = 0;
      for (const { environmentId, retentionDays } of await auditRetentions()) {
        const cutoff = new Date(clock.now().getTime() - retentionDays * DAY_MS);
        deleted += await untilDone(() => store.deleteEventsBefore(environmentId, cutoff, SWEEP_BATCH_SIZE));
      }
      return deleted;
    },
  };
}
export type AuditService = ReturnType<typeof createAuditService>;

import { sql, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { deleteInBatches } from '../db/batches.js';
import { jsonb, type Db } from '../db/database.js';
import type { JobRow } from '../db/tables.js';
import type { JsonObject } from '../json.js';

/** A job as the queue keeps it. */
export interface NewJob { kind: string; payload: JsonObject; runAt: Date; maxAttempts: number; orderingKey: string | null }

/** A job a worker has claimed for attempt number `attempts`, leased until its lease ends. */
export interface ClaimedJob {
  environmentId: string; id: string; kind: string; payload: JsonObject; attempts: number; maxAttempts: number;
  orderingKey: string | null; seq: number;
}

/**
 * What became of an attempt of work outside the database, as the job records it. `postponed`: not
 * attempted after all (an earlier job of its batch failed, or time ran out), so the attempt is given back
 * and the job is due again at `at`.
 */
export type JobOutcome =
  | { status: 'done' } | { status: 'retry'; at: Date; error: string } | { status: 'failed'; error: string } | { status: 'postponed'; at: Date };

export function createJobsStore(db: Db) {
  const queued = (environmentId: string, id: string, attempts: number) =>
    db.updateTable('jobs').where('environment_id', '=', environmentId).where('id', '=', id)
      .where('status', '=', 'queued').where('attempts', '=', attempts);
  return {
    insert: (environmentId: string, job: NewJob, now: Date) =>
      db.insertInto('jobs').values({
        environment_id: environmentId, id: uuidv7(), kind: job.kind, payload: jsonb(job.payload), status: 'queued',
        run_at: job.runAt, max_attempts: job.maxAttempts, created_at: now, ordering_key: job.orderingKey,
      }).returning('id').executeTakeFirstOrThrow().then((row) => row.id),
    /**
     * Claims up to `limit` due jobs in every environment for one attempt each: the attempt is counted and
     * the job is not claimed again before `leaseUntil`. The claim commits at once; SKIP LOCKED lets other
     * workers claim other jobs meanwhile, and passes over a job whose attempt is running (its row is locked).
     * A job with an ordering key waits while a job with its key is in flight (leased): the in-flight keys
     * are read once per claim, so a long queue of one key costs one pass, not one look per job.
     */
    claimDue: (now: Date, leaseUntil: Date, limit: number, skipKinds: string[] = []) =>
      sql<Selectable<JobRow>>`
        update jobs j set attempts = j.attempts + 1, locked_until = ${leaseUntil}::timestamptz
        where (j.environment_id, j.id) in (
          select environment_id, id from jobs q
          where status = 'queued' and run_at <= ${now}::timestamptz and (locked_until is null or locked_until <= ${now}::timestamptz)
            and not (kind = any(${skipKinds}::text[]))
            and (ordering_key is null or ordering_key not in (
              select ordering_key from jobs where status = 'queued' and ordering_key is not null and locked_until > ${now}::timestamptz))
          order by run_at, seq limit ${limit} for update skip locked)
        returning j.*`.execute(db).then((r) => r.rows.map(toClaimed).sort((a, b) => a.seq - b.seq)),
    /**
     * Marks the attempt done, in the transaction that also makes its effect: the row stays locked until
     * commit, so no other worker claims the job meanwhile. False when another attempt has taken the job
     * since (this one's lease ran out) or finished it: this attempt must then have no effect.
     */
    finish: (job: ClaimedJob, now: Date) =>
      queued(job.environmentId, job.id, job.attempts).set({ status: 'done', finished_at: now, locked_until: null, last_error: null })
        .returning('id').executeTakeFirst().then((row) => row !== undefined),
    /**
     * Serializes claims across processes until the caller's transaction ends, so a claim's statement sees
     * every earlier claim committed: two workers never split one ordering key's jobs between them.
     */
    lockClaims: () => sql`select pg_advisory_xact_lock(hashtext('gatehouse:jobs:claim'))`.execute(db).then(() => undefined),
    /** Of these claimed jobs, the ones no other attempt has taken since, locked until the caller's transaction ends. */
    owned: (jobs: ClaimedJob[]) =>
      jobs.length === 0 ? Promise.resolve(new Set<string>()) : sql<{ id: string }>`
        select j.id from jobs j
        join jsonb_to_recordset(${JSON.stringify(jobs.map((job) => ({ environment_id: job.environmentId, id: job.id, attempts: job.attempts })))}::jsonb)
          as k(environment_id uuid, id uuid, attempts int) on j.environment_id = k.environment_id and j.id = k.id and j.attempts = k.attempts
        where j.status = 'queued' for update of j`.execute(db).then((r) => new Set(r.rows.map((row) => row.id))),
    /**
     * The outcomes of a batch of external work (see ExternalJobHandler), in one statement; a job that
     * another attempt has taken since (its lease ran out) is left alone.
     */
    async settle(settled: { job: ClaimedJob; outcome: JobOutcome }[], now: Date) {
      if (settled.length === 0) return;
      const rows = settled.map(({ job, outcome }) => ({
        environment_id: job.environmentId, id: job.id, attempts: job.attempts,
        status: outcome.status === 'done' || outcome.status === 'failed' ? outcome.status : 'queued',
        run_at: outcome.status === 'retry' || outcome.status === 'postponed' ? outcome.at.toISOString() : null,
        error: outcome.status === 'retry' || outcome.status === 'failed' ? outcome.error : null,
        given_back: outcome.status === 'postponed',
      }));
      await sql`
        update jobs j set status = v.status, run_at = coalesce(v.run_at, j.run_at), locked_until = null,
          last_error = case when v.given_back then j.last_error else v.error end,
          attempts = j.attempts - case when v.given_back then 1 else 0 end,
          finished_at = case when v.status = 'queued' then null else ${now}::timestamptz end
        from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          as v(environment_id uuid, id uuid, attempts int, status text, run_at timestamptz, error text, given_back boolean)
        where j.environment_id = v.environment_id and j.id = v.id and j.status = 'queued' and j.attempts = v.attempts`.execute(db);
    },
    /** Due again at `at`, unless another attempt has taken the job since. */
    scheduleRetry: (job: ClaimedJob, at: Date, error: string) =>
      queued(job.environmentId, job.id, job.attempts).set({ run_at: at, locked_until: null, last_error: error }).execute().then(() => undefined),
    /** Given up on, unless another attempt has taken the job since. */
    markFailed: (job: ClaimedJob, now: Date, error: string) =>
      queued(job.environmentId, job.id, job.attempts).set({ status: 'failed', finished_at: now, locked_until: null, last_error: error })
        .execute().then(() => undefined),
    /**
     * A queued job due at `now` (sooner, never later); an attempt in flight keeps its lease. False when the
     * job is no longer queued (done or given up on).
     */
    makeDue: (environmentId: string, id: string, now: Date) =>
      db.updateTable('jobs').where('environment_id', '=', environmentId).where('id', '=', id).where('status', '=', 'queued')
        .set({ run_at: sql<Date>`least(run_at, ${now}::timestamptz)` })
        .returning('id').executeTakeFirst().then((row) => row !== undefined),
    /** When the earliest queued job is due (or its lease ends); undefined when none is queued. */
    nextDueAt: () =>
      db.selectFrom('jobs').select(sql<Date | null>`min(greatest(run_at, coalesce(locked_until, run_at)))`.as('due'))
        .where('status', '=', 'queued').executeTakeFirst().then((row) => row?.due ?? undefined),
    /** Queued jobs by kind: how many, and when the oldest due one became due (the metrics' queue depth and age). */
    depth: () =>
      db.selectFrom('jobs').where('status', '=', 'queued').groupBy('kind')
        .select((eb) => ['kind', eb.fn.countAll<number>().as('queued'), eb.fn.min('run_at').as('oldest')])
        .execute().then((rows) => rows.map((row) => ({ kind: row.kind, queued: Number(row.queued), oldestDueAt: row.oldest as Date }))),
    /** Housekeeping, in every environment: finished jobs older than the cut-off. */
    pruneFinished: (before: Date) =>
      deleteInBatches(db, 'jobs', sql<boolean>`finished_at is not null and finished_at < ${before}::timestamptz`),
  };
}
export type JobsStore = ReturnType<typeof createJobsStore>;

const toClaimed = (row: Selectable<JobRow>): ClaimedJob => ({
  environmentId: row.environment_id, id: row.id, kind: row.kind, payload: row.payload as JsonObject, attempts: row.attempts, maxAttempts: row.max_attempts,
  orderingKey: row.ordering_key, seq: Number(row.seq),
});

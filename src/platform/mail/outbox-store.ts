import { sql, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { deleteInBatches } from '../db/batches.js';
import type { Db } from '../db/database.js';
import { publishInvalidation } from '../db/notifications.js';
import type { OutboxMessageRow } from '../db/tables.js';

/** A message as a service hands it over and the outbox keeps it. */
export interface Mail { to: string; subject: string; text: string; html: string }

export interface OutboxMessage extends Mail { id: string; createdAt: string }

/** A message a worker has claimed: it holds the lease until `leaseUntil`, for its attempt number `attempts`. */
export interface ClaimedMessage extends Mail { environmentId: string; id: string; attempts: number }

/**
 * Mail caught without SMTP is a mail catcher for development: it holds reset codes and invitation links
 * in clear, so it is kept only this long (and deleted by the housekeeping sweep).
 */
export const OUTBOX_RETENTION_MS = 60 * 60_000;

/**
 * The message other processes hear (LISTEN/NOTIFY, on the channel that also carries cache evictions)
 * when mail is queued: at commit when it was queued in a transaction, so no worker looks too early.
 */
export const MAIL_QUEUED_MESSAGE = 'mail:queued';

// Subject and bodies are cleared once a message is done with: they hold codes and links in clear.
const CLEARED = { subject: '', text_body: '', html_body: '' };

export function createOutboxStore(db: Db) {
  const open = (environmentId: string, id: string) =>
    db.updateTable('outbox_messages').where('environment_id', '=', environmentId).where('id', '=', id).where('status', '=', 'pending');
  return {
    /** Keeps the mail for reading, never to send (no SMTP configured). */
    insertCaught: (environmentId: string, mail: Mail, now: Date) =>
      db.insertInto('outbox_messages').values({
        environment_id: environmentId, id: uuidv7(), to_address: mail.to, subject: mail.subject,
        text_body: mail.text, html_body: mail.html, created_at: now, status: 'caught',
      }).execute().then(() => undefined),
    /** Queues the mail for delivery, due at once, and tells every process's worker (at commit, in a transaction). */
    async insertPending(environmentId: string, mail: Mail, now: Date) {
      await db.insertInto('outbox_messages').values({
        environment_id: environmentId, id: uuidv7(), to_address: mail.to, subject: mail.subject,
        text_body: mail.text, html_body: mail.html, created_at: now, status: 'pending', next_attempt_at: now,
      }).execute();
      await publishInvalidation(db, MAIL_QUEUED_MESSAGE);
    },
    /** Caught mail, newest first; optionally only the mail sent to one address. */
    list: (environmentId: string, to?: string, limit = 100) => {
      let query = db.selectFrom('outbox_messages').selectAll().where('environment_id', '=', environmentId).where('status', '=', 'caught');
      if (to) query = query.where('to_address', '=', to.toLowerCase());
      return query.orderBy('id', 'desc').limit(limit).execute().then((rows) => rows.map(toMessage));
    },
    /**
     * Claims up to `limit` due messages for one attempt each, in every environment: the attempt is counted
     * and the message is not due again before `leaseUntil`. SKIP LOCKED lets workers of other processes
     * claim other messages meanwhile; the claim commits at once, so a worker that dies mid-send leaves
     * the message to be tried again when its lease ends.
     */
    claimDue: (now: Date, leaseUntil: Date, limit: number) =>
      sql<Selectable<OutboxMessageRow>>`
        update outbox_messages o set attempts = o.attempts + 1, next_attempt_at = ${leaseUntil}::timestamptz
        from (select environment_id, id from outbox_messages
              where status = 'pending' and next_attempt_at <= ${now}::timestamptz
              order by next_attempt_at limit ${limit} for update skip locked) due
        where o.environment_id = due.environment_id and o.id = due.id
        returning o.*`.execute(db).then((r) => r.rows.map(toClaimed)),
    /** Delivered (whichever attempt got there: a late one whose lease ran out still counts). */
    markSent: (environmentId: string, id: string, now: Date) =>
      open(environmentId, id).set({ ...CLEARED, status: 'sent', next_attempt_at: null, last_error: null, finished_at: now }).execute().then(() => undefined),
    /** Due again at `at`, unless another worker claimed the message since this attempt (its lease ran out). */
    scheduleRetry: (message: ClaimedMessage, at: Date, error: string) =>
      open(message.environmentId, message.id).where('attempts', '=', message.attempts)
        .set({ next_attempt_at: at, last_error: error }).execute().then(() => undefined),
    /** Given up on, unless another worker claimed the message since this attempt. */
    markFailed: (message: ClaimedMessage, now: Date, error: string) =>
      open(message.environmentId, message.id).where('attempts', '=', message.attempts)
        .set({ ...CLEARED, status: 'failed', next_attempt_at: null, last_error: error, finished_at: now }).execute().then(() => undefined),
    /** When the earliest pending message is due (or its lease ends); undefined when nothing is pending. */
    nextDueAt: () =>
      db.selectFrom('outbox_messages').select('next_attempt_at').where('status', '=', 'pending')
        .orderBy('next_attempt_at').limit(1).executeTakeFirst().then((row) => row?.next_attempt_at ?? undefined),
    /** Mail still to deliver: how many, and when the oldest was queued. */
    backlog: () =>
      db.selectFrom('outbox_messages').where('status', '=', 'pending')
        .select((eb) => [eb.fn.countAll<number>().as('pending'), eb.fn.min('created_at').as('oldest')])
        .executeTakeFirstOrThrow().then((row) => ({ pending: Number(row.pending), oldestQueuedAt: row.oldest as Date | null })),
    /** Housekeeping, in every environment: caught mail older than OUTBOX_RETENTION_MS, the rest older than `retentionMs`. */
    async prune(now: Date, retentionMs: number) {
      const caught = await deleteInBatches(db, 'outbox_messages',
        sql<boolean>`status = 'caught' and created_at < ${new Date(now.getTime() - OUTBOX_RETENTION_MS)}::timestamptz`);
      const delivered = await deleteInBatches(db, 'outbox_messages',
        sql<boolean>`status in ('pending', 'sent', 'failed') and created_at < ${new Date(now.getTime() - retentionMs)}::timestamptz`);
      return caught + delivered;
    },
  };
}
export type OutboxStore = ReturnType<typeof createOutboxStore>;

const toMessage = (row: Selectable<OutboxMessageRow>): OutboxMessage => ({
  id: row.id, to: row.to_address, subject: row.subject, text: row.text_body, html: row.html_body,
  createdAt: row.created_at.toISOString(),
});

const toClaimed = (row: Selectable<OutboxMessageRow>): ClaimedMessage => ({
  environmentId: row.environment_id, id: row.id, attempts: row.attempts,
  to: row.to_address, subject: row.subject, text: row.text_body, html: row.html_body,
});

import { sql, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { deleteInBatches } from '../db/batches.js';
import type { Db } from '../db/database.js';
import type { OutboxMessageRow } from '../db/tables.js';

/** A message as a service hands it over and the outbox keeps it. */
export interface Mail { to: string; subject: string; text: string; html: string }

export interface OutboxMessage extends Mail { id: string; createdAt: string }

/**
 * Mail caught without SMTP is a mail catcher for development: it holds reset codes and invitation links
 * in clear, so it is kept only this long (and deleted by the housekeeping sweep).
 */
export const OUTBOX_RETENTION_MS = 60 * 60_000;

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
    /** Keeps the mail to deliver, due at once (its 'mail.deliver' job sends it: see delivery.ts); answers its id. */
    insertPending: (environmentId: string, mail: Mail, now: Date) =>
      db.insertInto('outbox_messages').values({
        environment_id: environmentId, id: uuidv7(), to_address: mail.to, subject: mail.subject,
        text_body: mail.text, html_body: mail.html, created_at: now, status: 'pending', next_attempt_at: now,
      }).returning('id').executeTakeFirstOrThrow().then((row) => row.id),
    /** Caught mail, newest first; optionally only the mail sent to one address. */
    list: (environmentId: string, to?: string, limit = 100) => {
      let query = db.selectFrom('outbox_messages').selectAll().where('environment_id', '=', environmentId).where('status', '=', 'caught');
      if (to) query = query.where('to_address', '=', to.toLowerCase());
      return query.orderBy('id', 'desc').limit(limit).execute().then((rows) => rows.map(toMessage));
    },
    /**
     * Records that attempt number `attempts` is sending the message (no next attempt is due while it does)
     * and answers the message; undefined when it is no longer pending (sent by an earlier attempt, or pruned).
     */
    beginAttempt: (environmentId: string, id: string, attempts: number) =>
      open(environmentId, id).set({ attempts, next_attempt_at: null, last_error: null })
        .returningAll().executeTakeFirst().then((row) => row && toMail(row)),
    /** Delivered (whichever attempt got there: a late one whose lease ran out still counts). */
    markSent: (environmentId: string, id: string, now: Date) =>
      open(environmentId, id).set({ ...CLEARED, status: 'sent', next_attempt_at: null, last_error: null, finished_at: now }).execute().then(() => undefined),
    /** Due again at `at`, unless a later attempt has begun since attempt number `attempts` (its lease ran out). */
    scheduleRetry: (environmentId: string, id: string, attempts: number, at: Date, error: string) =>
      open(environmentId, id).where('attempts', '=', attempts).set({ next_attempt_at: at, last_error: error }).execute().then(() => undefined),
    /** Given up on, unless a later attempt has begun since attempt number `attempts`. */
    markFailed: (environmentId: string, id: string, attempts: number, now: Date, error: string) =>
      open(environmentId, id).where('attempts', '=', attempts)
        .set({ ...CLEARED, status: 'failed', next_attempt_at: null, last_error: error, finished_at: now }).execute().then(() => undefined),
    /** Mail still to deliver: how many, and when the oldest was queued. */
    backlog: () =>
      db.selectFrom('outbox_messages').where('status', '=', 'pending')
        .select((eb) => [eb.fn.countAll<number>().as('pending'), eb.fn.min('created_at').as('oldest')])
        .executeTakeFirstOrThrow().then((row) => ({ pending: Number(row.pending), oldestQueuedAt: row.oldest as Date | null })),
    /**
     * Erasure, in the caller's transaction: deletes the mail to these (normalised) addresses, whatever its status
     * (its subject and bodies may hold codes, its address is the person). Answers how many there were.
     */
    deleteAddressedTo: (environmentId: string, addresses: string[]) =>
      (addresses.length === 0 ? Promise.resolve(0)
        : db.deleteFrom('outbox_messages').where('environment_id', '=', environmentId).where(sql<string>`lower(to_address)`, 'in', addresses)
          .executeTakeFirst().then((result) => Number(result.numDeletedRows))),
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

const toMail = (row: Selectable<OutboxMessageRow>): Mail => ({ to: row.to_address, subject: row.subject, text: row.text_body, html: row.html_body });

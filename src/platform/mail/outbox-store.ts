import { uuidv7 } from 'uuidv7';
import type { Db } from '../db/database.js';
import type { OutboxMessageRow } from '../db/tables.js';
import type { Mail } from './mailer.js';

export interface OutboxMessage extends Mail { id: string; createdAt: string }

/**
 * The outbox is a mail catcher for development: its mail holds reset codes and invitation links in
 * clear, so it is kept only this long (and deleted by the housekeeping sweep, every 10 minutes).
 */
export const OUTBOX_RETENTION_MS = 60 * 60_000;

export function createOutboxStore(db: Db) {
  return {
    insert: (environmentId: string, mail: Mail, now: Date) =>
      db.insertInto('outbox_messages').values({
        environment_id: environmentId, id: uuidv7(), to_address: mail.to, subject: mail.subject,
        text_body: mail.text, html_body: mail.html, created_at: now,
      }).execute(),
    /** Newest first; optionally only the mail sent to one address. */
    list: (environmentId: string, to?: string, limit = 100) => {
      let query = db.selectFrom('outbox_messages').selectAll().where('environment_id', '=', environmentId);
      if (to) query = query.where('to_address', '=', to.toLowerCase());
      return query.orderBy('id', 'desc').limit(limit).execute().then((rows) => rows.map(toMessage));
    },
    /** Deletes mail older than the retention, in every environment. */
    prune: (now: Date) =>
      db.deleteFrom('outbox_messages').where('created_at', '<', new Date(now.getTime() - OUTBOX_RETENTION_MS)).execute(),
  };
}

const toMessage = (row: OutboxMessageRow): OutboxMessage => ({
  id: row.id, to: row.to_address, subject: row.subject, text: row.text_body, html: row.html_body,
  createdAt: row.created_at.toISOString(),
});

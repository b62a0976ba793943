import { uuidv7 } from 'uuidv7';
import type { Db } from '../db/database.js';
import type { OutboxMessageRow } from '../db/tables.js';
import type { Mail } from './mailer.js';

export interface OutboxMessage extends Mail { id: string; createdAt: string }

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
  };
}

const toMessage = (row: OutboxMessageRow): OutboxMessage => ({
  id: row.id, to: row.to_address, subject: row.subject, text: row.text_body, html: row.html_body,
  createdAt: row.created_at.toISOString(),
});

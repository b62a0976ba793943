import nodemailer from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import type { Metrics } from '../metrics.js';
import { createOutboxStore, OUTBOX_RETENTION_MS } from './outbox-store.js';

export const DEFAULT_MAIL_FROM = 'Gatehouse <no-reply@gatehouse.localhost>';

export interface Mail { to: string; subject: string; text: string; html: string }

export interface Mailer {
  /** Best effort: a delivery failure is logged, never thrown at the request that caused the mail. */
  send(environmentId: string, mail: Mail): Promise<void>;
  close(): void;
}

/**
 * The request that causes a mail waits for its delivery, so a stalled SMTP server must not hold it for
 * nodemailer's defaults (2 min to connect, 30 s for the greeting, 10 min of socket inactivity).
 * Query parameters of GATEHOUSE_SMTP_URL (`?greetingTimeout=...`) still override these.
 */
export const SMTP_TIMEOUTS_MS = { connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 10_000, dnsTimeout: 5_000 };

/** SMTP through nodemailer when a URL is configured; otherwise the outbox table (a mail catcher for development). */
export function createMailer(deps: { db: Db; clock: Clock; log: FastifyBaseLogger; metrics: Pick<Metrics, 'mail'>; smtpUrl?: string; from: string }): Mailer {
  if (deps.smtpUrl) {
    const transport = nodemailer.createTransport({ url: deps.smtpUrl, ...SMTP_TIMEOUTS_MS });
    return {
      send: async (environmentId, message) => {
        try {
          await transport.sendMail({ from: deps.from, ...message });
          deps.metrics.mail.inc({ outcome: 'sent' });
        } catch (err) {
          deps.metrics.mail.inc({ outcome: 'failed' });
          // Never the subject or body: they carry codes and links (security.md 27).
          deps.log.error({ err, environmentId, to: message.to }, 'mail delivery failed');
        }
      },
      close: () => transport.close(),
    };
  }
  // Said at every start: outbox mail holds codes and links in clear, which only suits development.
  deps.log.warn({ retentionMinutes: OUTBOX_RETENTION_MS / 60_000 },
    'no GATEHOUSE_SMTP_URL: mail is kept in the outbox, a mail catcher for development only; set GATEHOUSE_SMTP_URL to deliver it');
  const outbox = createOutboxStore(deps.db);
  return {
    send: async (environmentId, message) => {
      await outbox.insert(environmentId, message, deps.clock.now());
      deps.metrics.mail.inc({ outcome: 'queued' });
    },
    close: () => {},
  };
}

/** Escapes text for the HTML part of a message. */
export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

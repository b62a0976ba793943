import type { Transporter } from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import type { Notifications } from '../db/notifications.js';
import type { Metrics } from '../metrics.js';
import { createDeliveryWorker, DELIVERY_DEFAULTS, type DeliveryOptions } from './delivery.js';
import { createOutboxStore, OUTBOX_RETENTION_MS, type Mail } from './outbox-store.js';

export const DEFAULT_MAIL_FROM = 'Gatehouse <no-reply@gatehouse.localhost>';

export type { Mail };

/** `catching`: no SMTP, mail is kept in the outbox to be read (development); `delivering`: mail goes out by SMTP. */
export type MailMode = 'catching' | 'delivering';

export interface Mailer {
  /** Whether mail is caught in the outbox to be read or delivered by SMTP. */
  readonly mode: MailMode;
  /**
   * Queues the mail in the outbox; never waits for an SMTP server. Given the caller's transaction, the
   * mail is queued in it: it goes out if and only if the change that caused it commits.
   */
  send(environmentId: string, mail: Mail, trx?: Db): Promise<void>;
  /** Starts delivering (with SMTP): the app calls it once ready. */
  start(): void;
  /** Stops delivering, letting the sends in flight finish. */
  close(): Promise<void>;
}

/**
 * A background worker waits for each SMTP send, so a stalled server must not hold a message's lease for
 * nodemailer's defaults (2 min to connect, 30 s for the greeting, 10 min of socket inactivity).
 * Query parameters of GATEHOUSE_SMTP_URL (`?greetingTimeout=...`) still override these.
 */
export const SMTP_TIMEOUTS_MS = { connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 10_000, dnsTimeout: 5_000 };

export interface MailerDeps {
  db: Db; clock: Clock; log: FastifyBaseLogger; metrics: Pick<Metrics, 'mail'>; notifications?: Notifications;
  smtpUrl?: string; from: string;
  /** How the worker retries and polls (DELIVERY_DEFAULTS); tests make it quick. */
  delivery?: Partial<DeliveryOptions>;
}

/**
 * Every mail goes to the outbox. With an SMTP URL, a worker in this process (and in every other one on
 * the database) sends it from there, with retries; without one, the outbox is a mail catcher for development.
 */
export function createMailer(deps: MailerDeps): Mailer {
  const { db, clock, metrics } = deps;
  if (deps.smtpUrl) {
    const smtpUrl = deps.smtpUrl;
    // nodemailer (16 MB of resident memory) loads with the first mail to send.
    let transport: Transporter | undefined;
    const connected = async () => (transport ??= (await import('nodemailer')).default.createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS_MS }));
    const worker = createDeliveryWorker({
      outbox: createOutboxStore(db), clock, log: deps.log, metrics, notifications: deps.notifications,
      transmit: async (mail) => { await (await connected()).sendMail({ from: deps.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html }); },
      options: { ...DELIVERY_DEFAULTS, ...deps.delivery },
    });
    return {
      mode: 'delivering',
      send: async (environmentId, mail, trx) => {
        await createOutboxStore(trx ?? db).insertPending(environmentId, mail, clock.now());
        metrics.mail.inc({ outcome: 'queued' });
        // Outside a transaction the row is there now; inside one, the NOTIFY at commit wakes the worker.
        worker.wake();
      },
      start: () => worker.start(),
      close: async () => {
        await worker.stop();
        transport?.close();
      },
    };
  }
  // Said at every start: outbox mail holds codes and links in clear, which only suits development.
  deps.log.warn({ retentionMinutes: OUTBOX_RETENTION_MS / 60_000 },
    'no GATEHOUSE_SMTP_URL: mail is kept in the outbox, a mail catcher for development only; set GATEHOUSE_SMTP_URL to deliver it');
  return {
    mode: 'catching',
    send: async (environmentId, mail, trx) => {
      await createOutboxStore(trx ?? db).insertCaught(environmentId, mail, clock.now());
      metrics.mail.inc({ outcome: 'queued' });
    },
    start: () => {},
    close: async () => {},
  };
}

/** Escapes text for the HTML part of a message. */
export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

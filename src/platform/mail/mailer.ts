import type { Transporter } from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import { inTransaction, type Db } from '../db/database.js';
import type { ExternalJobHandler } from '../jobs/worker.js';
import type { Metrics } from '../metrics.js';
import { createDeliveryHandler, DELIVERY_DEFAULTS, MAIL_DELIVER_JOB, queueMail, type DeliveryOptions } from './delivery.js';
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
  /** The job queue's handlers of the mail it queues (with SMTP: 'mail.deliver'), for the app's job worker. */
  readonly jobHandlers: Record<string, ExternalJobHandler>;
}

/**
 * A job worker waits for each SMTP send, so a stalled server must not hold a message's job for
 * nodemailer's defaults (2 min to connect, 30 s for the greeting, 10 min of socket inactivity).
 * Query parameters of GATEHOUSE_SMTP_URL (`?greetingTimeout=...`) still override these.
 */
export const SMTP_TIMEOUTS_MS = { connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 10_000, dnsTimeout: 5_000 };

export interface MailerDeps {
  db: Db; clock: Clock; log: FastifyBaseLogger; metrics: Pick<Metrics, 'mail'>;
  smtpUrl?: string; from: string;
  /** How often and how soon mail is tried again (DELIVERY_DEFAULTS); tests make it quick. */
  delivery?: Partial<DeliveryOptions>;
  /** Tells this process's job worker that mail was queued outside a transaction (a commit's NOTIFY tells it otherwise). */
  wakeJobs(): void;
}

/**
 * Every mail goes to the outbox. With an SMTP URL, each message is also a 'mail.deliver' job, which the job
 * worker of this process or of any other on the database sends, with retries; without one, the outbox is a
 * mail catcher for development.
 */
export function createMailer(deps: MailerDeps): Mailer {
  const { db, clock, metrics } = deps;
  if (deps.smtpUrl) {
    const smtpUrl = deps.smtpUrl;
    const options = { ...DELIVERY_DEFAULTS, ...deps.delivery };
    // nodemailer (16 MB of resident memory) loads with the first mail to send.
    let transport: Transporter | undefined;
    const connected = async () => (transport ??= (await import('nodemailer')).default.createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS_MS }));
    const deliver = createDeliveryHandler({
      db, log: deps.log, metrics, options,
      transmit: async (mail) => { await (await connected()).sendMail({ from: deps.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html }); },
    });
    return {
      mode: 'delivering',
      send: async (environmentId, mail, trx = db) => {
        await inTransaction(trx, (inner) => queueMail(inner, environmentId, mail, clock.now(), options.maxAttempts));
        metrics.mail.inc({ outcome: 'queued' });
        // Inside a transaction, the NOTIFY at its commit wakes the worker: now the job is not there yet.
        if (!trx.isTransaction) deps.wakeJobs();
      },
      jobHandlers: { [MAIL_DELIVER_JOB]: deliver as ExternalJobHandler },
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
    jobHandlers: {},
  };
}

/** Escapes text for the HTML part of a message. */
export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

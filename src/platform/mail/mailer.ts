import nodemailer from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import { createOutboxStore } from './outbox-store.js';

export interface Mail { to: string; subject: string; text: string; html: string }

export interface Mailer {
  /** Best effort: a delivery failure is logged, never thrown at the request that caused the mail. */
  send(environmentId: string, mail: Mail): Promise<void>;
  close(): void;
}

/** SMTP through nodemailer when a URL is configured; otherwise the outbox table (a built-in mail catcher). */
export function createMailer(deps: { db: Db; clock: Clock; log: FastifyBaseLogger; smtpUrl?: string; from: string }): Mailer {
  if (deps.smtpUrl) {
    const transport = nodemailer.createTransport(deps.smtpUrl);
    return {
      send: async (_environmentId, message) => {
        try {
          await transport.sendMail({ from: deps.from, ...message });
        } catch (err) {
          deps.log.error({ err, to: message.to, subject: message.subject }, 'mail delivery failed');
        }
      },
      close: () => transport.close(),
    };
  }
  const outbox = createOutboxStore(deps.db);
  return {
    send: (environmentId, message) => outbox.insert(environmentId, message, deps.clock.now()).then(() => undefined),
    close: () => {},
  };
}

/** Escapes text for the HTML part of a message. */
export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

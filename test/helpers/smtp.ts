import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { eventually } from './eventually.js';

export interface Received { mailFrom: string; rcptTo: string[]; raw: string }

export interface SmtpServerOptions {
  /** Listen on this port (a server that comes back where it was); default a free one. */
  port?: number;
  /** Answer 550 to these recipients (a permanent refusal). */
  rejects?: (address: string) => boolean;
  /** Hold each message after its data arrived until this resolves (a slow server). */
  gate?: () => Promise<void>;
}

/** A real SMTP server on a loopback port that keeps every message it accepts. */
export async function startSmtpServer(options: SmtpServerOptions = {}) {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (options.rejects?.(address.address)) return callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        void (options.gate?.() ?? Promise.resolve()).then(() => {
          const { mailFrom, rcptTo } = session.envelope;
          received.push({ mailFrom: mailFrom ? mailFrom.address : '', rcptTo: rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
          callback();
        });
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
export type SmtpServer = Awaited<ReturnType<typeof startSmtpServer>>;

/** Messages the server accepted for this address. */
export const receivedBy = (smtp: SmtpServer, address: string) => smtp.received.filter((m) => m.rcptTo.includes(address));

/** Waits (a bounded while) until the server has accepted `count` messages for the address, and answers them. */
export async function waitForMail(smtp: SmtpServer, address: string, count = 1): Promise<Received[]> {
  await eventually(() => expect(receivedBy(smtp, address)).toHaveLength(count), { interval: 20 });
  return receivedBy(smtp, address);
}

/** Just enough MIME to read a nodemailer message: headers, and the decoded text/plain and text/html parts. */
export function parseMessage(raw: string) {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const headers = parseHeaders(head!);
  const body = rest.join('\r\n\r\n');
  const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
  const parts = boundary
    ? body.split(`--${boundary}`).slice(1, -1).map((part) => {
      const [partHead, ...partBody] = part.replace(/^\r\n/, '').split('\r\n\r\n');
      return { headers: parseHeaders(partHead!), body: partBody.join('\r\n\r\n') };
    })
    : [{ headers, body }];
  const partOf = (type: string) => {
    const part = parts.find((p) => (p.headers['content-type'] ?? '').startsWith(type));
    return part && decode(part.body, part.headers['content-transfer-encoding']);
  };
  return { headers, text: partOf('text/plain'), html: partOf('text/html') };
}

function parseHeaders(block: string): Record<string, string> {
  const unfolded = block.replace(/\r\n[ \t]+/g, ' ');
  return Object.fromEntries(unfolded.split('\r\n').map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
  }));
}

function decode(body: string, encoding = '7bit') {
  if (/base64/i.test(encoding)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (/quoted-printable/i.test(encoding)) {
    // Encoded bytes are UTF-8 (nodemailer's charset): decode them as bytes, not as characters.
    const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}

/** A `gatehouse_mail_total` counter of the app's metrics. */
export async function mailCount(t: TestApp, outcome: 'queued' | 'sent' | 'retried' | 'failed'): Promise<number> {
  const line = new RegExp(`^gatehouse_mail_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec((await t.app.inject({ method: 'GET', url: '/metrics' })).body);
  return line ? Number(line[1]) : 0;
}

/** The outbox rows of an environment, oldest first, as stored. */
export const outboxRows = (t: TestApp, environmentId: string) =>
  t.db.selectFrom('outbox_messages').selectAll().where('environment_id', '=', environmentId).orderBy('id').execute();

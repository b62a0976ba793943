import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { freePort } from '../helpers/processes.js';
import { signUp } from '../helpers/flows.js';

const SENDER = 'Gatehouse Test <auth@gatehouse.example>';

interface Received { mailFrom: string; rcptTo: string[]; raw: string }

/** A real SMTP server on a free loopback port that keeps every message it accepts. */
async function startSmtpServer() {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const { mailFrom, rcptTo } = session.envelope;
        received.push({ mailFrom: mailFrom ? mailFrom.address : '', rcptTo: rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Just enough MIME to read a nodemailer message: headers, and the decoded text/plain and text/html parts. */
function parseMessage(raw: string) {
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
    return body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
  return body;
}

/** The `sent` mail counter of the app's metrics. */
async function mailSent(t: TestApp): Promise<number> {
  const line = /^gatehouse_mail_total\{outcome="sent"\} (\d+)$/m.exec((await t.app.inject({ method: 'GET', url: '/metrics' })).body);
  return line ? Number(line[1]) : 0;
}

describe('mail delivery over SMTP (GATEHOUSE_SMTP_URL)', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let t: TestApp;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, mailFrom: SENDER });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('sends exactly one message with the 6-digit verification code to the new address, from the configured sender', async () => {
    const env = await t.given.environment();
    const email = `ada-${env.id}@example.com`;
    const before = smtp.received.length;
    const sentBefore = await mailSent(t);

    const res = await signUp(t, env, email);

    expect(res.statusCode).toBe(201);
    expect(res.json().verification).toEqual({ status: 'pending' });
    const mails = smtp.received.slice(before);
    expect(mails).toHaveLength(1);
    expect(await mailSent(t)).toBe(sentBefore + 1);
    const [mail] = mails;
    expect(mail!.mailFrom).toBe('auth@gatehouse.example');
    expect(mail!.rcptTo).toEqual([email]);
    const message = parseMessage(mail!.raw);
    expect(message.headers.from).toBe('Gatehouse Test <auth@gatehouse.example>');
    expect(message.headers.to).toBe(email);
    const code = /\b(\d{6})\b/.exec(message.headers.subject ?? '')?.[1];
    expect(code).toMatch(/^\d{6}$/);
    expect(message.text).toContain(code);
    expect(message.html).toContain(code);

    const verified = await t.client(env).post('/auth/verify-email?_is_native=true', { email, code });
    expect(verified.statusCode).toBe(200);
    expect(verified.json().user.registrationState).toBe('complete');
  });

  it('delivers the invitation as text and HTML with a sign-up link whose token signs the invitee up', async () => {
    const env = await t.given.environment({ signUpUrl: 'https://app.example.com/join?src=mail' });
    const email = `invitee-${env.id}@example.com`;
    const before = smtp.received.length;

    const res = await t.server(env).post('/invitations', { email, publicMetadata: { plan: 'pro' }, privateMetadata: {} });

    expect(res.statusCode).toBe(201);
    const mails = smtp.received.slice(before);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.rcptTo).toEqual([email]);
    const message = parseMessage(mails[0]!.raw);
    expect(message.headers.subject).toBe(`You're invited to join ${env.name}`);
    const link = new URL(/https:\/\/\S+/.exec(message.text ?? '')![0]);
    expect(`${link.origin}${link.pathname}`).toBe('https://app.example.com/join');
    expect(link.searchParams.get('src')).toBe('mail');
    const token = link.searchParams.get('invitation_token')!;
    expect(token).toMatch(/^inv_[A-Za-z0-9_-]{43}$/);
    expect(message.html).toContain(`href="${link.toString().replaceAll('&', '&amp;')}"`);

    const signedUp = await t.client(env).post('/auth/invitation/password-signup?_is_native=true', { token, password: PASSWORD, legalConsentAccepted: true });
    expect(signedUp.statusCode).toBe(201);
    expect(signedUp.json().user).toMatchObject({ email, publicMetadata: { plan: 'pro' }, registrationState: 'complete' });
  });

  it('delivers an organization invitation with a link to invitationAcceptUrl whose token signs the invitee up into the organization', async () => {
    const env = await t.given.environment({ invitationAcceptUrl: 'https://app.example.com/accept' });
    const owner = await t.given.user(env);
    const ownerClient = t.client(env, { token: (await t.given.session(env, owner)).token });
    const org = (await ownerClient.post('/organizations', { name: 'Acme' })).json();
    const email = `member-${env.id}@example.com`;
    const before = smtp.received.length;

    const res = await ownerClient.post(`/organizations/${org.id}/invitations`, { email, role: 'member' });

    expect(res.json().emailDelivery).toBe('dispatched');
    const mails = smtp.received.slice(before);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.rcptTo).toEqual([email]);
    const message = parseMessage(mails[0]!.raw);
    expect(message.headers.subject).toBe("You're invited to join Acme");
    const link = new URL(/https:\/\/\S+/.exec(message.text ?? '')![0]);
    expect(`${link.origin}${link.pathname}`).toBe('https://app.example.com/accept');
    expect(link.searchParams.get('invitation_token')).toBe(res.json().token);
    const signedUp = await t.client(env).post('/auth/organization-invitation/password-signup?_is_native=true', { token: res.json().token, password: PASSWORD, legalConsentAccepted: true });
    expect(signedUp.statusCode).toBe(201);
    const mine = (await t.client(env, { token: signedUp.json().sessionToken }).get('/organizations')).json().items;
    expect(mine).toEqual([expect.objectContaining({ id: org.id, role: 'member' })]);
  });

  it('keeps nothing in the outbox table while SMTP is configured', async () => {
    const env = await t.given.environment();
    const email = `grace-${env.id}@example.com`;

    expect((await signUp(t, env, email)).statusCode).toBe(201);

    expect(await t.outbox(env, email)).toEqual([]);
    const rows = await t.db.selectFrom('outbox_messages').select('id').where('environment_id', '=', env.id).execute();
    expect(rows).toEqual([]);
  });
});

describe('mail delivery when the SMTP server fails', () => {
  let t: TestApp | undefined;
  let stalled: { server: Server; sockets: Set<Socket> } | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
    if (stalled) {
      for (const socket of stalled.sockets) socket.destroy();
      await new Promise((resolve) => stalled!.server.close(resolve));
      stalled = undefined;
    }
  });

  it('still answers sign-up with 201 when nothing listens on the SMTP port, and logs the failure without the code', async () => {
    const deadPort = await freePort();
    t = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${deadPort}`, mailFrom: SENDER });
    const logged = vi.spyOn(t.app.log, 'error');
    const env = await t.given.environment();
    const email = `alan-${env.id}@example.com`;

    const res = await signUp(t, env, email);

    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ user: { registrationState: 'pending_email_verification' }, verification: { status: 'pending' } });
    const failures = logged.mock.calls.filter((call) => call[1] === 'mail delivery failed');
    expect(failures).toHaveLength(1);
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^gatehouse_mail_total\{outcome="failed"\} 1$/m);
    const fields = failures[0]![0] as Record<string, unknown>;
    expect(Object.keys(fields).sort()).toEqual(['environmentId', 'err', 'to']);
    expect(fields).toMatchObject({ to: email, environmentId: env.id, err: expect.objectContaining({ originalCode: 'ECONNREFUSED' }) });
    expect(JSON.stringify(fields.err)).not.toMatch(/\b\d{6}\b|verification code/i);
  });

  it('still answers sign-up with 201 when the SMTP server accepts the connection but never greets', async () => {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stalled = { server, sockets };
    t = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`, mailFrom: SENDER });
    const logged = vi.spyOn(t.app.log, 'error');
    const env = await t.given.environment();
    const started = Date.now();

    const res = await signUp(t, env, `barbara-${env.id}@example.com`);

    expect(res.statusCode).toBe(201);
    // nodemailer alone would wait 30 s for the greeting; the mailer gives up after SMTP_TIMEOUTS_MS.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(logged.mock.calls.filter((call) => call[1] === 'mail delivery failed')).toHaveLength(1);
  }, 60_000);
});

import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { freePort } from '../helpers/processes.js';
import { signUp } from '../helpers/flows.js';
import { mailCount, outboxRows, parseMessage, startSmtpServer, waitForMail, type SmtpServer } from '../helpers/smtp.js';
import { eventually } from '../helpers/eventually.js';

const SENDER = 'Gatehouse Test <auth@gatehouse.example>';
// The job worker looks for due jobs this often in these tests (5 s in production; queued mail wakes it at once).
const QUICK = { pollIntervalMs: 20 };

describe('mail delivery over SMTP (GATEHOUSE_SMTP_URL)', () => {
  let smtp: SmtpServer;
  let t: TestApp;
  // Held messages of the slow-server test: the server answers their DATA only once released.
  let hold: Promise<void> | undefined;
  beforeAll(async () => {
    smtp = await startSmtpServer({ gate: () => hold ?? Promise.resolve() });
    t = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, mailFrom: SENDER, jobs: QUICK }, { ownDatabase: true });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('sends exactly one message with the 6-digit verification code to the new address, from the configured sender', async () => {
    const env = await t.given.environment();
    const email = `ada-${env.id}@example.com`;
    const sentBefore = await mailCount(t, 'sent');

    const res = await signUp(t, env, email);

    expect(res.statusCode).toBe(201);
    expect(res.json().verification).toEqual({ status: 'pending' });
    const [mail] = await waitForMail(smtp, email);
    await eventually(async () => expect(await outboxRows(t, env.id)).toEqual([expect.objectContaining({ status: 'sent', attempts: 1 })]));
    expect(await mailCount(t, 'sent')).toBe(sentBefore + 1);
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

  it('sends one multipart/alternative message: the text part and the branded HTML part of the same mail, in the user\'s language', async () => {
    const env = await t.given.environment({ hostedPages: { branding: { productName: 'Acme', logoUrl: 'https://cdn.acme.example/logo.png', primaryColor: '#7b1fa2' } } });
    const user = await t.given.user(env, { email: `multi-${env.id}@example.com` });
    expect((await t.server(env).patch(`/users/${user.id}`, { locale: 'da' })).statusCode).toBe(200);

    expect((await t.client(env).post('/auth/forgot-password', { email: user.email })).statusCode).toBe(202);

    const [mail] = await waitForMail(smtp, user.email!);
    const message = parseMessage(mail!.raw);
    expect(message.headers['content-type']).toMatch(/^multipart\/alternative; boundary=/);
    const code = /^Din kode til nulstilling af adgangskode er (\d{6})$/.exec(message.headers.subject ?? '')?.[1];
    expect(code).toMatch(/^\d{6}$/);
    expect(message.text!.replaceAll('\r\n', '\n')).toContain(`Indtast denne kode for at vælge en ny adgangskode til din konto hos Acme:\n\n${code}\n\n`);
    expect(message.html).toContain('<html lang="da"');
    expect(message.html).toMatch(new RegExp(`>\\s*${code}\\s*<`));
    expect(message.html).toContain('src="https://cdn.acme.example/logo.png"');
    expect(message.html).toContain('Sendt af Acme.');
  });

  it('delivers the invitation as text and HTML with a sign-up link whose token signs the invitee up', async () => {
    const env = await t.given.environment({ signUpUrl: 'https://app.example.com/join?src=mail' });
    const email = `invitee-${env.id}@example.com`;

    const res = await t.server(env).post('/invitations', { email, publicMetadata: { plan: 'pro' }, privateMetadata: {} });

    expect(res.statusCode).toBe(201);
    const mails = await waitForMail(smtp, email);
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

    const res = await ownerClient.post(`/organizations/${org.id}/invitations`, { email, role: 'member' });

    expect(res.json().emailDelivery).toBe('dispatched');
    const mails = await waitForMail(smtp, email);
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

  it('keeps no subject or body of a sent message, and shows none in the admin outbox (the development mail catcher)', async () => {
    const env = await t.given.environment();
    const email = `grace-${env.id}@example.com`;

    expect((await signUp(t, env, email)).statusCode).toBe(201);
    await waitForMail(smtp, email);

    await eventually(async () => expect(await outboxRows(t, env.id)).toEqual([expect.objectContaining({
      to_address: email, status: 'sent', attempts: 1, subject: '', text_body: '', html_body: '', next_attempt_at: null, last_error: null,
      finished_at: t.clock.now(),
    })]));
    expect(await t.outbox(env, email)).toEqual([]);
  });

  it('answers the request while the SMTP server still holds the message, and delivers it once the server answers', async () => {
    const env = await t.given.environment();
    const email = `slow-${env.id}@example.com`;
    let release!: () => void;
    hold = new Promise((resolve) => { release = resolve; });
    try {
      const res = await signUp(t, env, email);

      expect(res.statusCode).toBe(201);
      // The worker has handed the message over (its data is in) but the server has not answered yet.
      await eventually(async () => expect(await outboxRows(t, env.id)).toEqual([expect.objectContaining({ status: 'pending', attempts: 1 })]));
      expect(smtp.received.filter((m) => m.rcptTo.includes(email))).toEqual([]);
    } finally {
      hold = undefined;
      release();
    }
    await waitForMail(smtp, email);
    await eventually(async () => expect(await outboxRows(t, env.id)).toEqual([expect.objectContaining({ status: 'sent', attempts: 1 })]));
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

  it('answers sign-up with 201 when nothing listens on the SMTP port, and logs the failed attempt, without the code, for a retry', async () => {
    const deadPort = await freePort();
    t = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${deadPort}`, mailFrom: SENDER, jobs: QUICK }, { ownDatabase: true });
    const logged = vi.spyOn(t.app.log, 'warn');
    const env = await t.given.environment();
    const email = `alan-${env.id}@example.com`;

    const res = await signUp(t, env, email);

    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ user: { registrationState: 'pending_email_verification' }, verification: { status: 'pending' } });
    const retries = () => logged.mock.calls.filter((call) => call[1] === 'mail delivery attempt failed; will retry');
    await eventually(() => expect(retries()).toHaveLength(1));
    expect(await mailCount(t, 'retried')).toBe(1);
    // The worker logs inside the transaction that records the attempt: the row is read once that commits.
    await eventually(async () => expect(await outboxRows(t!, env.id)).toEqual([expect.objectContaining({
      status: 'pending', attempts: 1, last_error: 'ESOCKET', subject: expect.stringMatching(/^Your verification code is \d{6}$/),
    })]));
    const [row] = await outboxRows(t, env.id);
    const fields = retries()[0]![0] as Record<string, unknown>;
    expect(Object.keys(fields).sort()).toEqual(['attempt', 'environmentId', 'err', 'messageId', 'nextAttemptAt', 'to']);
    expect(fields).toMatchObject({
      to: email, environmentId: env.id, messageId: row!.id, attempt: 1, nextAttemptAt: row!.next_attempt_at,
      err: expect.objectContaining({ code: 'ESOCKET', originalCode: 'ECONNREFUSED' }),
    });
    expect(JSON.stringify(fields.err)).not.toMatch(/\b\d{6}\b|verification code/i);
  });

  it('gives up an attempt on a server that accepts the connection but never greets, and schedules a retry', async () => {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stalled = { server, sockets };
    t = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`, mailFrom: SENDER, jobs: QUICK }, { ownDatabase: true });
    const logged = vi.spyOn(t.app.log, 'warn');
    const env = await t.given.environment();

    const res = await signUp(t, env, `barbara-${env.id}@example.com`);

    expect(res.statusCode).toBe(201);
    // nodemailer alone would wait 30 s for the greeting (and hold the message's lease); the mailer gives up after SMTP_TIMEOUTS_MS.
    await eventually(() => expect(logged.mock.calls.filter((call) => call[1] === 'mail delivery attempt failed; will retry')).toEqual([
      [expect.objectContaining({ attempt: 1, err: expect.objectContaining({ code: 'ETIMEDOUT' }) }), 'mail delivery attempt failed; will retry'],
    ]), { interval: 100 });
    await eventually(async () => expect(await outboxRows(t!, env.id)).toEqual([expect.objectContaining({ status: 'pending', attempts: 1, last_error: 'ETIMEDOUT' })]));
  });
});

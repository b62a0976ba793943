import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AppOptions } from '../../src/app.js';
import { createJobsStore } from '../../src/platform/jobs/store.js';
import type { JobWorkerOptions } from '../../src/platform/jobs/worker.js';
import { queueMail } from '../../src/platform/mail/delivery.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signUp } from '../helpers/flows.js';
import { freePort } from '../helpers/processes.js';
import { mailCount, outboxRows, parseMessage, receivedBy, startSmtpServer, waitForMail, type SmtpServer } from '../helpers/smtp.js';
import { eventually } from '../helpers/eventually.js';

const SECOND = 1000;
// A first retry after 0.5 to 1 s of the test clock (which only moves when told), and a job worker that polls quickly.
const DELIVERY = { baseDelayMs: SECOND, maxDelayMs: 60 * SECOND, maxAttempts: 5 };
const JOBS = { pollIntervalMs: 20, leaseMs: 60 * SECOND };

describe('mail delivery from the outbox, with retries', () => {
  let t: TestApp | undefined;
  let smtp: SmtpServer | undefined;
  afterEach(async () => {
    await t?.close();
    await smtp?.close();
    t = undefined;
    smtp = undefined;
  });

  const start = async (port: number, delivery: Partial<AppOptions['mailDelivery']> = {}, jobs: Partial<JobWorkerOptions> = {}) => {
    t = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${port}`, mailDelivery: { ...DELIVERY, ...delivery }, jobs: { ...JOBS, ...jobs } }, { ownDatabase: true });
    return t;
  };
  /** The environment's one outbox row once it has had `attempts` attempts and none is under way (next_attempt_at is set then, or it is done). */
  const afterAttempt = async (t: TestApp, environmentId: string, attempts: number, status = 'pending') => {
    await eventually(async () => {
      const [row] = await outboxRows(t, environmentId);
      expect(row).toMatchObject({ attempts, status });
      if (status === 'pending') expect(row!.last_error).not.toBeNull();
      expect(row!.next_attempt_at === null || row!.next_attempt_at.getTime() - t.clock.now().getTime() < JOBS.leaseMs).toBe(true);
    }, { interval: 20 });
    return (await outboxRows(t, environmentId))[0]!;
  };

  it('delivers mail queued while the SMTP server was down once it is back, after retries whose delay doubles', async () => {
    const port = await freePort();
    const t = await start(port);
    const env = await t.given.environment();
    const email = `late-${env.id}@example.com`;

    expect((await signUp(t, env, email)).statusCode).toBe(201);

    const first = await afterAttempt(t, env.id, 1);
    const firstDelay = first.next_attempt_at!.getTime() - t.clock.now().getTime();
    expect(firstDelay).toBeGreaterThanOrEqual(SECOND / 2);
    expect(firstDelay).toBeLessThanOrEqual(SECOND);
    expect(first.last_error).toBe('ESOCKET');
    t.clock.set(first.next_attempt_at!);
    const second = await afterAttempt(t, env.id, 2);
    const secondDelay = second.next_attempt_at!.getTime() - t.clock.now().getTime();
    expect(secondDelay).toBeGreaterThanOrEqual(SECOND);
    expect(secondDelay).toBeLessThanOrEqual(2 * SECOND);

    smtp = await startSmtpServer({ port });
    t.clock.set(second.next_attempt_at!);
    const [mail] = await waitForMail(smtp, email);
    await afterAttempt(t, env.id, 3, 'sent');
    expect(await mailCount(t, 'queued')).toBe(1);
    expect(await mailCount(t, 'retried')).toBe(2);
    expect(await mailCount(t, 'sent')).toBe(1);
    const code = /\b(\d{6})\b/.exec(parseMessage(mail!.raw).headers.subject ?? '')?.[1];
    expect((await t.client(env).post('/auth/verify-email?_is_native=true', { email, code })).statusCode).toBe(200);
  });

  it('gives up after the last attempt: marked failed, subject and bodies cleared, the failure logged once without them', async () => {
    const t = await start(await freePort(), { maxAttempts: 3 });
    const failures = vi.spyOn(t.app.log, 'error');
    const env = await t.given.environment();
    const email = `never-${env.id}@example.com`;
    expect((await signUp(t, env, email)).statusCode).toBe(201);

    for (const attempt of [1, 2]) t.clock.set((await afterAttempt(t, env.id, attempt)).next_attempt_at!);
    const row = await afterAttempt(t, env.id, 3, 'failed');

    expect(row).toMatchObject({
      to_address: email, subject: '', text_body: '', html_body: '', next_attempt_at: null, last_error: 'ESOCKET', finished_at: t.clock.now(),
    });
    expect(await mailCount(t, 'retried')).toBe(2);
    expect(await mailCount(t, 'failed')).toBe(1);
    const logged = failures.mock.calls.filter((call) => call[1] === 'mail delivery failed');
    expect(logged).toEqual([[expect.objectContaining({ environmentId: env.id, messageId: row.id, to: email, attempt: 3 }), 'mail delivery failed']]);
    expect(JSON.stringify(logged)).not.toMatch(/\b\d{6}\b|verification code/i);
  });

  it('gives up at once when the server refuses the recipient for good (550), without retrying', async () => {
    smtp = await startSmtpServer({ rejects: (address) => address.startsWith('nobody-') });
    const t = await start(smtp.port);
    const env = await t.given.environment();

    expect((await signUp(t, env, `nobody-${env.id}@example.com`)).statusCode).toBe(201);

    expect(await afterAttempt(t, env.id, 1, 'failed')).toMatchObject({ last_error: 'EENVELOPE 550', subject: '' });
    expect(await mailCount(t, 'retried')).toBe(0);
    expect(await mailCount(t, 'failed')).toBe(1);
    expect(smtp.received).toEqual([]);
  });

  it('sends again, once, a message whose worker died after claiming it, when its lease has run out (at least once)', async () => {
    smtp = await startSmtpServer();
    const t = await start(smtp.port);
    const env = await t.given.environment();
    const orphan = `orphan-${env.id}@example.com`;
    // A worker of another process claims the message's job as it is queued, then dies before sending it.
    await t.db.transaction().execute(async (trx) => {
      await queueMail(trx, env.id, { to: orphan, subject: 'Orphan', text: 'text', html: '<p>html</p>' }, t.clock.now(), DELIVERY.maxAttempts);
      expect(await createJobsStore(trx).claimDue(t.clock.now(), new Date(t.clock.now().getTime() + JOBS.leaseMs), 10)).toHaveLength(1);
    });

    // Just before the lease ends, this worker drains all that is due: mail queued now, not the orphan.
    t.clock.advance(JOBS.leaseMs - 1);
    const other = `other-${env.id}@example.com`;
    expect((await signUp(t, env, other)).statusCode).toBe(201);
    await waitForMail(smtp, other);
    expect(receivedBy(smtp, orphan)).toEqual([]);

    t.clock.advance(1);
    await waitForMail(smtp, orphan);
    await eventually(async () => expect((await outboxRows(t, env.id)).find((r) => r.to_address === orphan)).toMatchObject({ status: 'sent', attempts: 2 }));
    expect(receivedBy(smtp, orphan)).toHaveLength(1);
  });

  it('delivers mail queued in the transaction of an invitation at once, without waiting for the next poll', async () => {
    smtp = await startSmtpServer();
    // The worker would not look by itself within the test: the commit (NOTIFY on PostgreSQL) wakes it.
    const t = await start(smtp.port, {}, { pollIntervalMs: 600_000 });
    const env = await t.given.environment({ signUpUrl: 'https://app.example.com/join' });
    const email = `invitee-${env.id}@example.com`;

    expect((await t.server(env).post('/invitations', { email, publicMetadata: {}, privateMetadata: {} })).statusCode).toBe(201);

    await waitForMail(smtp, email);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('wakes at the commit of mail another process queued (NOTIFY; PostgreSQL only), without waiting for the next poll', async () => {
    smtp = await startSmtpServer();
    const t = await start(smtp.port, {}, { pollIntervalMs: 600_000 });
    const env = await t.given.environment();
    const email = `elsewhere-${env.id}@example.com`;

    // Queued as another process would: this app's mailer never hears of it, only the database tells.
    await t.db.transaction().execute((trx) =>
      queueMail(trx, env.id, { to: email, subject: 'Queued elsewhere', text: 'text', html: '<p>html</p>' }, t.clock.now(), DELIVERY.maxAttempts));

    await waitForMail(smtp, email);
  });

  it('reports the backlog in the metrics: mail waiting for delivery and how long the oldest has waited', async () => {
    const t = await start(await freePort());
    const env = await t.given.environment();
    const metric = async (name: string) =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec((await t.app.inject({ method: 'GET', url: '/metrics' })).body)?.[1]);
    expect(await metric('gatehouse_mail_pending')).toBe(0);
    expect(await metric('gatehouse_mail_oldest_pending_seconds')).toBe(0);

    expect((await signUp(t, env, `a-${env.id}@example.com`)).statusCode).toBe(201);
    t.clock.advance(30 * SECOND);
    expect((await signUp(t, env, `b-${env.id}@example.com`)).statusCode).toBe(201);

    expect(await metric('gatehouse_mail_pending')).toBe(2);
    expect(await metric('gatehouse_mail_oldest_pending_seconds')).toBe(30);
  });
});

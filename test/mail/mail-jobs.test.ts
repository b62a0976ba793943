import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createJobsStore } from '../../src/platform/jobs/store.js';
import { MAIL_DELIVER_JOB, queueMail } from '../../src/platform/mail/delivery.js';
import { createMailer, DEFAULT_MAIL_FROM } from '../../src/platform/mail/mailer.js';
import { createOutboxStore } from '../../src/platform/mail/outbox-store.js';
import { createMetrics } from '../../src/platform/metrics.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { outboxRows, parseMessage, startSmtpServer, waitForMail, type SmtpServer } from '../helpers/smtp.js';
import { eventually } from '../helpers/eventually.js';

const SECOND = 1000;
const JOBS = { pollIntervalMs: 20, leaseMs: 60 * SECOND };
const MAIL = { subject: 'Your code is 123456', text: 'Enter 123456 to go on.', html: '<p>Enter <b>123456</b> to go on.</p>' };

describe('mail as jobs of the job queue (mail.deliver)', () => {
  let t: TestApp | undefined;
  let smtp: SmtpServer | undefined;
  afterEach(async () => {
    await t?.close();
    await smtp?.close();
    t = undefined;
    smtp = undefined;
  });

  const start = async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, jobs: JOBS }, { ownDatabase: true });
    return { t, smtp };
  };
  const mailJobs = (t: TestApp, environmentId: string) =>
    t.db.selectFrom('jobs').select(['kind', 'payload', 'status', 'run_at', 'attempts', 'max_attempts'])
      .where('environment_id', '=', environmentId).where('kind', '=', MAIL_DELIVER_JOB).execute();

  it('delivers mail left pending by the version before the job queue once migration 0029 has queued it, its attempts carried on', async () => {
    const { t, smtp } = await start();
    const env = await t.given.environment();
    const email = `upgraded-${env.id}@example.com`;
    // As the old mail worker left it: two failed attempts, due again in a minute, and no job.
    const id = await createOutboxStore(t.db).insertPending(env.id, { to: email, ...MAIL }, t.clock.now());
    const dueAt = new Date(t.clock.now().getTime() + 60 * SECOND);
    await t.db.updateTable('outbox_messages').set({ attempts: 2, next_attempt_at: dueAt, last_error: 'ESOCKET' })
      .where('environment_id', '=', env.id).where('id', '=', id).execute();

    const migration = await readFile(new URL('../../migrations/0029_mail_jobs.sql', import.meta.url), 'utf8');
    await t.db.transaction().execute((trx) => sql.raw(migration).execute(trx));

    expect(await mailJobs(t, env.id)).toEqual([{ kind: MAIL_DELIVER_JOB, payload: { messageId: id }, status: 'queued', run_at: dueAt, attempts: 2, max_attempts: 20 }]);
    t.clock.set(dueAt);
    const [mail] = await waitForMail(smtp, email);
    expect(parseMessage(mail!.raw).headers.subject).toBe(MAIL.subject);
    await eventually(async () => expect(await outboxRows(t, env.id)).toEqual([expect.objectContaining({
      status: 'sent', attempts: 3, subject: '', text_body: '', html_body: '', last_error: null, finished_at: dueAt,
    })]));
    expect(await mailJobs(t, env.id)).toEqual([expect.objectContaining({ status: 'done', attempts: 3 })]);
  });

  it('sends a message again, with the same content, when the process that sent it died before recording it (at least once)', async () => {
    const { t, smtp } = await start();
    const env = await t.given.environment();
    const email = `twice-${env.id}@example.com`;
    const now = t.clock.now();
    // Another process's worker claims the job as it is queued, sends the message, and dies before settling.
    const [job] = await t.db.transaction().execute(async (trx) => {
      await queueMail(trx, env.id, { to: email, ...MAIL }, now, 20);
      return createJobsStore(trx).claimDue(now, new Date(now.getTime() + JOBS.leaseMs), 10);
    });
    const dying = createMailer({
      db: t.db, clock: t.clock, log: t.app.log, metrics: createMetrics(), smtpUrl: `smtp://127.0.0.1:${smtp.port}`, from: DEFAULT_MAIL_FROM, wakeJobs: () => {},
    });
    await dying.jobHandlers[MAIL_DELIVER_JOB]!.perform([job!]);
    await waitForMail(smtp, email);
    expect(await outboxRows(t, env.id)).toEqual([expect.objectContaining({ status: 'pending', attempts: 1, next_attempt_at: null, subject: MAIL.subject })]);

    t.clock.advance(JOBS.leaseMs);

    const sent = (await waitForMail(smtp, email, 2)).map((m) => parseMessage(m.raw));
    await eventually(async () => expect(await outboxRows(t, env.id)).toEqual([expect.objectContaining({ status: 'sent', attempts: 2, subject: '' })]));
    expect(await mailJobs(t, env.id)).toEqual([expect.objectContaining({ status: 'done', attempts: 2 })]);
    for (const message of sent) {
      expect(message.headers.subject).toBe(MAIL.subject);
      expect(message.text?.trimEnd()).toBe(MAIL.text);
      expect(message.html?.trimEnd()).toBe(MAIL.html);
    }
    expect(smtp.received).toHaveLength(2);
  });
});

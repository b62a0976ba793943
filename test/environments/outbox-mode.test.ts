import { afterEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startSmtpServer, waitForMail, type SmtpServer } from '../helpers/smtp.js';

const password = 'a long enough password 1';

describe("GET /api/admin/v1/environments/:id/outbox says whether the outbox catches mail", () => {
  let t: TestApp | undefined;
  let smtp: SmtpServer | undefined;
  afterEach(async () => {
    await t?.close();
    await smtp?.close();
    t = undefined;
    smtp = undefined;
  });

  it('is catching without GATEHOUSE_SMTP_URL, with the caught mail listed', async () => {
    t = await startTestApp();
    const env = await t.given.environment();
    const email = `caught-${Date.now()}@example.com`;
    expect((await t.client(env).post('/auth/sign-up', { email, password })).statusCode).toBe(201);
    const res = await t.admin.get(`/environments/${env.id}/outbox`);
    expect(res.statusCode).toBe(200);
    expect(res.json().mode).toBe('catching');
    expect(res.json().items.map((item: { to: string }) => item.to)).toEqual([email]);
  });

  it('is delivering with an SMTP server configured, and then keeps no mail to read', async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, jobs: { pollIntervalMs: 20 } }, { ownDatabase: true });
    const env = await t.given.environment();
    const email = `delivered-${Date.now()}@example.com`;
    expect((await t.client(env).post('/auth/sign-up', { email, password })).statusCode).toBe(201);
    await waitForMail(smtp, email);
    const res = await t.admin.get(`/environments/${env.id}/outbox`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ items: [], mode: 'delivering' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { ACCEPTED, answer, CODE_LIFETIME_MS, passwordReset, RESET_SUBJECT } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());
const { forgot, requestCode, codeRow } = passwordReset(() => t);

describe('POST /_svc/auth/forgot-password', () => {
  it('answers a live, an unknown, a deleted and a banned email identically, and mails only the live account', async () => {
    const env = await t.given.environment();
    await t.given.user(env, { email: 'live@example.com' });
    const deleted = await t.given.user(env, { email: 'deleted@example.com' });
    const banned = await t.given.user(env, { email: 'banned@example.com' });
    expect((await t.server(env).delete(`/users/${deleted.id}`)).statusCode).toBe(204);
    expect((await t.server(env).post(`/users/${banned.id}/ban`)).statusCode).toBe(200);

    const emails = ['live@example.com', 'nobody@example.com', 'deleted@example.com', 'banned@example.com'];
    const answers = [];
    for (const email of emails) answers.push(answer(await forgot(env, email)));

    expect(answers[0].status).toBe(202);
    expect(answers[0].headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(answers[0].body)).toEqual(ACCEPTED);
    expect(answers[0].headers['set-cookie']).toBeUndefined();
    for (const other of answers.slice(1)) expect(other).toEqual(answers[0]);
    const live = await t.outbox(env, 'live@example.com');
    expect(live).toHaveLength(1);
    expect(live[0].subject).toMatch(RESET_SUBJECT);
    for (const email of emails.slice(1)) expect(await t.outbox(env, email)).toHaveLength(0);
  });

  it('mails a 6-digit code in text and HTML, stored only as a hash bound to the user, valid for 10 minutes', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });

    const code = await requestCode(env, 'ada@example.com');

    const [mail] = await t.outbox(env, 'ada@example.com');
    expect(mail.text).toBe(`Enter this code to choose a new password for your ${env.name} account:\n\n${code}\n\n`
      + 'It expires in 10 minutes. If you did not ask to reset your password, ignore this email; your password stays as it is.'
      + `\n\n-- \nSent by ${env.name}.`);
    expect(mail.html).toMatch(new RegExp(`>\\s*${code}\\s*<`));
    expect(mail.html).toContain('It expires in 10 minutes.');
    const row = await codeRow(env, user.id);
    expect(row).toMatchObject({ attempts: 0, used_at: null });
    expect(Buffer.from(row.code_hash)).toHaveLength(32);
    expect(JSON.stringify(row)).not.toContain(code);
    expect(row.expires_at.getTime()).toBe(t.clock.now().getTime() + CODE_LIFETIME_MS);
  });

  it('accepts the email in any letter case', async () => {
    const env = await t.given.environment();
    await t.given.user(env, { email: 'ada@example.com' });
    expect((await forgot(env, 'ADA@Example.COM')).statusCode).toBe(202);
    expect(await t.outbox(env, 'ada@example.com')).toHaveLength(1);
  });

  it("mails nothing for another environment's account", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    await t.given.user(theirs, { email: 'ada@example.com' });
    expect(answer(await forgot(mine, 'ada@example.com'))).toEqual(answer(await forgot(mine, 'nobody@example.com')));
    expect(await t.outbox(mine, 'ada@example.com')).toHaveLength(0);
    expect(await t.outbox(theirs, 'ada@example.com')).toHaveLength(0);
  });

  it('limits requests to 5 per email per hour whether or not an account has it, answering 429 with Retry-After', async () => {
    const env = await t.given.environment();
    await t.given.user(env, { email: 'live@example.com' });
    for (let i = 0; i < 5; i++) {
      expect((await forgot(env, 'live@example.com')).statusCode).toBe(202);
      expect((await forgot(env, 'nobody@example.com')).statusCode).toBe(202);
    }

    const live = await forgot(env, 'LIVE@example.com');
    const unknown = await forgot(env, 'nobody@example.com');

    const body = expectProblem(live, 429, 'rate_limited');
    const retryAfter = Number(live.headers['retry-after']);
    expect(live.headers['retry-after']).toMatch(/^\d+$/);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(body.properties).toEqual({ code: 'rate_limited', retryAfterSeconds: retryAfter });
    expect(answer(unknown)).toEqual(answer(live));
    expect(await t.outbox(env, 'live@example.com')).toHaveLength(5);
    expect((await forgot(env, 'someone-else@example.com')).statusCode).toBe(202);

    t.clock.advance(retryAfter * 1000);
    expect((await forgot(env, 'live@example.com')).statusCode).toBe(202);
    expect(await t.outbox(env, 'live@example.com')).toHaveLength(6);
  });

  it('limits requests to 30 per client IP per hour across emails', async () => {
    const env = await t.given.environment();
    await t.given.user(env, { email: 'live@example.com' });
    for (let i = 0; i < 30; i++) expect((await forgot(env, `person-${i}@example.com`, '203.0.113.7')).statusCode).toBe(202);

    const res = await forgot(env, 'live@example.com', '203.0.113.7');

    expectProblem(res, 429, 'rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(await t.outbox(env, 'live@example.com')).toHaveLength(0);
    expect((await forgot(env, 'live@example.com', '198.51.100.9')).statusCode).toBe(202);
  });

  it('refuses bad bodies with 400 invalid_request and properties.errors', async () => {
    const env = await t.given.environment();
    const cases: [unknown, string][] = [
      [{ email: 'not-an-email' }, '/body/email'],
      [{ email: 'ada@example.com', redirectUrl: 'https://evil.example' }, '/body/redirectUrl'],
      [{}, '/body/email'],
    ];
    for (const [body, path] of cases) {
      const res = await t.client(env).post('/auth/forgot-password', body as Record<string, unknown>);
      const problem = expectProblem(res, 400, 'invalid_request');
      expect(problem.properties.errors).toContainEqual(expect.objectContaining({ path }));
    }
    expect(await t.outbox(env, 'ada@example.com')).toHaveLength(0);
  });
});

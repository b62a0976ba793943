import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTBOX_RETENTION_MS } from '../../src/platform/mail/outbox-store.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';


// Pruning is global, and under TEST_DATABASE_URL other test files share the database: this mail is
// sent in 2001 so the sweep's cut-off can only ever reach it.
const LONG_AGO = '2001-01-01T00:00:00.000Z';

describe('the outbox (development mail catcher)', () => {
  let t: TestApp;
  const warnings: Record<string, unknown>[] = [];
  beforeAll(async () => {
    t = await startTestApp({ logLevel: 'warn', logStream: { write: (line) => { warnings.push(JSON.parse(line)); } } });
  });
  afterAll(() => t.close());

  it('keeps mail for one hour, and says at start that it is a mail catcher for development only', () => {
    expect(OUTBOX_RETENTION_MS).toBe(3_600_000);
    expect(warnings).toEqual([expect.objectContaining({
      level: 40, retentionMinutes: 60,
      msg: 'no GATEHOUSE_SMTP_URL: mail is kept in the outbox, a mail catcher for development only; set GATEHOUSE_SMTP_URL to deliver it',
    })]);
  });

  it('loses mail older than the retention at the next housekeeping sweep and keeps newer mail', async () => {
    const env = await t.given.environment();
    const signUp = (email: string) => t.client(env).post('/auth/sign-up', { email, password: PASSWORD });
    t.clock.set(LONG_AGO);
    expect((await signUp('old@example.com')).statusCode).toBe(201);
    t.clock.advance(60_000);
    expect((await signUp('recent@example.com')).statusCode).toBe(201);
    expect(await t.outbox(env, 'old@example.com')).toHaveLength(1);

    t.clock.advance(OUTBOX_RETENTION_MS);
    await t.app.runHousekeeping();

    expect(await t.outbox(env, 'old@example.com')).toEqual([]);
    expect(await t.outbox(env, 'recent@example.com')).toEqual([
      expect.objectContaining({ subject: expect.any(String), createdAt: new Date(Date.parse(LONG_AGO) + 60_000).toISOString() }),
    ]);
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteInBatches } from '../../src/platform/db/batches.js';
import { createOutboxStore } from '../../src/platform/mail/outbox-store.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { outboxRows } from '../helpers/smtp.js';


const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const START = '2024-03-01T00:00:00.000Z';
// Not the defaults (30 and 7 days): the app takes what it is given.
const HOUSEKEEPING = { sessionRetentionDays: 20, outboxRetentionDays: 3 };

describe('retention of ended sessions and delivered mail (the housekeeping sweep)', () => {
  let t: TestApp;
  // Every prune sweeps all environments: a database of this file's own keeps other files' rows out of reach.
  beforeAll(async () => { t = await startTestApp({ housekeeping: HOUSEKEEPING }, { ownDatabase: true }); });
  afterAll(() => t.close());
  const sweep = () => t.app.runHousekeeping();

  const sessionIds = async (env: TestEnv, userId: string) =>
    (await t.server(env).get(`/users/${userId}/sessions?limit=100`)).json().items.map((s: { id: string; status: string }) => `${s.id}:${s.status}`).sort();
  const revoke = async (env: TestEnv, userId: string, sessionId: string) =>
    expect((await t.server(env).delete(`/users/${userId}/sessions/${sessionId}`)).statusCode).toBe(204);

  it('deletes sessions revoked, or past their absolute expiry, longer ago than the retention, and keeps the rest listable', async () => {
    t.clock.set(START);
    const lifetime = { session: { maxLifetimeSeconds: 86_400, idleTimeoutSeconds: 86_400 } };
    const [env, other] = [await t.given.environment(lifetime), await t.given.environment(lifetime)];
    const [ada, bob] = [await t.given.user(env), await t.given.user(other)];
    const revokedEarly = await t.given.session(env, ada);
    await t.given.session(env, ada); // expires on day 1
    await t.given.session(other, bob); // expires on day 1, in another environment
    t.clock.advance(HOUR);
    await revoke(env, ada.id, revokedEarly.id);
    t.clock.set(new Date(Date.parse(START) + 11 * DAY));
    const revokedLater = await t.given.session(env, ada);
    await revoke(env, ada.id, revokedLater.id);
    const expiredLater = await t.given.session(env, ada);
    t.clock.set(new Date(Date.parse(START) + 30 * DAY));
    const live = await t.given.session(env, ada);

    // The cut-off is now 20 days back: day 10, an hour past the revocation and expiry of the early ones.
    t.clock.advance(HOUR);
    await sweep();

    expect(await sessionIds(env, ada.id)).toEqual([
      `${revokedLater.id}:revoked`, `${expiredLater.id}:expired`, `${live.id}:active`,
    ].sort());
    expect(await sessionIds(other, bob.id)).toEqual([]);

    // Ten days on, the later ones have ended more than 20 days ago as well; the live one stays.
    t.clock.advance(10 * DAY);
    await sweep();
    expect(await sessionIds(env, ada.id)).toEqual([`${live.id}:expired`]);
  });

  it('deletes delivered, failed and abandoned mail records after GATEHOUSE_RETENTION_OUTBOX_DAYS, caught mail after an hour', async () => {
    const [env, other] = [await t.given.environment(), await t.given.environment()];
    const outbox = createOutboxStore(t.db);
    const mail = (to: string) => ({ to, subject: 'Your code is 123456', text: 'text', html: '<p>html</p>' });
    /** Queues the mail and begins its first attempt at once; then sent, failed, or left pending (its worker died). */
    const queue = async (environmentId: string, to: string, outcome: 'sent' | 'failed' | 'pending') => {
      const id = await outbox.insertPending(environmentId, mail(to), t.clock.now());
      expect((await outbox.beginAttempt(environmentId, id, 1))?.to).toBe(to);
      if (outcome === 'sent') await outbox.markSent(environmentId, id, t.clock.now());
      if (outcome === 'failed') await outbox.markFailed(environmentId, id, 1, t.clock.now(), 'ESOCKET');
    };
    t.clock.set(START);
    await queue(env.id, 'old-sent@example.com', 'sent');
    await queue(env.id, 'old-failed@example.com', 'failed');
    await queue(env.id, 'old-abandoned@example.com', 'pending');
    await queue(other.id, 'other-old@example.com', 'sent');
    await outbox.insertCaught(env.id, mail('old-caught@example.com'), t.clock.now());
    t.clock.advance(2 * DAY);
    await queue(env.id, 'recent-sent@example.com', 'sent');
    t.clock.advance(DAY - HOUR / 2);
    await outbox.insertCaught(env.id, mail('recent-caught@example.com'), t.clock.now());

    // Three days and a minute after the old mail; half an hour after the recent caught mail.
    t.clock.advance(HOUR / 2 + 60_000);
    await sweep();

    expect((await outboxRows(t, env.id)).map((r) => `${r.to_address}:${r.status}`)).toEqual(['recent-sent@example.com:sent', 'recent-caught@example.com:caught']);
    expect(await outboxRows(t, other.id)).toEqual([]);
    t.clock.advance(HOUR);
    await sweep();
    expect((await outboxRows(t, env.id)).map((r) => r.to_address)).toEqual(['recent-sent@example.com']);
  });

  it('deletes in batches: a backlog larger than a batch goes in several statements, and rows that do not match stay', async () => {
    const env = await t.given.environment();
    await sql`insert into rate_limit_windows (environment_id, bucket, window_start, count)
              select ${env.id}::uuid, 'bucket-' || n, timestamptz '2001-01-01' + n * interval '1 minute', 1 from generate_series(1, 7) n`.execute(t.db);
    await sql`insert into rate_limit_windows (environment_id, bucket, window_start, count) values (${env.id}::uuid, 'recent', timestamptz '2001-02-01', 1)`.execute(t.db);
    const statements: number[] = [];
    const counting = t.db.withPlugin({
      transformQuery: (args) => { if (args.node.kind === 'RawNode') statements.push(1); return args.node; },
      transformResult: async (args) => args.result,
    });

    const deleted = await deleteInBatches(counting, 'rate_limit_windows', sql<boolean>`environment_id = ${env.id}::uuid and window_start < timestamptz '2001-01-15'`, 3);

    expect(deleted).toBe(7);
    expect(statements).toHaveLength(3); // 3 + 3 + 1: the short batch ends it
    const left = await t.db.selectFrom('rate_limit_windows').select('bucket').where('environment_id', '=', env.id).execute();
    expect(left).toEqual([{ bucket: 'recent' }]);
  });
});

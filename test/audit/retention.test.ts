import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { append, eventBody, storedEvents } from './support.js';


const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const START = '2024-03-01T00:00:00.000Z';
const at = (days: number, hours = 0) => new Date(Date.parse(START) + days * DAY + hours * HOUR);

describe('audit retention (environment setting auditRetentionDays)', () => {
  let t: TestApp;
  // The sweep reaches every environment's events: a database of this file's own keeps other files' out of reach.
  beforeAll(async () => { t = await startTestApp({}, { ownDatabase: true }); });
  afterAll(() => t.close());
  const sweep = () => t.app.runHousekeeping();
  const setRetention = async (env: TestEnv, auditRetentionDays: number | null) => {
    const res = await t.admin.patch(`/environments/${env.id}`, { settings: { auditRetentionDays } });
    expect(res.statusCode).toBe(200);
    expect(res.json().settings.auditRetentionDays).toBe(auditRetentionDays);
  };
  const appended = async (env: TestEnv, action: string, occurredAt = t.clock.now()) => {
    const res = await append(t, env, eventBody(t, { action, occurredAt: occurredAt.toISOString() }));
    expect(res.statusCode).toBe(201);
    return res.json().sequence as number;
  };
  const actions = async (env: TestEnv) => (await storedEvents(t, env)).map((e) => e.action);

  it('keeps events for good by default', async () => {
    const env = await t.given.environment();
    expect((await t.admin.get(`/environments/${env.id}`)).json().settings.auditRetentionDays).toBeNull();
  });

  it("deletes an environment's events recorded and occurred longer ago than its retention, and nothing else", async () => {
    t.clock.set(START);
    const [env, keepsAll, longer] = [await t.given.environment(), await t.given.environment(), await t.given.environment()];
    await setRetention(env, 10);
    await setRetention(longer, 30);
    await appended(env, 'day0.event');
    await appended(keepsAll, 'day0.event');
    await appended(longer, 'day0.event');
    t.clock.set(at(5));
    // Backdated by 29 days on append: occurred long before the cut-off, but recorded only on day 5.
    await appended(env, 'day5.backdated', at(-24));
    await appended(env, 'day5.event');

    t.clock.set(at(10, 1)); // the cut-off of `env` is day 0, 1 o'clock
    await sweep();

    // The environment's own trail (its first secret key, its settings) went with the day-0 events.
    expect(await actions(env)).toEqual(['day5.backdated', 'day5.event']);
    expect(await actions(keepsAll)).toEqual(['secret_key.created', 'day0.event']);
    expect(await actions(longer)).toEqual(['secret_key.created', 'day0.event']);
    const feed = await t.server(env).get('/audit-events/feed?afterSequence=0&limit=10');
    expect(feed.statusCode).toBe(200);
    expect(feed.json().items.map((e: { action: string }) => e.action)).toEqual(['day5.backdated', 'day5.event']);

    t.clock.set(at(15, 1));
    await sweep();
    expect(await actions(env)).toEqual([]);
    expect(await actions(keepsAll)).toHaveLength(2);
    expect(await actions(longer)).toHaveLength(2);
    // The sequence goes on where it was: a feed reader never sees a number twice.
    const next = await appended(env, 'day15.event');
    expect(next).toBeGreaterThan(3);
  });

  it('keeps everything again once the retention is set back to null', async () => {
    t.clock.set(START);
    const env = await t.given.environment();
    await setRetention(env, 7);
    await appended(env, 'day0.event');
    await setRetention(env, null);

    t.clock.set(at(30));
    await sweep();

    expect(await actions(env)).toEqual(['secret_key.created', 'day0.event']);
  });

  it('refuses a retention under a week, over a hundred years, or not a whole number of days', async () => {
    const env = await t.given.environment();
    for (const auditRetentionDays of [6, 36_501, 7.5, '30']) {
      const res = await t.admin.patch(`/environments/${env.id}`, { settings: { auditRetentionDays } });
      expect(res.statusCode).toBe(400);
      expect(res.json().properties.errors).toEqual([expect.objectContaining({ path: '/body/settings/auditRetentionDays' })]);
    }
    await setRetention(env, 7);
    await setRetention(env, 36_500);
  });

  it("lets no other delete through the append-only trigger: not a recent event, not another environment's", async () => {
    t.clock.set(START);
    const [env, other] = [await t.given.environment(), await t.given.environment()];
    await appended(env, 'old.event');
    await appended(other, 'old.event');
    t.clock.set(at(20));
    await appended(env, 'recent.event');
    const deleteUnder = (cutoff: Date, where: ReturnType<typeof sql<boolean>>) => t.db.transaction().execute(async (trx) => {
      await sql`select set_config('gatehouse.audit_retention_environment', ${env.id}, true),
                       set_config('gatehouse.audit_retention_before', ${cutoff.toISOString()}, true)`.execute(trx);
      await sql`delete from audit_events where ${where}`.execute(trx);
    });

    await expect(deleteUnder(at(10), sql<boolean>`environment_id = ${env.id}::uuid`)).rejects.toThrow(/append-only: DELETE refused/);
    await expect(deleteUnder(at(10), sql<boolean>`environment_id = ${other.id}::uuid`)).rejects.toThrow(/append-only: DELETE refused/);
    await expect(deleteUnder(at(30), sql<boolean>`environment_id = ${env.id}::uuid and action = 'old.event'`).then(async () =>
      sql`update audit_events set action = 'forged' where environment_id = ${env.id}::uuid`.execute(t.db))).rejects.toThrow(/append-only: UPDATE refused/);

    expect(await actions(env)).toEqual(['secret_key.created', 'recent.event']);
    expect(await actions(other)).toEqual(['secret_key.created', 'old.event']);
  });
});

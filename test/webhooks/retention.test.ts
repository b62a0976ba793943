import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { givenEndpoint } from './given-endpoint.js';

const DAY = 86_400_000;

describe('webhook history housekeeping', () => {
  let t: TestApp;
  // Private targets refused, so a delivery to loopback settles (failed) at its first attempt, with no network.
  beforeAll(async () => {
    t = await startTestApp({ jobsInBackground: false, webhooks: { sender: { privateTargets: 'deny' } }, housekeeping: { webhookRetentionDays: 30 } }, { ownDatabase: true });
  });
  afterAll(() => t.close());

  const count = async (env: TestEnv) => Object.fromEntries(await Promise.all((['webhook_events', 'webhook_deliveries', 'webhook_attempts'] as const).map(async (table) =>
    [table, (await t.db.selectFrom(table).select('environment_id').where('environment_id', '=', env.id).execute()).length])));

  it('deletes deliveries settled longer ago than the retention with their attempts and events, and keeps pending ones and newer ones', async () => {
    const env = await t.given.environment();
    await givenEndpoint(t.db, env, 'http://127.0.0.1:9/settled');
    await t.given.user(env);
    await t.app.runJobs();
    // A second endpoint added later whose delivery of a later event stays pending (the worker does not run again).
    await givenEndpoint(t.db, env, 'http://127.0.0.1:9/pending', { eventTypes: ['organization.created'] });
    const ada = await t.given.user(env);
    await t.server(env).post('/organizations', { name: 'Acme', createdBy: ada.id });
    expect(await count(env)).toEqual({ webhook_events: 4, webhook_deliveries: 5, webhook_attempts: 1 });

    t.clock.advance(29 * DAY);
    await t.app.runHousekeeping();
    expect(await count(env)).toEqual({ webhook_events: 4, webhook_deliveries: 5, webhook_attempts: 1 });

    t.clock.advance(2 * DAY);
    await t.app.runHousekeeping();
    const left = await t.db.selectFrom('webhook_deliveries').select(['status']).where('environment_id', '=', env.id).execute();
    expect(left.map((d) => d.status)).toEqual(Array(4).fill('pending'));
    expect(await count(env)).toEqual({ webhook_events: 3, webhook_deliveries: 4, webhook_attempts: 0 });
  });
});

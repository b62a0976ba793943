import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/platform/db/database.js';
import type { Notifications } from '../../src/platform/db/notifications.js';
import { systemClock } from '../../src/platform/clock.js';
import { createSharedCache } from '../../src/platform/shared-cache.js';
import { openTestDatabase } from '../helpers/app.js';

/** Notifications of another process's kind whose deliveries the test hands out itself. */
function heldNotifications(acrossProcesses = true) {
  const held: string[] = [];
  let deliver = (_payload: string) => {};
  const notifications: Notifications = {
    subscribe: (onMessage) => { deliver = onMessage; },
    listening: true,
    acrossProcesses,
    close: async () => {},
  };
  return { notifications, held, deliverAll: () => held.splice(0).forEach((payload) => deliver(payload)), hold: (payload: string) => held.push(payload) };
}

describe('a change to a cached row across processes (shared cache)', () => {
  let database: Database;
  beforeAll(async () => { database = await openTestDatabase(); });
  afterAll(() => database.close());

  const cacheOver = (notifications: Notifications, echoWaitMs?: number) =>
    createSharedCache<{ id: string }>({ db: database.db, clock: systemClock, notifications, name: 'probe', idOf: (v) => v.id, ttlMs: 60_000, maxEntries: 10, echoWaitMs });

  it('answers only once this process has heard its own announcement, since every listener hears it at the same commit', async () => {
    const bus = heldNotifications();
    const cache = cacheOver(bus.notifications, 3_600_000);
    let answered = false;
    const change = cache.change('k1', async () => 'changed').then((result) => { answered = true; return result; });
    // The announcement commits with the change, but this process has not heard it yet.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(answered).toBe(false);
    bus.hold('probe:k1');
    bus.deliverAll();
    expect(await change).toBe('changed');
  });

  it('does not wait for a message that never comes beyond its bound, nor on one process alone', async () => {
    const lost = cacheOver(heldNotifications().notifications, 1);
    expect(await lost.change('k2', async () => 'changed anyway')).toBe('changed anyway');
    const alone = cacheOver(heldNotifications(false).notifications, 3_600_000);
    expect(await alone.change('k3', async () => 'no one else to tell')).toBe('no one else to tell');
  });
});

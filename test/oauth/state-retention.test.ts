import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOAuthService, type OAuthDeps } from '../../src/oauth/service.js';
import { createStatesStore } from '../../src/oauth/store.js';
import { createTestClock } from '../../src/platform/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

// Pruning is global (every environment), and under TEST_DATABASE_URL other test files share the
// database: this test lives in 2001 so its cut-off can only ever reach its own rows.
const LONG_AGO = '2001-01-01T00:00:00.000Z';

describe('housekeeping of OAuth states', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('deletes states past their expiry, used or not, and keeps live ones', async () => {
    const env = await t.given.environment();
    const clock = createTestClock(LONG_AGO);
    const states = createStatesStore(t.db);
    const state = (expiresInMs: number) => ({
      stateHash: randomBytes(32), providerId: 'acme', browserHash: randomBytes(32), secretsSealed: randomBytes(40),
      redirectUrl: 'https://app.example.com/', expiresAt: new Date(clock.now().getTime() + expiresInMs),
    });
    const [expired, used, live] = [state(600_000), state(600_000), state(3_600_000)];
    for (const s of [expired, used, live]) await states.insert(env.id, s, clock.now());
    await states.consume(env.id, used.stateHash, clock.now());
    clock.advance(600_001);

    const service = createOAuthService({ db: t.db, clock } as unknown as OAuthDeps);
    await service.pruneExpiredStates();

    const left = await t.db.selectFrom('oauth_states').select('state_hash').where('environment_id', '=', env.id).execute();
    expect(left.map((r) => Buffer.from(r.state_hash))).toEqual([live.stateHash]);
  });
});

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionIssuer } from '../../src/auth/service/issue-session.js';
import { DEFAULT_SETTINGS } from '../../src/environments/settings.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { untilBlockedBy } from '../helpers/patience.js';

const CONTEXT = { ipAddress: '203.0.113.1', userAgent: 'test' };
const NOT_ACTIVE = { status: 403, code: 'user_not_active' };

describe('starting a session for a user who is being banned', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  /** Starts a session the one way there is (issueSession), answering its refusal instead of throwing it. */
  const startSession = (environmentId: string, user: { id: string }) =>
    sessionIssuer(t.clock)(t.db, { id: environmentId, settings: DEFAULT_SETTINGS }, user as never, CONTEXT, 'password').catch((err: unknown) => err);

  const sessionsOf = (environmentId: string, userId: string) =>
    t.db.selectFrom('sessions').select('id').where('environment_id', '=', environmentId).where('user_id', '=', userId).execute();

  it('starts no session for a banned or deleted user', async () => {
    const env = await t.given.environment();
    const banned = await t.given.user(env);
    const deleted = await t.given.user(env);
    await t.server(env).post(`/users/${banned.id}/ban`);
    await t.server(env).delete(`/users/${deleted.id}`);

    expect(await startSession(env.id, banned)).toMatchObject(NOT_ACTIVE);
    expect(await startSession(env.id, deleted)).toMatchObject(NOT_ACTIVE);
    expect(await sessionsOf(env.id, banned.id)).toEqual([]);
    expect(await sessionsOf(env.id, deleted.id)).toEqual([]);
  });

  // Needs two connections at once: a ban held open on one while a sign-in finishes on another.
  it.skipIf(!process.env.TEST_DATABASE_URL)('waits for a ban in flight and then starts nothing, so unban cannot revive a session', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const banning = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await banning.connect();
    try {
      await banning.query('begin');
      await banning.query(`update users set status = 'banned' where environment_id = $1 and id = $2`, [env.id, user.id]);

      let settled = false;
      const starting = startSession(env.id, user)
        .finally(() => { settled = true; });
      await untilBlockedBy(banning);
      expect(settled).toBe(false); // blocked on the user row until the ban commits

      await banning.query('commit');
      expect(await starting).toMatchObject(NOT_ACTIVE);
      await t.server(env).post(`/users/${user.id}/unban`);
      expect(await sessionsOf(env.id, user.id)).toEqual([]);
    } finally {
      await banning.end();
    }
  });
});

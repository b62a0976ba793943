import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signIn } from '../helpers/flows.js';

// A steady stream of sign-ins to one account, as anyone who knows its email can send. On PostgreSQL the
// reservation (the IP's budget row, then the account's) and the finish of another sign-in (once the
// account's row, then the IP's) deadlocked and answered 500; PGlite serves one statement at a time.
describe('concurrent sign-ins to one account', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({}, { poolSize: 8 }); });
  afterAll(() => t.close());

  it('all succeed with the right password: no deadlock, no 500, one session each', async () => {
    const env = await t.given.environment({ lockout: { ipMaxFailures: 1000, maxFailedAttempts: 1000 } });
    const user = await t.given.user(env);
    const statuses: number[] = [];
    for (let wave = 0; wave < 6; wave++) {
      const answers = await Promise.all(Array.from({ length: 24 }, () => signIn(t, env, user.email, user.password)));
      statuses.push(...answers.map((res) => res.statusCode));
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const sessions = await t.db.selectFrom('sessions').select('id').where('environment_id', '=', env.id).where('user_id', '=', user.id).execute();
    expect(sessions).toHaveLength(6 * 24);
  });

  it('with wrong passwords mixed in, every wrong one is 401 and every right one 200', async () => {
    const env = await t.given.environment({ lockout: { ipMaxFailures: 1000, maxFailedAttempts: 1000 } });
    const user = await t.given.user(env);
    const answers = await Promise.all(Array.from({ length: 48 }, (_, i) => signIn(t, env, user.email, i % 3 === 0 ? 'not the password at all' : user.password)));
    expect(answers.map((res) => res.statusCode)).toEqual(Array.from({ length: 48 }, (_, i) => (i % 3 === 0 ? 401 : 200)));
  });
});

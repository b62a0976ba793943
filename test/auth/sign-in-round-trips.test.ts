import { AsyncLocalStorage } from 'node:async_hooks';
import type { KyselyPlugin, RootOperationNode } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signIn } from '../helpers/flows.js';

/**
 * The kind of each statement (raw SQL, select, insert...) sent while `watch` runs, in order. Only
 * statements made on behalf of the watched call count: the job and mail workers poll on their own
 * (woken by other files' NOTIFYs on PostgreSQL) and are not part of the round trips measured.
 */
function statementLog() {
  const watching = new AsyncLocalStorage<string[]>();
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => {
      watching.getStore()?.push(node.kind);
      return node as RootOperationNode;
    },
    transformResult: async ({ result }) => result,
  };
  async function watch<T>(call: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
    const statements: string[] = [];
    const result = await watching.run(statements, call);
    return { result, statements };
  }
  return { plugin, watch };
}

describe('a password sign-in, in round trips to the database', () => {
  const log = statementLog();
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({}, { plugin: log.plugin }); });
  afterAll(() => t.close());

  it('takes one statement before the hash (both budgets) and one after it (counters, session and trail) when it succeeds', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'ada@example.com' });
    expect((await signIn(t, env, user.email, user.password)).statusCode).toBe(200); // warms the environment cache

    const { result: res, statements } = await log.watch(() => signIn(t, env, user.email, user.password));

    expect(res.statusCode).toBe(200);
    expect(statements).toEqual(['RawNode', 'RawNode']);
    const session = await t.db.selectFrom('sessions').select(['id', 'user_id']).where('id', '=', res.json().session.id).executeTakeFirstOrThrow();
    expect(session.user_id).toBe(user.id);
    const events = await t.db.selectFrom('audit_events').select(['action', 'targets']).where('environment_id', '=', env.id)
      .where('action', '=', 'user.signed_in').orderBy('sequence').execute();
    expect(events.at(-1)).toEqual({ action: 'user.signed_in', targets: [{ type: 'user', id: user.id }, { type: 'session', id: session.id }] });
  });

  it('gives the client IP its reserved attempt back and leaves the account with no failure count', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'grace@example.com' });
    await signIn(t, env, user.email, 'not the password');
    const res = await signIn(t, env, user.email, user.password);

    expect(res.statusCode).toBe(200);
    const windows = await t.db.selectFrom('rate_limit_windows').select(['bucket', 'count']).where('environment_id', '=', env.id)
      .where('bucket', 'like', 'sign_in_failures:ip:%').execute();
    expect(windows.map((w) => w.count)).toEqual([1]); // the failure counts, the success was given back
    const account = await t.db.selectFrom('users').select(['failed_sign_ins', 'locked_until']).where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(account).toEqual({ failed_sign_ins: 0, locked_until: null });
  });
});

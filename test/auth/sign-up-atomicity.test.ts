import type { KyselyPlugin, RootOperationNode } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';

/**
 * Fails the next insert into `table` once armed, as PostgreSQL fails a statement that runs out of time
 * (57014, answered 503): a failure between a sign-up's steps.
 */
function failNextInsertInto(table: string) {
  let armed = false;
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => {
      if (armed && node.kind === 'InsertQueryNode' && node.into?.table.identifier.name === table) {
        armed = false;
        throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
      }
      return node as RootOperationNode;
    },
    transformResult: async ({ result }) => result,
  };
  return { plugin, arm: () => { armed = true; } };
}

describe('a pending client sign-up is one transaction', () => {
  const codeInsert = failNextInsertInto('verification_codes');
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({}, { plugin: codeInsert.plugin }); });
  afterAll(() => t.close());

  it('leaves no account, trail event or mail when storing the code fails, so the retry signs up and gets its code', async () => {
    const env = await t.given.environment({ emailVerificationRequired: true });
    codeInsert.arm();

    const failed = await t.client(env).post('/auth/sign-up', { email: 'ada@example.com', password: PASSWORD });

    expect(failed.statusCode).toBe(503);
    expect(await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
    expect(await t.db.selectFrom('email_addresses').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
    expect(await t.db.selectFrom('audit_events').select('action').where('environment_id', '=', env.id).where('action', '=', 'user.signed_up').execute()).toEqual([]);
    expect(await t.outbox(env, 'ada@example.com')).toEqual([]);

    const retried = await t.client(env).post('/auth/sign-up', { email: 'ada@example.com', password: PASSWORD });

    expect(retried.statusCode).toBe(201);
    expect(retried.json().user).toMatchObject({ email: 'ada@example.com', registrationState: 'pending_email_verification' });
    const mails = await t.outbox(env, 'ada@example.com');
    expect(mails).toHaveLength(1);
    expect(mails[0].subject).toMatch(/\b\d{6}\b/);
    const events = await t.db.selectFrom('audit_events').select(['action', 'targets']).where('environment_id', '=', env.id)
      .where('action', '=', 'user.signed_up').execute();
    expect(events).toEqual([{ action: 'user.signed_up', targets: [{ type: 'user', id: retried.json().user.id }] }]);
  });
});

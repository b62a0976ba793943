import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/platform/crypto/passwords.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { signedInUser, storedAddresses, verifiedAddress } from './support.js';

const MIGRATION = new URL('../../migrations/0019_email_addresses.sql', import.meta.url);

/** Migration 0019's backfill, limited to one environment so it leaves the other test files' rows alone on a shared database. */
async function backfill(t: TestApp, env: TestEnv) {
  const text = await readFile(MIGRATION, 'utf8');
  const statement = /INSERT INTO email_addresses[^;]+;/.exec(text)![0];
  expect(statement).toContain('WHERE u.email IS NOT NULL');
  await sql.raw(statement.replace('WHERE u.email IS NOT NULL', `WHERE u.environment_id = '${env.id}' AND u.email IS NOT NULL`)).execute(t.db);
}

describe('users that existed before email addresses (migration 0019)', () => {
  let t: TestApp;
  let passwordHash: string;
  beforeAll(async () => { t = await startTestApp(); passwordHash = await hashPassword(PASSWORD); });
  afterAll(() => t.close());

  /** A users row as the version before 0019 wrote it: no address row. */
  async function oldUser(env: TestEnv, fields: { email: string | null; verified?: boolean; status?: 'active' | 'deleted'; pending?: boolean }) {
    const now = t.clock.now();
    const id = uuidv7();
    await t.db.insertInto('users').values({
      environment_id: env.id, id, email: fields.email, email_verified_at: fields.verified ? now : null, password_hash: passwordHash,
      name: null, first_name: null, last_name: null, locale: null, status: fields.status ?? 'active',
      registration_state: fields.pending ? 'pending_email_verification' : 'complete', public_metadata: '{}' as never, private_metadata: '{}' as never,
      unsafe_metadata: '{}' as never, created_at: now, updated_at: now, deleted_at: fields.status === 'deleted' ? now : null,
    }).execute();
    return { id, email: fields.email, password: PASSWORD };
  }

  it('gives each user with an email a primary address with its id, verified as the email was; a deleted user\'s frees the email', async () => {
    const env = await t.given.environment();
    const created = t.clock.now();
    const verified = await oldUser(env, { email: 'verified@example.com', verified: true });
    const pending = await oldUser(env, { email: 'pending@example.com', pending: true });
    const deleted = await oldUser(env, { email: 'reused@example.com', verified: true, status: 'deleted' });
    const live = await oldUser(env, { email: 'reused@example.com', verified: true });
    const none = await oldUser(env, { email: null });
    await backfill(t, env);

    expect(await storedAddresses(t, env, verified)).toEqual([{
      environment_id: env.id, id: verified.id, user_id: verified.id, email: 'verified@example.com', is_primary: true, verified_at: created,
      released_at: null, code_hash: null, code_expires_at: null, code_attempts: 0, created_at: created,
    }]);
    expect(await storedAddresses(t, env, pending)).toMatchObject([{ id: pending.id, email: 'pending@example.com', is_primary: true, verified_at: null, released_at: null }]);
    expect(await storedAddresses(t, env, deleted)).toMatchObject([{ email: 'reused@example.com', released_at: created }]);
    expect(await storedAddresses(t, env, live)).toMatchObject([{ email: 'reused@example.com', released_at: null }]);
    expect(await storedAddresses(t, env, none)).toEqual([]);
  });

  it('skips users that have a primary already, so it can run again', async () => {
    const env = await t.given.environment();
    const { user } = await signedInUser(t, env);
    const old = await oldUser(env, { email: 'old@example.com', verified: true });
    await backfill(t, env);
    await backfill(t, env);
    expect(await storedAddresses(t, env, user)).toHaveLength(1);
    expect(await storedAddresses(t, env, old)).toHaveLength(1);
  });

  it('lets a migrated user sign in, add and verify an address, and make it primary', async () => {
    const env = await t.given.environment();
    const old = await oldUser(env, { email: 'old@example.com', verified: true });
    await backfill(t, env);
    const session = await t.given.session(env, old);
    const me = t.client(env, { token: session.token });
    expect((await me.get('/me/email-addresses')).json().items).toEqual([{ id: old.id, email: 'old@example.com', verified: true, primary: true, createdAt: expect.any(String) }]);
    const work = await verifiedAddress(t, env, session, 'old-work@example.com');
    expect((await me.post(`/me/email-addresses/${work.id}/make-primary`)).statusCode).toBe(200);
    expect((await me.get('/me')).json().email).toBe('old-work@example.com');
    expect((await t.client(env).post('/auth/sign-in', { email: 'old@example.com', password: PASSWORD })).statusCode).toBe(200);
  });

  it('puts right a user that a process of the version before wrote after the migration, when its addresses are next read', async () => {
    const env = await t.given.environment();
    const late = await oldUser(env, { email: 'late@example.com', verified: true });
    const items = (await t.server(env).get(`/users/${late.id}/email-addresses`)).json().items;
    expect(items).toEqual([{ id: expect.any(String), email: 'late@example.com', verified: true, primary: true, createdAt: t.clock.now().toISOString() }]);
    await t.db.updateTable('users').set({ email: 'late-changed@example.com' }).where('environment_id', '=', env.id).where('id', '=', late.id).execute();
    const changed = (await t.server(env).get(`/users/${late.id}/email-addresses`)).json().items;
    expect(changed).toEqual([{ ...items[0], email: 'late-changed@example.com' }]);
  });
});

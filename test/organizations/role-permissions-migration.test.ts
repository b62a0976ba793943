import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonb } from '../../src/platform/db/database.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';

const MIGRATION = new URL('../../migrations/0017_role_permissions.sql', import.meta.url);
const OWNER_ALL = ['organization:update', 'organization:delete', 'members:manage', 'invitations:manage'];
const ADMIN_THREE = ['organization:update', 'members:manage', 'invitations:manage'];

describe('role sets stored before roles carried permissions', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  /** A role set as the version before stored it: keys and names only. */
  async function storeOldSet(env: TestEnv) {
    const id = uuidv7();
    const roles = [{ key: 'owner', name: 'Owner' }, { key: 'admin', name: 'Admin' }, { key: 'billing', name: 'Billing' }];
    await t.db.insertInto('organization_role_sets').values({ environment_id: env.id, id, name: 'Old', roles: jsonb(roles), created_at: t.clock.now() }).execute();
    return id;
  }
  const storedRoles = async (env: TestEnv, id: string) =>
    (await t.db.selectFrom('organization_role_sets').select('roles').where('environment_id', '=', env.id).where('id', '=', id).executeTakeFirstOrThrow()).roles;

  it('get from migration 0017 the rights their keys had in code, in their order', async () => {
    const env = await t.given.environment();
    const id = await storeOldSet(env);
    await sql.raw(await readFile(MIGRATION, 'utf8')).execute(t.db);
    expect(await storedRoles(env, id)).toEqual([
      { key: 'owner', name: 'Owner', permissions: OWNER_ALL },
      { key: 'admin', name: 'Admin', permissions: ADMIN_THREE },
      { key: 'billing', name: 'Billing', permissions: [] },
    ]);
  });

  it('read with the same defaults when a process of the version before stored them after the migration', async () => {
    const env = await t.given.environment();
    await storeOldSet(env);
    const [set] = (await t.admin.get(`/environments/${env.id}/role-sets`)).json().items;
    expect(set.roles.map((r: { permissions: string[] }) => r.permissions)).toEqual([OWNER_ALL, ADMIN_THREE, []]);
  });
});

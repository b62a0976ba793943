import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import type { TestUser } from '../helpers/given.js';
import { addMember, expectProblem } from './support.js';
import { untilBlockedBy } from '../helpers/patience.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

/**
 * A demotion in flight holds the organization lock, as every role change does; a change the demoted
 * admin asks for meanwhile must wait for it and then be judged by the new role. Checked outside the lock,
 * the admin's role would be read before the demotion commits and the change would go through.
 * Needs two connections at once (one holding the demotion open), so PostgreSQL only.
 */
describe.skipIf(!TEST_DATABASE_URL)("a demoted admin's concurrent changes (needs TEST_DATABASE_URL)", () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  async function team(env: TestEnv) {
    const [owner, admin] = [await t.given.user(env), await t.given.user(env)];
    const ownerClient = t.client(env, { token: (await t.given.session(env, owner)).token });
    const org = (await ownerClient.post('/organizations', { name: 'Acme' })).json();
    await addMember(t, env, org.id, admin.id, 'admin');
    return { org, owner: ownerClient, admin, adminClient: t.client(env, { token: (await t.given.session(env, admin)).token }) };
  }

  /** Runs `request` while another connection holds the organization lock and demotes `admin`; answers it once the demotion commits. */
  async function whileDemoting<T>(env: TestEnv, organizationId: string, admin: TestUser, request: () => Promise<T>) {
    const demoting = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await demoting.connect();
    try {
      await demoting.query('begin');
      await demoting.query('select id from organizations where environment_id = $1 and id = $2 for update', [env.id, organizationId]);
      await demoting.query(`update organization_memberships set role = 'member', role_name = 'Member'
        where environment_id = $1 and organization_id = $2 and user_id = $3`, [env.id, organizationId, admin.id]);
      let settled = false;
      const answer = request().finally(() => { settled = true; });
      await untilBlockedBy(demoting);
      expect(settled).toBe(false); // waiting on the organization lock
      await demoting.query('commit');
      return await answer;
    } finally {
      await demoting.end();
    }
  }

  it('refuses the rename with 403 and leaves the name', async () => {
    const env = await t.given.environment();
    const { org, admin, adminClient } = await team(env);
    expectProblem(await whileDemoting(env, org.id, admin, () => adminClient.patch(`/organizations/${org.id}`, { name: 'Mine' })), 403, 'forbidden');
    expect((await t.server(env).get(`/organizations/${org.id}`)).json().name).toBe('Acme');
  });

  it('refuses the invitation with 403 and stores none', async () => {
    const env = await t.given.environment();
    const { org, admin, adminClient } = await team(env);
    const res = await whileDemoting(env, org.id, admin, () => adminClient.post(`/organizations/${org.id}/invitations`, { email: 'x@example.com', role: 'admin' }));
    expectProblem(res, 403, 'forbidden');
    expect(await t.db.selectFrom('organization_invitations').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
  });

  it('refuses the revocation with 403 and leaves the invitation pending', async () => {
    const env = await t.given.environment();
    const { org, owner, admin, adminClient } = await team(env);
    const invitation = (await owner.post(`/organizations/${org.id}/invitations`, { email: 'x@example.com', role: 'member' })).json();
    const res = await whileDemoting(env, org.id, admin, () => adminClient.post(`/organizations/${org.id}/invitations/${invitation.id}/revoke`));
    expectProblem(res, 403, 'forbidden');
    expect((await owner.get(`/organizations/${org.id}/invitations`)).json().items.map((i: { id: string; status: string }) => [i.id, i.status])).toEqual([[invitation.id, 'PENDING']]);
  });

  it("refuses the member change with 403 and leaves the member's role", async () => {
    const env = await t.given.environment();
    const { org, admin, adminClient } = await team(env);
    const other = await t.given.user(env);
    await addMember(t, env, org.id, other.id, 'member');
    expectProblem(await whileDemoting(env, org.id, admin, () => adminClient.patch(`/organizations/${org.id}/members/${other.id}`, { role: 'admin' })), 403, 'forbidden');
    expect((await t.server(env).get(`/organizations/${org.id}/members`)).json().items.find((m: { userId: string }) => m.userId === other.id).role).toBe('member');
  });
});

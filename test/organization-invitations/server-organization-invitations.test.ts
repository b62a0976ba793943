import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { addMember, createOrganization, expectProblem, MISSING_ID, storedRoles } from '../organizations/support.js';

const CREATED_KEYS = ['email', 'emailDelivery', 'expiresAt', 'id', 'organizationId', 'role', 'token'];
const LISTED_KEYS = ['createdAt', 'email', 'expiresAt', 'id', 'organizationId', 'role', 'status'];

describe("an organization's invitations and roles on the Server API (a backend or an operator, no inviting member)", () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const invite = (env: TestEnv, orgId: string, email: string, role = 'member') => t.server(env).post(`/organizations/${orgId}/invitations`, { email, role });

  it('invites with any role of the set, owner included, showing the token once and mailing the accept link', async () => {
    const env = await t.given.environment({ invitationAcceptUrl: 'https://app.example.com/accept' });
    const org = await createOrganization(t, env);
    const res = await invite(env, org.id, 'Grace@Example.com', 'owner');
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(CREATED_KEYS);
    expect(body).toMatchObject({ organizationId: org.id, email: 'grace@example.com', role: 'owner', emailDelivery: 'dispatched' });
    const [mail] = await t.outbox(env, 'grace@example.com');
    expect(mail.subject).toBe("You're invited to join Acme");
    expect(mail.text).toContain(`https://app.example.com/accept?invitation_token=${body.token}`);
    const stored = await t.db.selectFrom('organization_invitations').select(['inviter_user_id', 'status']).where('environment_id', '=', env.id).where('id', '=', body.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ inviter_user_id: null, status: 'PENDING' });
  });

  it('refuses a role outside the set with 400 invalid_role and an unknown organization with 404, storing nothing', async () => {
    const env = await t.given.environment();
    const org = await createOrganization(t, env);
    const invalid = expectProblem(await invite(env, org.id, 'a@example.com', 'superuser'), 400, 'invalid_role');
    expect(invalid.properties.allowed).toEqual(['owner', 'admin', 'member']);
    expectProblem(await invite(env, MISSING_ID, 'a@example.com'), 404, 'organization_not_found');
    expectProblem(await t.server(env).get(`/organizations/${MISSING_ID}/invitations`), 404, 'organization_not_found');
    expect(await t.db.selectFrom('organization_invitations').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
  });

  it('lists the pending invitations without tokens, revokes one once (409 invitation_not_pending after), and the revoked token no longer works', async () => {
    const env = await t.given.environment();
    const org = await createOrganization(t, env);
    const ada = (await invite(env, org.id, 'ada@example.com', 'admin')).json();
    const bob = (await invite(env, org.id, 'bob@example.com')).json();
    const listed = (await t.server(env).get(`/organizations/${org.id}/invitations`)).json();
    expect(Object.keys(listed.items[0]).sort()).toEqual(LISTED_KEYS);
    expect(listed.items.map((i: { id: string; role: string; status: string }) => [i.id, i.role, i.status])).toEqual([[ada.id, 'admin', 'PENDING'], [bob.id, 'member', 'PENDING']]);
    expect(JSON.stringify(listed)).not.toContain('orginv_');

    const revoked = await t.server(env).post(`/organizations/${org.id}/invitations/${ada.id}/revoke`);
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json()).toMatchObject({ id: ada.id, status: 'REVOKED' });
    expect(expectProblem(await t.server(env).post(`/organizations/${org.id}/invitations/${ada.id}/revoke`), 409, 'invitation_not_pending').properties.status).toBe('REVOKED');
    expectProblem(await t.server(env).post(`/organizations/${org.id}/invitations/${MISSING_ID}/revoke`), 404, 'invitation_not_found');
    expect((await t.server(env).get(`/organizations/${org.id}/invitations`)).json().items.map((i: { id: string }) => i.id)).toEqual([bob.id]);

    const adaUser = await t.given.user(env, { email: 'ada@example.com' });
    const client = t.client(env, { token: (await t.given.session(env, adaUser)).token });
    expectProblem(await client.post('/organization-invitations/accept', { token: ada.token }), 410, 'invitation_revoked');
  });

  it('lets an invitation it sent be accepted with the invited role, whoever has left the organization since', async () => {
    const env = await t.given.environment();
    const [first, second] = [await t.given.user(env), await t.given.user(env)];
    const org = await createOrganization(t, env, { createdBy: first.id });
    await addMember(t, env, org.id, second.id, 'owner');
    const { token } = (await invite(env, org.id, 'ada@example.com', 'admin')).json();
    expect((await t.server(env).delete(`/organizations/${org.id}/members/${first.id}`)).statusCode).toBe(204);
    const ada = await t.given.user(env, { email: 'ada@example.com', password: PASSWORD });
    const client = t.client(env, { token: (await t.given.session(env, ada)).token });
    const accepted = await client.post('/organization-invitations/accept', { token });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect((await storedRoles(t, env, org.id))[ada.id]).toBe('admin');
  });

  it('records the invitation and its revocation in the audit trail as the Server API caller', async () => {
    const env = await t.given.environment();
    const org = await createOrganization(t, env);
    const { id } = (await invite(env, org.id, 'ada@example.com', 'admin')).json();
    await t.server(env).post(`/organizations/${org.id}/invitations/${id}/revoke`);
    const events = (await t.server(env).get(`/audit-events?targetType=organization_invitation&targetId=${id}`)).json().items;
    expect(events.map((e: { action: string; metadata: unknown; actor: { type: string } }) => [e.action, e.metadata, e.actor.type])).toEqual([
      ['organization_invitation.created', { role: 'admin' }, 'api_key'], ['organization_invitation.revoked', {}, 'api_key'],
    ]);
  });

  it("answers an organization's roles with their permissions: the default set, or the role set it was created with", async () => {
    const env = await t.given.environment();
    const plain = await createOrganization(t, env);
    expect((await t.server(env).get(`/organizations/${plain.id}/roles`)).json()).toEqual({
      roleSetId: null, name: 'Default', roles: [
        { key: 'owner', name: 'Owner', permissions: ['organization:update', 'organization:delete', 'members:manage', 'invitations:manage'] },
        { key: 'admin', name: 'Admin', permissions: ['organization:update', 'members:manage', 'invitations:manage'] },
        { key: 'member', name: 'Member', permissions: [] },
      ],
    });
    const set = (await t.admin.post(`/environments/${env.id}/role-sets`, { name: 'Billing teams', roles: [{ key: 'owner', name: 'Proprietor' }, { key: 'billing', name: 'Billing', permissions: ['invitations:manage'] }] })).json();
    const billing = await createOrganization(t, env, { roleSetId: set.id });
    expect((await t.server(env).get(`/organizations/${billing.id}/roles`)).json()).toEqual({
      roleSetId: set.id, name: 'Billing teams', roles: [
        { key: 'owner', name: 'Proprietor', permissions: ['organization:update', 'organization:delete', 'members:manage', 'invitations:manage'] },
        { key: 'billing', name: 'Billing', permissions: ['invitations:manage'] },
      ],
    });
    expectProblem(await t.server(env).get(`/organizations/${MISSING_ID}/roles`), 404, 'organization_not_found');
  });
  it("never reaches another environment's organization or invitation: 404 as for a missing one, nothing written", async () => {
    const [home, other] = [await t.given.environment(), await t.given.environment()];
    const theirs = await createOrganization(t, other);
    const theirInvitation = (await invite(other, theirs.id, 'ada@example.com')).json();
    expectProblem(await invite(home, theirs.id, 'bob@example.com'), 404, 'organization_not_found');
    expectProblem(await t.server(home).get(`/organizations/${theirs.id}/invitations`), 404, 'organization_not_found');
    expectProblem(await t.server(home).get(`/organizations/${theirs.id}/roles`), 404, 'organization_not_found');
    expectProblem(await t.server(home).post(`/organizations/${theirs.id}/invitations/${theirInvitation.id}/revoke`), 404, 'organization_not_found');
    // Their invitation named under one of our organizations is no invitation of it.
    const ours = await createOrganization(t, home);
    expectProblem(await t.server(home).post(`/organizations/${ours.id}/invitations/${theirInvitation.id}/revoke`), 404, 'invitation_not_found');
    const stored = await t.db.selectFrom('organization_invitations').select(['environment_id', 'status']).where('id', '=', theirInvitation.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ environment_id: other.id, status: 'PENDING' });
    expect(await t.db.selectFrom('organization_invitations').select('id').where('environment_id', '=', home.id).execute()).toEqual([]);
  });
});

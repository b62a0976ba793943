import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD, type TestUser } from '../helpers/given.js';
import { addMember, expectProblem, storedRoles } from '../organizations/support.js';

const CREATED_KEYS = ['email', 'emailDelivery', 'expiresAt', 'id', 'organizationId', 'role', 'token'];
const DAY_MS = 86_400_000;

describe('organization invitations on the client plane', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const signedIn = async (env: TestEnv, user: TestUser) => t.client(env, { token: (await t.given.session(env, user)).token });

  /** An organization with a signed-in owner, admin and member. */
  async function team(env: TestEnv) {
    const [ownerUser, adminUser, memberUser] = [await t.given.user(env), await t.given.user(env), await t.given.user(env)];
    const owner = await signedIn(env, ownerUser);
    const org = (await owner.post('/organizations', { name: 'Acme' })).json();
    await addMember(t, env, org.id, adminUser.id, 'admin');
    await addMember(t, env, org.id, memberUser.id, 'member');
    return { org, owner, admin: await signedIn(env, adminUser), member: await signedIn(env, memberUser) };
  }
  const invite = (client: ReturnType<TestApp['client']>, orgId: string, email: string, role = 'member') =>
    client.post(`/organizations/${orgId}/invitations`, { email, role });

  it('invites with a token shown once and stored hashed, and sends no mail without invitationAcceptUrl or hosted pages', async () => {
    const env = await t.given.environment({ hostedPages: { enabled: false } });
    const { org, owner } = await team(env);
    const res = await invite(owner, org.id, 'New@Example.com', 'admin');
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(CREATED_KEYS);
    expect(body).toMatchObject({ organizationId: org.id, email: 'new@example.com', role: 'admin', emailDelivery: 'not_configured' });
    expect(body.token).toMatch(/^orginv_[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(body.expiresAt) - t.clock.now().getTime()).toBe(30 * DAY_MS);
    const row = await t.db.selectFrom('organization_invitations').selectAll().where('environment_id', '=', env.id).where('id', '=', body.id).executeTakeFirstOrThrow();
    expect(Buffer.from(row.token_hash).equals(createHash('sha256').update(body.token).digest())).toBe(true);
    expect(JSON.stringify(row)).not.toContain(body.token);
    expect(await t.outbox(env, 'new@example.com')).toEqual([]);
  });

  it('mails a link to invitationAcceptUrl carrying the token when the environment has one', async () => {
    const env = await t.given.environment({ invitationAcceptUrl: 'https://app.example.com/accept' });
    const { org, owner } = await team(env);
    const body = (await invite(owner, org.id, 'grace@example.com')).json();
    expect(body.emailDelivery).toBe('dispatched');
    const [mail] = await t.outbox(env, 'grace@example.com');
    expect(mail.subject).toBe("You're invited to join Acme");
    expect(mail.text).toContain(`https://app.example.com/accept?invitation_token=${body.token}`);
  });

  it('lets owners and admins invite, refuses a member and an admin inviting an owner with 403, a non-member with 404', async () => {
    const env = await t.given.environment();
    const { org, admin, member } = await team(env);
    const outsider = await signedIn(env, await t.given.user(env));
    expect((await invite(admin, org.id, 'a@example.com')).statusCode).toBe(201);
    expectProblem(await invite(admin, org.id, 'b@example.com', 'owner'), 403, 'forbidden');
    expectProblem(await invite(member, org.id, 'c@example.com'), 403, 'forbidden');
    expectProblem(await invite(outsider, org.id, 'd@example.com'), 404, 'organization_not_found');
    expectProblem(await invite(admin, org.id, 'e@example.com', 'superuser'), 400, 'invalid_role');
  });

  it('lists pending invitations without tokens, revokes one once, and replaces a pending one on re-invite', async () => {
    const env = await t.given.environment();
    const { org, owner, member } = await team(env);
    const first = (await invite(owner, org.id, 'ada@example.com')).json();
    const second = (await invite(owner, org.id, 'ada@example.com', 'admin')).json();
    const other = (await invite(owner, org.id, 'bob@example.com')).json();
    const listed = (await owner.get(`/organizations/${org.id}/invitations`)).json();
    expect(listed.items.map((i: { id: string; role: string; status: string }) => [i.id, i.role, i.status])).toEqual([[second.id, 'admin', 'PENDING'], [other.id, 'member', 'PENDING']]);
    expect(JSON.stringify(listed)).not.toContain('orginv_');
    expectProblem(await member.get(`/organizations/${org.id}/invitations`), 403, 'forbidden');

    expect((await owner.post(`/organizations/${org.id}/invitations/${other.id}/revoke`)).json()).toMatchObject({ id: other.id, status: 'REVOKED' });
    const again = expectProblem(await owner.post(`/organizations/${org.id}/invitations/${other.id}/revoke`), 409, 'invitation_not_pending');
    expect(again.properties.status).toBe('REVOKED');
    const invitee = await signedIn(env, await t.given.user(env, { email: 'ada@example.com' }));
    expectProblem(await invitee.post('/organization-invitations/accept', { token: first.token }), 410, 'invitation_revoked');
  });

  it('lets the invited, verified user accept once, joining with the invited role', async () => {
    const env = await t.given.environment();
    const { org, owner } = await team(env);
    const { token } = (await invite(owner, org.id, 'ada@example.com', 'admin')).json();
    const ada = await t.given.user(env, { email: 'ada@example.com' });
    const client = await signedIn(env, ada);
    const res = await client.post('/organization-invitations/accept', { token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ organizationId: org.id, userId: ada.id, role: 'admin', roleName: 'Admin', joinedAt: t.clock.now().toISOString() });
    expect((await storedRoles(t, env, org.id))[ada.id]).toBe('admin');
    expectProblem(await client.post('/organization-invitations/accept', { token }), 409, 'invitation_already_accepted');
    expect((await client.get(`/organizations/${org.id}`)).json()).toMatchObject({ role: 'admin' });
  });

  it("stops an invitation from working once its inviter has left the organization: 410 invitation_revoked, stored as REVOKED, no membership", async () => {
    const env = await t.given.environment();
    const [ownerUser, adminUser] = [await t.given.user(env), await t.given.user(env)];
    const owner = await signedIn(env, ownerUser);
    const org = (await owner.post('/organizations', { name: 'Acme' })).json();
    await addMember(t, env, org.id, adminUser.id, 'admin');
    const byAdmin = (await invite(await signedIn(env, adminUser), org.id, 'ada@example.com')).json();
    const byOwner = (await invite(owner, org.id, 'bob@example.com')).json();
    expect((await t.server(env).delete(`/organizations/${org.id}/members/${adminUser.id}`)).statusCode).toBe(204);

    const ada = await signedIn(env, await t.given.user(env, { email: 'ada@example.com' }));
    expectProblem(await ada.post('/organization-invitations/accept', { token: byAdmin.token }), 410, 'invitation_revoked');
    expect((await storedRoles(t, env, org.id))).not.toHaveProperty(byAdmin.id);
    const stored = await t.db.selectFrom('organization_invitations').select(['id', 'status']).where('environment_id', '=', env.id).orderBy('id').execute();
    expect(stored).toEqual([{ id: byAdmin.id, status: 'REVOKED' }, { id: byOwner.id, status: 'PENDING' }]);
    const bob = await signedIn(env, await t.given.user(env, { email: 'bob@example.com' }));
    expect((await bob.post('/organization-invitations/accept', { token: byOwner.token })).statusCode).toBe(200);
  });

  it('lets a token be accepted once under 20 concurrent accepts, and makes exactly one membership', async () => {
    const env = await t.given.environment();
    const { org, owner } = await team(env);
    const { token } = (await invite(owner, org.id, 'ada@example.com')).json();
    const ada = await t.given.user(env, { email: 'ada@example.com' });
    // Sessions one after another: concurrent sign-ins of one account are held to its lockout budget.
    const clients = [];
    for (let i = 0; i < 20; i++) clients.push(await signedIn(env, ada));
    const results = await Promise.all(clients.map((client) => client.post('/organization-invitations/accept', { token })));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of results.filter((r) => r.statusCode !== 200)) expectProblem(r, 409, 'invitation_already_accepted');
    const memberships = await t.db.selectFrom('organization_memberships').select('user_id')
      .where('environment_id', '=', env.id).where('organization_id', '=', org.id).where('user_id', '=', ada.id).execute();
    expect(memberships).toHaveLength(1);
  });

  it('refuses another email with 403, an unknown token with 404 and an expired one with 410', async () => {
    const env = await t.given.environment();
    const { org, owner } = await team(env);
    const { token } = (await invite(owner, org.id, 'ada@example.com')).json();
    const bob = await signedIn(env, await t.given.user(env, { email: 'bob@example.com' }));
    expectProblem(await bob.post('/organization-invitations/accept', { token }), 403, 'forbidden');
    expectProblem(await bob.post('/organization-invitations/accept', { token: 'orginv_unknown' }), 404, 'invitation_not_found');

    t.clock.advance(31 * DAY_MS);
    const ada = await signedIn(env, await t.given.user(env, { email: 'ada@example.com' }));
    expectProblem(await ada.post('/organization-invitations/accept', { token }), 410, 'invitation_expired');
  });

  it('answers 409 already_member when the invitee is already a member, and leaves the invitation pending', async () => {
    const env = await t.given.environment();
    const { org, owner } = await team(env);
    const ada = await t.given.user(env, { email: 'ada@example.com' });
    await addMember(t, env, org.id, ada.id, 'member');
    const { id, token } = (await invite(owner, org.id, 'ada@example.com', 'admin')).json();
    expectProblem(await (await signedIn(env, ada)).post('/organization-invitations/accept', { token }), 409, 'already_member');
    expect((await owner.get(`/organizations/${org.id}/invitations`)).json().items.map((i: { id: string }) => i.id)).toEqual([id]);
  });

  it('signs a new user up from the token: verified, a member with the invited role, and signed in, once under 20 concurrent attempts', async () => {
    const env = await t.given.environment();
    const { org, owner } = await team(env);
    const { token } = (await invite(owner, org.id, 'newcomer@example.com', 'admin')).json();
    const results = await Promise.all(Array.from({ length: 20 }, () =>
      t.client(env).post('/auth/organization-invitation/password-signup?_is_native=true', { token, password: PASSWORD, legalConsentAccepted: true })));
    const created = results.filter((r) => r.statusCode === 201);
    expect(created).toHaveLength(1);
    for (const r of results.filter((r) => r.statusCode !== 201)) expectProblem(r, 409, 'invitation_already_accepted');
    const { user, sessionToken } = created[0]!.json();
    expect(user).toMatchObject({ email: 'newcomer@example.com', registrationState: 'complete' });
    expect(user.emailVerifiedAt).not.toBeNull();
    expect((await storedRoles(t, env, org.id))[user.id]).toBe('admin');
    expect((await t.client(env, { token: sessionToken }).get(`/organizations/${org.id}`)).json()).toMatchObject({ role: 'admin' });
  });

  it('refuses a sign-up for an email that already has an account with 409 email_taken, leaving the invitation pending', async () => {
    const env = await t.given.environment();
    const { org, owner } = await team(env);
    await t.given.user(env, { email: 'taken@example.com' });
    const { token } = (await invite(owner, org.id, 'taken@example.com')).json();
    expectProblem(await t.client(env).post('/auth/organization-invitation/password-signup', { token, password: PASSWORD, legalConsentAccepted: true }), 409, 'email_taken');
    expect((await owner.get(`/organizations/${org.id}/invitations`)).json().items).toHaveLength(1);
  });

  it('records creation, revocation and acceptance in the audit trail', async () => {
    const env = await t.given.environment();
    const { org, owner } = await team(env);
    const revoked = (await invite(owner, org.id, 'x@example.com')).json();
    await owner.post(`/organizations/${org.id}/invitations/${revoked.id}/revoke`);
    const { token, id } = (await invite(owner, org.id, 'ada@example.com')).json();
    const ada = await t.given.user(env, { email: 'ada@example.com' });
    await (await signedIn(env, ada)).post('/organization-invitations/accept', { token });
    const actions = (await t.server(env).get('/audit-events?targetType=organization_invitation&limit=100')).json().items
      .map((e: { action: string; targets: { id: string }[] }) => [e.action, e.targets[1]!.id]);
    expect(actions).toEqual([
      ['organization_invitation.created', revoked.id], ['organization_invitation.revoked', revoked.id],
      ['organization_invitation.created', id], ['organization_invitation.accepted', id],
    ]);
  });
});

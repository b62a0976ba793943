import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import { PASSWORD } from '../helpers/given.js';
import { NEW_PASSWORD, passwordReset } from '../auth/support.js';
import { invite, invitingEnvironment } from '../invitations/support.js';
import { storedRoles } from '../organizations/support.js';
import { givenEndpoint } from '../webhooks/given-endpoint.js';
import { addDomain, createOrganization, expectProblem, startAppWithDns, verifiedDomain } from './support.js';

/** The 6-digit code of the newest mail to this address. */
async function latestCode(t: TestApp, env: TestEnv, email: string): Promise<string> {
  const [mail] = await t.outbox(env, email);
  return /\b(\d{6})\b/.exec(mail!.subject)![1]!;
}

describe('enrollment by verified domain', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  beforeAll(async () => {
    // No job worker: the webhook tests read the deliveries' jobs as they were queued.
    ({ t, dns } = await startAppWithDns({ jobsInBackground: false }));
  });
  afterAll(async () => { await t?.close(); await dns?.close(); });

  /** An organization with an owner and a verified domain in the given mode. */
  async function organizationWithDomain(env: TestEnv, domain: string, enrollment: string) {
    const owner = await t.given.user(env, { email: `owner@${domain}` });
    const org = await createOrganization(t, env, { createdBy: owner.id });
    const verified = await verifiedDomain(t, env, dns, org.id, domain, enrollment);
    return { org, owner, domain: verified };
  }

  async function signUpAndVerify(env: TestEnv, email: string) {
    const res = await t.client(env).post('/auth/sign-up', { email, password: PASSWORD });
    expect(res.statusCode, res.body).toBe(201);
    const verified = await t.client(env).post('/auth/verify-email?_is_native=true', { email, code: await latestCode(t, env, email) });
    expect(verified.statusCode, verified.body).toBe(200);
    return { userId: verified.json().user.id as string, token: verified.json().sessionToken as string };
  }

  describe('automatic', () => {
    it('makes a user a member with the default role when they verify their email at sign-up', async () => {
      const env = await t.given.environment();
      const { org } = await organizationWithDomain(env, 'auto.example', 'automatic');

      const pending = await t.client(env).post('/auth/sign-up', { email: 'Ada@Auto.example', password: PASSWORD });
      expect(await storedRoles(t, env, org.id)).not.toHaveProperty(pending.json().user.id);
      const { userId, token } = await signUpAndVerify(env, 'grace@auto.example');

      expect((await storedRoles(t, env, org.id))[userId]).toBe('member');
      const mine = (await t.client(env, { token }).get('/organizations')).json().items;
      expect(mine).toEqual([expect.objectContaining({ id: org.id, role: 'member', roleName: 'Member' })]);
      const events = (await t.server(env).get(`/audit-events?targetType=user&targetId=${userId}&action=organization_membership.created`)).json().items;
      expect(events.map((e: any) => [e.actor.type, e.producer.via, e.metadata])).toEqual([
        ['system', 'enrollment', { role: 'member', enrollment: 'automatic', domainId: expect.any(String), domain: 'auto.example' }],
      ]);
    });

    it('enrolls a user the Server API creates with an email at the domain (an email given there counts as verified), and one whose email it changes', async () => {
      const env = await t.given.environment();
      const { org } = await organizationWithDomain(env, 'server-auto.example', 'automatic');
      const created = await t.given.user(env, { email: 'ada@SERVER-AUTO.example' });
      const moved = await t.given.user(env, { email: 'grace@elsewhere.example' });
      expect(await storedRoles(t, env, org.id)).not.toHaveProperty(moved.id);

      expect((await t.server(env).patch(`/users/${moved.id}`, { email: 'grace@server-auto.example' })).statusCode).toBe(200);

      expect(await storedRoles(t, env, org.id)).toMatchObject({ [created.id]: 'member', [moved.id]: 'member' });
    });

    it('enrolls a signed-up user whose unverified email a password reset proves, and only then', async () => {
      const env = await t.given.environment({ emailVerificationRequired: false });
      const { org } = await organizationWithDomain(env, 'reset.example', 'automatic');
      const signedUp = await t.client(env).post('/auth/sign-up?_is_native=true', { email: 'ada@reset.example', password: PASSWORD });
      expect(signedUp.statusCode, signedUp.body).toBe(201);
      const userId = signedUp.json().user.id;
      expect(await storedRoles(t, env, org.id)).not.toHaveProperty(userId);

      const { reset, requestCode } = passwordReset(() => t);
      const res = await reset(env, { email: 'ada@reset.example', code: await requestCode(env, 'ada@reset.example'), newPassword: NEW_PASSWORD });

      expect(res.statusCode, res.body).toBe(200);
      expect((await storedRoles(t, env, org.id))[userId]).toBe('member');
    });

    it('enrolls a user who signs up from an environment invitation to an email at the domain', async () => {
      const env = await invitingEnvironment(t);
      const { org } = await organizationWithDomain(env, 'invited.example', 'automatic');
      const { token } = await invite(t, env, { email: 'ada@invited.example' });
      const res = await t.client(env).post('/auth/invitation/password-signup?_is_native=true', { token, password: PASSWORD, legalConsentAccepted: true });
      expect(res.statusCode, res.body).toBe(201);
      expect((await storedRoles(t, env, org.id))[res.json().user.id]).toBe('member');
    });

    it('sends the user.created webhook before the organization_membership.created of the enrollment', async () => {
      const env = await t.given.environment();
      const { org } = await organizationWithDomain(env, 'ordered.example', 'automatic');
      await givenEndpoint(t.db, env, 'http://127.0.0.1:9/never', { eventTypes: ['user.created', 'organization_membership.created'] });
      const user = await t.given.user(env, { email: 'ada@ordered.example' });

      // In the order their deliveries are sent: their jobs' (one endpoint's jobs go in queue order).
      const events = await t.db.selectFrom('webhook_events as v')
        .innerJoin('webhook_deliveries as d', (join) => join.onRef('d.environment_id', '=', 'v.environment_id').onRef('d.event_id', '=', 'v.id'))
        .innerJoin('jobs as j', (join) => join.onRef('j.environment_id', '=', 'd.environment_id').onRef('j.id', '=', 'd.job_id'))
        .select(['v.type', 'v.data']).where('v.environment_id', '=', env.id).orderBy('j.seq').execute();
      expect(events.map((e) => [e.type, (e.data as any).targets])).toEqual([
        ['user.created', [{ type: 'user', id: user.id }]],
        ['organization_membership.created', [{ type: 'organization', id: org.id }, { type: 'user', id: user.id }]],
      ]);
    });

    it('enrolls nobody through an unverified domain, a domain in another mode, or a subdomain', async () => {
      const env = await t.given.environment();
      const unverified = await createOrganization(t, env);
      await addDomain(t, env, unverified.id, 'unverified.example', 'automatic');
      const { org: suggesting } = await organizationWithDomain(env, 'suggesting.example', 'suggest');
      const { org: auto } = await organizationWithDomain(env, 'parent.example', 'automatic');

      const users = [
        await t.given.user(env, { email: 'a@unverified.example' }), await t.given.user(env, { email: 'b@suggesting.example' }),
        await t.given.user(env, { email: 'c@sub.parent.example' }),
      ];

      expect(Object.keys(await storedRoles(t, env, unverified.id))).toEqual([]);
      for (const org of [suggesting, auto]) {
        const members = Object.keys(await storedRoles(t, env, org.id));
        expect(users.filter((u) => members.includes(u.id))).toEqual([]);
      }
    });

    it("keeps to the environment: another environment's organization with the same verified domain enrolls nobody here", async () => {
      const [here, there] = [await t.given.environment(), await t.given.environment()];
      const { org } = await organizationWithDomain(there, 'tenant.example', 'automatic');
      const user = await t.given.user(here, { email: 'ada@tenant.example' });
      expect(await storedRoles(t, there, org.id)).not.toHaveProperty(user.id);
      expect((await t.server(here).get(`/users/${user.id}/organizations`)).json().items).toEqual([]);
    });

    it('gives a custom role set\'s least-privileged role when it has no `member` role', async () => {
      const env = await t.given.environment();
      const set = await t.admin.post(`/environments/${env.id}/role-sets`, { name: 'Support', roles: [{ key: 'owner', name: 'Owner' }, { key: 'lead', name: 'Lead', permissions: ['members:manage'] }, { key: 'agent', name: 'Agent' }] });
      expect(set.statusCode, set.body).toBe(201);
      const org = await createOrganization(t, env, { roleSetId: set.json().id });
      await verifiedDomain(t, env, dns, org.id, 'support.example', 'automatic');
      const user = await t.given.user(env, { email: 'ada@support.example' });
      expect((await storedRoles(t, env, org.id))[user.id]).toBe('agent');
    });

    it('does not enroll users verified before the domain was: they get the organization as a suggestion instead', async () => {
      const env = await t.given.environment();
      const early = await t.given.user(env, { email: 'early@later.example' });
      const org = await createOrganization(t, env);
      await verifiedDomain(t, env, dns, org.id, 'later.example', 'automatic');
      expect(await storedRoles(t, env, org.id)).not.toHaveProperty(early.id);
      const session = await t.given.session(env, early);
      expect((await t.client(env, { token: session.token }).get('/me/organization-suggestions')).json()).toEqual({
        items: [{ organization: { id: org.id, name: 'Acme', slug: null }, domain: 'later.example', enrollment: 'automatic' }],
      });
    });
  });

  describe('suggest', () => {
    it('suggests the organization to a user with a verified email at the domain, who may join it once', async () => {
      const env = await t.given.environment();
      const { org } = await organizationWithDomain(env, 'suggest.example', 'suggest');
      const ada = await t.given.user(env, { email: 'ada@suggest.example' });
      const client = t.client(env, { token: (await t.given.session(env, ada)).token });
      expect(await storedRoles(t, env, org.id)).not.toHaveProperty(ada.id);

      const suggestions = await client.get('/me/organization-suggestions');
      expect(suggestions.statusCode, suggestions.body).toBe(200);
      expect(suggestions.json()).toEqual({ items: [{ organization: { id: org.id, name: 'Acme', slug: null }, domain: 'suggest.example', enrollment: 'suggest' }] });

      const joined = await client.post(`/me/organization-suggestions/${org.id}/accept`);
      expect(joined.statusCode, joined.body).toBe(200);
      expect(joined.json()).toEqual({ id: org.id, name: 'Acme', slug: null, role: 'member', roleName: 'Member', createdAt: org.createdAt });
      expect((await storedRoles(t, env, org.id))[ada.id]).toBe('member');
      expect((await client.get('/me/organization-suggestions')).json()).toEqual({ items: [] });
      expectProblem(await client.post(`/me/organization-suggestions/${org.id}/accept`), 404, 'organization_not_found');
      const [event] = (await t.server(env).get(`/audit-events?targetType=user&targetId=${ada.id}&action=organization_membership.created`)).json().items;
      expect([event.actor, event.metadata]).toEqual([{ type: 'user', id: ada.id, impersonatorId: null }, { role: 'member', enrollment: 'suggest', domain: 'suggest.example' }]);
    });

    it('suggests nothing for an unverified email, another domain, an unverified or `none` domain, or another environment', async () => {
      const env = await t.given.environment();
      const { org: none } = await organizationWithDomain(env, 'none.example', 'none');
      const unverified = await createOrganization(t, env);
      await addDomain(t, env, unverified.id, 'pending.example', 'suggest');
      const other = await t.given.environment();
      const { org: elsewhere } = await organizationWithDomain(other, 'elsewhere.example', 'suggest');

      for (const email of ['a@none.example', 'b@pending.example', 'c@elsewhere.example', 'd@unrelated.example']) {
        const user = await t.given.user(env, { email });
        const client = t.client(env, { token: (await t.given.session(env, user)).token });
        expect((await client.get('/me/organization-suggestions')).json()).toEqual({ items: [] });
        for (const id of [none.id, unverified.id, elsewhere.id]) expectProblem(await client.post(`/me/organization-suggestions/${id}/accept`), 404, 'organization_not_found');
      }
    });

    it('suggests nothing to a signed-in user whose email is not verified', async () => {
      const env = await t.given.environment({ emailVerificationRequired: false });
      await organizationWithDomain(env, 'open.example', 'suggest');
      const signedUp = await t.client(env).post('/auth/sign-up?_is_native=true', { email: 'ada@open.example', password: PASSWORD });
      expect(signedUp.statusCode, signedUp.body).toBe(201);
      expect(signedUp.json().user.emailVerifiedAt).toBeNull();
      expect((await t.client(env, { token: signedUp.json().sessionToken }).get('/me/organization-suggestions')).json()).toEqual({ items: [] });
    });

    it('stops suggesting once the domain is deleted or set to none; memberships already made stay', async () => {
      const env = await t.given.environment();
      const { org, domain } = await organizationWithDomain(env, 'changing.example', 'automatic');
      const member = await t.given.user(env, { email: 'member@changing.example' });
      const early = await t.given.user(env, { email: 'early@changed.example' });
      expect((await t.server(env).patch(`/users/${early.id}`, { email: 'early@changing.example' })).statusCode).toBe(200); // enrolled too
      expect(await storedRoles(t, env, org.id)).toMatchObject({ [member.id]: 'member', [early.id]: 'member' });
      expect((await t.server(env).delete(`/organizations/${org.id}/members/${early.id}`)).statusCode).toBe(204);
      const client = t.client(env, { token: (await t.given.session(env, { ...early, email: 'early@changing.example' })).token });
      expect((await client.get('/me/organization-suggestions')).json().items).toHaveLength(1);

      expect((await t.server(env).patch(`/organizations/${org.id}/domains/${domain.id}`, { enrollment: 'none' })).statusCode).toBe(200);
      expect((await client.get('/me/organization-suggestions')).json().items).toEqual([]);
      expect((await t.server(env).delete(`/organizations/${org.id}/domains/${domain.id}`)).statusCode).toBe(204);
      expect(await storedRoles(t, env, org.id)).toHaveProperty(member.id, 'member');
    });

    it('needs a session: 401 without one', async () => {
      const env = await t.given.environment();
      expect((await t.client(env).get('/me/organization-suggestions')).statusCode).toBe(401);
    });
  });
});

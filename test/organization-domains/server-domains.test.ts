import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import { givenEndpoint } from '../webhooks/given-endpoint.js';
import { addDomain, createOrganization, DOMAIN_KEYS, expectProblem, publish, startAppWithDns, verifiedDomain } from './support.js';

describe('Server API: organization domains', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  beforeAll(async () => {
    // No job worker: the webhook tests read the deliveries' jobs as they were queued.
    ({ t, dns } = await startAppWithDns({ jobsInBackground: false }));
  });
  afterAll(async () => { await t?.close(); await dns?.close(); });

  const domains = (orgId: string) => `/organizations/${orgId}/domains`;

  describe('POST and GET /organizations/{id}/domains, DELETE …/{domainId}', () => {
    it('adds an unverified domain with the TXT record to publish, lists, gets and deletes it', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);

      const added = await addDomain(t, env, org.id, 'acme.example');

      expect(Object.keys(added).sort()).toEqual(DOMAIN_KEYS);
      expect(added).toMatchObject({ organizationId: org.id, domain: 'acme.example', enrollment: 'none', verified: false, verifiedAt: null });
      expect(added.verification).toEqual({ type: 'dns_txt', name: '_gatehouse-verification.acme.example', value: expect.stringMatching(/^gatehouse-domain-verification=[\w-]{32}$/) });
      const other = await addDomain(t, env, org.id, 'acme-labs.example', 'suggest');
      expect(other.enrollment).toBe('suggest');
      expect(other.verification.value).not.toBe(added.verification.value);

      const list = await t.server(env).get(domains(org.id));
      expect(list.json()).toEqual({ items: [added, other], nextCursor: null, hasMore: false });
      const page = await t.server(env).get(`${domains(org.id)}?limit=1`);
      expect(page.json()).toEqual({ items: [added], nextCursor: added.id, hasMore: true });
      expect((await t.server(env).get(`${domains(org.id)}/${added.id}`)).json()).toEqual(added);

      expect((await t.server(env).delete(`${domains(org.id)}/${added.id}`)).statusCode).toBe(204);
      expectProblem(await t.server(env).get(`${domains(org.id)}/${added.id}`), 404, 'resource_not_found');
      expectProblem(await t.server(env).delete(`${domains(org.id)}/${added.id}`), 404, 'resource_not_found');
      expect((await t.server(env).get(domains(org.id))).json().items).toEqual([other]);
    });

    it.each([
      ['Acme.EXAMPLE', 'acme.example'],
      ['  acme.example.  ', 'acme.example'],
      ['https://Acme.example:8443/sign-in?x=1', 'acme.example'],
      ['acme.example/path', 'acme.example'],
      ['bücher.example', 'xn--bcher-kva.example'],
      ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
      ['mail.acme.co.uk', 'mail.acme.co.uk'],
    ])('normalizes %j to %s', async (typed, stored) => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      expect((await addDomain(t, env, org.id, typed)).domain).toBe(stored);
    });

    it.each([
      ['com', 'invalid_domain'], ['co.uk', 'invalid_domain'], ['github.io', 'invalid_domain'], ['localhost', 'invalid_domain'],
      ['127.0.0.1', 'invalid_domain'], ['[::1]', 'invalid_domain'], ['exa mple.com', 'invalid_domain'], ['-acme.example', 'invalid_domain'],
      ['*.acme.example', 'invalid_domain'], ['gmail.com', 'free_email_domain'], ['https://Outlook.com/', 'free_email_domain'],
    ])('refuses %j with 400 %s', async (typed, code) => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      expectProblem(await t.server(env).post(domains(org.id), { domain: typed }), 400, code);
    });

    it('refuses an unknown enrollment mode and unknown fields with 400 invalid_request', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      expectProblem(await t.server(env).post(domains(org.id), { domain: 'acme.example', enrollment: 'always' }), 400, 'invalid_request');
      expectProblem(await t.server(env).post(domains(org.id), { domain: 'acme.example', verified: true }), 400, 'invalid_request');
    });

    it('answers 409 domain_already_added for a domain the organization has, in any spelling', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      await addDomain(t, env, org.id, 'acme.example');
      const res = expectProblem(await t.server(env).post(domains(org.id), { domain: 'ACME.example.' }), 409, 'domain_already_added');
      expect(res.properties.domain).toBe('acme.example');
    });

    it("answers 404 for another environment's organization and domain, as for missing ones", async () => {
      const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
      const org = await createOrganization(t, theirs);
      const domain = await addDomain(t, theirs, org.id, 'acme.example');
      const base = domains(org.id);
      expectProblem(await t.server(mine).get(base), 404, 'organization_not_found');
      expectProblem(await t.server(mine).post(base, { domain: 'other.example' }), 404, 'organization_not_found');
      for (const res of [
        await t.server(mine).get(`${base}/${domain.id}`), await t.server(mine).patch(`${base}/${domain.id}`, { enrollment: 'automatic' }),
        await t.server(mine).post(`${base}/${domain.id}/verify`), await t.server(mine).delete(`${base}/${domain.id}`),
      ]) expectProblem(res, 404, 'organization_not_found');
      const ownOrg = await createOrganization(t, mine);
      expectProblem(await t.server(mine).get(`${domains(ownOrg.id)}/${domain.id}`), 404, 'resource_not_found');
      expect((await t.server(theirs).get(`${base}/${domain.id}`)).json()).toEqual(domain);
    });

    it("goes with its organization: deleting the organization deletes its domains", async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      await verifiedDomain(t, env, dns, org.id, 'gone.example');
      expect((await t.server(env).delete(`/organizations/${org.id}`)).statusCode).toBe(204);
      const rows = await t.db.selectFrom('organization_domains').select('id').where('environment_id', '=', env.id).execute();
      expect(rows).toEqual([]);
      const next = await createOrganization(t, env);
      expect((await verifiedDomain(t, env, dns, next.id, 'gone.example')).verified).toBe(true);
    });
  });

  describe('POST …/domains/{domainId}/verify', () => {
    it('verifies the domain when its TXT record holds the value, among other records', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      const domain = await addDomain(t, env, org.id, 'verified.example');
      dns.records.set(domain.verification.name, ['v=spf1 -all']);
      publish(dns, domain);
      t.clock.advance(60_000);
      const at = t.clock.now().toISOString();

      const res = await t.server(env).post(`${domains(org.id)}/${domain.id}/verify`);

      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ ...domain, verified: true, verifiedAt: at, updatedAt: at });
      const asked = dns.questions;
      expect((await t.server(env).post(`${domains(org.id)}/${domain.id}/verify`)).json()).toEqual(res.json());
      expect(dns.questions).toBe(asked); // a verified domain answers as it is, without a lookup
    });

    it('answers 422 domain_not_verified with what it looked up and found when the record is missing or wrong', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      const domain = await addDomain(t, env, org.id, 'unpublished.example');
      const verify = () => t.server(env).post(`${domains(org.id)}/${domain.id}/verify`);

      const missing = expectProblem(await verify(), 422, 'domain_not_verified');
      expect(missing.properties).toEqual({
        code: 'domain_not_verified', domain: 'unpublished.example', lookedUp: { type: 'TXT', name: '_gatehouse-verification.unpublished.example' },
        expected: domain.verification.value, found: [], dnsError: null,
      });
      dns.records.set(domain.verification.name, ['gatehouse-domain-verification=someone-elses']);
      const wrong = expectProblem(await verify(), 422, 'domain_not_verified');
      expect(wrong.properties.found).toEqual(['gatehouse-domain-verification=someone-elses']);
      expect((await t.server(env).get(`${domains(org.id)}/${domain.id}`)).json().verified).toBe(false);
    });

    it('answers 422 domain_not_verified naming the DNS error when the DNS server fails', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      const domain = await addDomain(t, env, org.id, 'dns-down.example');
      publish(dns, domain);
      dns.mode = 'servfail';
      try {
        const failed = expectProblem(await t.server(env).post(`${domains(org.id)}/${domain.id}/verify`), 422, 'domain_not_verified');
        expect(failed.properties).toMatchObject({ dnsError: 'ESERVFAIL', found: [], lookedUp: { type: 'TXT', name: domain.verification.name } });
        expect(failed.detail).toContain('the DNS lookup failed (ESERVFAIL)');
      } finally {
        dns.mode = 'answer';
      }
    });

    it('lets one organization of an environment verify a domain: another cannot add it (409 domain_taken), nor verify it if it added it first', async () => {
      const env = await t.given.environment();
      const [first, second, third] = [await createOrganization(t, env), await createOrganization(t, env), await createOrganization(t, env)];
      const early = await addDomain(t, env, second.id, 'contested.example');
      publish(dns, early);
      await verifiedDomain(t, env, dns, first.id, 'contested.example');

      const refused = expectProblem(await t.server(env).post(domains(third.id), { domain: 'Contested.example' }), 409, 'domain_taken');
      expect(refused.properties.domain).toBe('contested.example');
      expectProblem(await t.server(env).post(`${domains(second.id)}/${early.id}/verify`), 409, 'domain_taken');
      expect((await t.server(env).get(`${domains(second.id)}/${early.id}`)).json().verified).toBe(false);
    });

    it('lets exactly one of two organizations verifying the same domain at once win; the other gets 409 domain_taken', async () => {
      const env = await t.given.environment();
      const [first, second] = [await createOrganization(t, env), await createOrganization(t, env)];
      const [a, b] = [await addDomain(t, env, first.id, 'race.example'), await addDomain(t, env, second.id, 'race.example')];
      publish(dns, a);
      publish(dns, b);

      const answers = await Promise.all([
        t.server(env).post(`${domains(first.id)}/${a.id}/verify`), t.server(env).post(`${domains(second.id)}/${b.id}/verify`),
      ]);

      expect(answers.map((res) => res.statusCode).sort()).toEqual([200, 409]);
      expect(answers.find((res) => res.statusCode === 409)!.json().properties.code).toBe('domain_taken');
      const verified = await t.db.selectFrom('organization_domains').select('organization_id')
        .where('environment_id', '=', env.id).where('domain', '=', 'race.example').where('verified_at', 'is not', null).execute();
      expect(verified).toHaveLength(1);
    });

    it('lets organizations of different environments verify the same domain', async () => {
      const [one, two] = [await t.given.environment(), await t.given.environment()];
      const a = await verifiedDomain(t, one, dns, (await createOrganization(t, one)).id, 'shared.example');
      const b = await verifiedDomain(t, two, dns, (await createOrganization(t, two)).id, 'shared.example');
      expect([a.verified, b.verified]).toEqual([true, true]);
    });

    it('frees the domain for another organization once the verifying one deletes it', async () => {
      const env = await t.given.environment();
      const [first, second] = [await createOrganization(t, env), await createOrganization(t, env)];
      const domain = await verifiedDomain(t, env, dns, first.id, 'moving.example');
      expect((await t.server(env).delete(`${domains(first.id)}/${domain.id}`)).statusCode).toBe(204);
      expect((await verifiedDomain(t, env, dns, second.id, 'moving.example')).verified).toBe(true);
    });
  });

  describe('PATCH …/domains/{domainId}', () => {
    it('changes the enrollment mode and nothing else', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      const domain = await addDomain(t, env, org.id, 'modes.example');
      t.clock.advance(60_000);
      const res = await t.server(env).patch(`${domains(org.id)}/${domain.id}`, { enrollment: 'automatic' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ ...domain, enrollment: 'automatic', updatedAt: t.clock.now().toISOString() });
      expectProblem(await t.server(env).patch(`${domains(org.id)}/${domain.id}`, { enrollment: 'sometimes' }), 400, 'invalid_request');
      expectProblem(await t.server(env).patch(`${domains(org.id)}/${domain.id}`, { domain: 'other.example' }), 400, 'invalid_request');
    });
  });

  describe('audit trail', () => {
    it('records each change of a domain with the organization and the domain as targets', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      const domain = await verifiedDomain(t, env, dns, org.id, 'audited.example');
      await t.server(env).patch(`${domains(org.id)}/${domain.id}`, { enrollment: 'suggest' });
      await t.server(env).patch(`${domains(org.id)}/${domain.id}`, { enrollment: 'suggest' }); // no change, no event
      await t.server(env).delete(`${domains(org.id)}/${domain.id}`);

      const events = (await t.server(env).get(`/audit-events?targetType=organization_domain&targetId=${domain.id}`)).json().items;
      const targets = [{ type: 'organization', id: org.id }, { type: 'organization_domain', id: domain.id }];
      expect(events.map((e: { action: string; metadata: unknown; targets: unknown; actor: { type: string } }) => [e.action, e.metadata, e.targets, e.actor.type])).toEqual([
        ['organization_domain.created', { domain: 'audited.example', enrollment: 'none' }, targets, 'api_key'],
        ['organization_domain.verified', { domain: 'audited.example', enrollment: 'none' }, targets, 'api_key'],
        ['organization_domain.updated', { domain: 'audited.example', enrollment: 'suggest', previousEnrollment: 'none' }, targets, 'api_key'],
        ['organization_domain.deleted', { domain: 'audited.example', wasVerified: true }, targets, 'api_key'],
      ]);
    });

    it('makes webhook events of the types organization_domain.created, verified, updated and deleted', async () => {
      const env = await t.given.environment();
      await givenEndpoint(t.db, env, 'http://127.0.0.1:9/never', { eventTypes: ['organization_domain.created', 'organization_domain.verified', 'organization_domain.updated', 'organization_domain.deleted'] });
      const org = await createOrganization(t, env);
      const domain = await verifiedDomain(t, env, dns, org.id, 'hooked.example');
      await t.server(env).patch(`${domains(org.id)}/${domain.id}`, { enrollment: 'automatic' });
      await t.server(env).delete(`${domains(org.id)}/${domain.id}`);

      const events = await t.db.selectFrom('webhook_events').select(['type', 'data']).where('environment_id', '=', env.id).orderBy('id').execute();
      expect(events.map((e) => e.type).sort()).toEqual(['organization_domain.created', 'organization_domain.deleted', 'organization_domain.updated', 'organization_domain.verified']);
      expect(events.find((e) => e.type === 'organization_domain.updated')!.data).toMatchObject({
        object: 'organization', id: org.id, targets: [{ type: 'organization', id: org.id }, { type: 'organization_domain', id: domain.id }],
        metadata: { domain: 'hooked.example', enrollment: 'automatic', previousEnrollment: 'none' },
      });
    });
  });
});

import type { AddressInfo } from 'node:net';
import { createServerClient, GatehouseError } from '@gatehouse/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import { publish, startAppWithDns } from './support.js';

describe('the SDK on organization domains', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let baseUrl: string;
  beforeAll(async () => {
    ({ t, dns } = await startAppWithDns());
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => { await t?.close(); await dns?.close(); });

  it('adds, verifies, lists, updates and deletes a domain with typed methods', async () => {
    const env = await t.given.environment();
    const gatehouse = createServerClient({ baseUrl, secretKey: env.secretKey });
    const org = await gatehouse.createOrganization({ name: 'Acme' });

    const domain = await gatehouse.createOrganizationDomain({ organizationId: org.id, domain: 'SDK.example', enrollment: 'suggest' });
    expect(domain).toMatchObject({ domain: 'sdk.example', verified: false, verification: { type: 'dns_txt', name: '_gatehouse-verification.sdk.example' } });
    const refused = await gatehouse.verifyOrganizationDomain({ organizationId: org.id, domainId: domain.id }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatehouseError);
    expect(refused).toMatchObject({ status: 422, code: 'domain_not_verified' });

    publish(dns, domain);
    expect(await gatehouse.verifyOrganizationDomain({ organizationId: org.id, domainId: domain.id })).toMatchObject({ id: domain.id, verified: true });
    const listed = [];
    for await (const item of gatehouse.paginate('listOrganizationDomains', { organizationId: org.id })) listed.push(item.domain);
    expect(listed).toEqual(['sdk.example']);
    expect((await gatehouse.updateOrganizationDomain({ organizationId: org.id, domainId: domain.id, enrollment: 'automatic' })).enrollment).toBe('automatic');
    expect(await gatehouse.deleteOrganizationDomain({ organizationId: org.id, domainId: domain.id })).toBeUndefined();
  });
});

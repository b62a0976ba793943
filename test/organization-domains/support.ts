import { expect } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { PATIENCE_MS } from '../helpers/patience.js';

export { expectProblem } from '../helpers/problem.js';
export { createOrganization } from '../organizations/support.js';

/**
 * A test DNS server on loopback and an app that checks domains with it. The loopback server answers at once;
 * the bound is only there for a lookup that never comes back.
 */
export async function startAppWithDns(options: { jobsInBackground?: boolean } = {}) {
  const dns = await startDnsServer();
  const t = await startTestApp({ dns: { servers: [dns.address], timeoutMs: PATIENCE_MS }, ...options });
  return { t, dns };
}

export const DOMAIN_KEYS = ['createdAt', 'domain', 'enrollment', 'id', 'organizationId', 'updatedAt', 'verification', 'verified', 'verifiedAt'];

/** Adds a domain through the Server API; fails the test on anything but 201. */
export async function addDomain(t: TestApp, env: TestEnv, organizationId: string, domain: string, enrollment?: string) {
  const res = await t.server(env).post(`/organizations/${organizationId}/domains`, { domain, ...(enrollment && { enrollment }) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** Publishes the domain's TXT record on the test DNS server and verifies it; fails the test on anything but 200. */
export async function verifiedDomain(t: TestApp, env: TestEnv, dns: TestDnsServer, organizationId: string, domain: string, enrollment?: string) {
  const added = await addDomain(t, env, organizationId, domain, enrollment);
  publish(dns, added);
  const res = await t.server(env).post(`/organizations/${organizationId}/domains/${added.id}/verify`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** Puts the domain's verification record into the test DNS server (beside any value already there). */
export function publish(dns: TestDnsServer, domain: { verification: { name: string; value: string } }) {
  const { name, value } = domain.verification;
  dns.records.set(name, [...(dns.records.get(name) ?? []), value]);
}

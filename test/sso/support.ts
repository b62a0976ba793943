import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import { createOrganization } from '../organizations/support.js';
import { verifiedDomain } from '../organization-domains/support.js';

export { expectProblem } from '../helpers/problem.js';
export { startAppWithDns } from '../organization-domains/support.js';

/** A certificate an IdP could sign with (self-signed, for the configuration tests; the sign-in tests use the IdP process's own). */
export const TEST_IDP_CERTIFICATE = `-----BEGIN CERTIFICATE-----
MIIDFzCCAf+gAwIBAgIUEe2f8cPNaBxkNCuFaqCCJ1bBChUwDQYJKoZIhvcNAQEL
BQAwGzEZMBcGA1UEAwwQaWRwLmV4YW1wbGUudGVzdDAeFw0yNjExMjcxNjEzMTha
Fw0zNjExMjQxNjEzMThaMBsxGTAXBgNVBAMMEGlkcC5leGFtcGxlLnRlc3QwggEi
MA0GCSqGSIb3DQEBAQUAA4IBDwAwggEKAoIBAQC2SUnhR3ZKjIB2hfTFt7jV9cTW
45fj8a7nB9wnvkPFWHijS64m87/+WTthpOlj1s8YxOYclsZZ93X47GaKWOTriKW1
CGNK4xekfbtttnv9uAQZupbz2kmhOOZXX5foe7zY3QNiaASf/2YY0tRduHv4CrF5
8i7hFkGat6GnCR8Lfm7MgtahPhiqgs1H2g7memfai8rhnWvYH9K4J2dNBGEJevSF
j/P7T0aFHd++pm3iSqrF5dCYccpcPZeput3IVfNSEhekCkKxEqkNDWUH5XNvDht7
6j0HKiVJcCLhMHA2ha9+aT30OHVPBqr1E6YTVfGX8Wg1c3vMHXJonnCcaFalAgMB
AAGjUzBRMB0GA1UdDgQWBBRV2i9fI/D3pA+PKcd9uUmRQstBBjAfBgNVHSMEGDAW
gBRV2i9fI/D3pA+PKcd9uUmRQstBBjAPBgNVHRMBAf8EBTADAQH/MA0GCSqGSIb3
DQEBCwUAA4IBAQB4zKsueRo4sfVaCf5Lw7elvOdovo0fxwbINQT2tTrYprcN5LcT
/yu1d1Kg/VUpXXM0yVv90v7bTDq6GiyEFo5C8VhQf0/Px++Y1lTYB7u7LUhpFZMP
Y3h/gzo/MqATxhUdDXUw9ieSVaYVSZY3DduOCwuT+892Xf2nfdRH+Pi6CUk3eztm
31eEEUqts0tavYJqnXy0xdjJEGGGloqZhGv10fa5+tDnfaryb11g2W84C91IpGZS
Ct9xa+Yb8XMK0HGZaUBbQgx3MUER8QLVEBVzxfMpZA2zzyOpnkmXKYaR0s+y35V0
RLzKbBUxPPZm2AK6l4qdeG4sQZe51+n2cl1v
-----END CERTIFICATE-----`;

export const CONNECTION_KEYS = [
  'acsUrl', 'clientId', 'createdAt', 'enabled', 'enforced', 'groupRoles', 'groupsAttribute', 'id', 'idpCertificateCount', 'idpEntityId', 'idpMetadataUrl',
  'idpSsoUrl', 'issuer', 'metadataUrl', 'name', 'organizationId', 'redirectUri', 'scopes', 'spEntityId', 'type', 'updatedAt',
];

const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';

/** An IdP's SAML metadata document, as Okta or Entra ID export it (only what the service reads, and a binding it must skip). */
export function idpMetadataXml({ entityId = 'https://idp.acme.example/saml', ssoUrl = 'https://idp.acme.example/sso', certificate = TEST_IDP_CERTIFICATE, bindings = [POST, REDIRECT], use = 'signing' } = {}) {
  const bare = certificate.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, '');
  return `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="${use}"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${bare}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
${bindings.map((binding) => `    <md:SingleSignOnService Binding="${binding}" Location="${ssoUrl}${binding === POST ? '/post' : ''}"/>`).join('\n')}
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
}

export const connectionsPath = (organizationId: string) => `/organizations/${organizationId}/sso-connections`;

/** Creates a connection through the Server API; fails the test on anything but 201. */
export async function createConnection(t: TestApp, env: TestEnv, organizationId: string, body: Record<string, unknown>) {
  const res = await t.server(env).post(connectionsPath(organizationId), body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** An organization that verified `domain` (through the test DNS server). */
export async function givenOrganizationWithDomain(t: TestApp, env: TestEnv, dns: TestDnsServer, domain: string) {
  const org = await createOrganization(t, env);
  await verifiedDomain(t, env, dns, org.id, domain);
  return org;
}

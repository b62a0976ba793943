import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import { accessibilityProblems, hasChromium } from '../helpers/browser.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { type DashboardStage, exactHeading as heading, signedInPage, startDashboardStage } from './dashboard-stage.js';

/** A SAML IdP's metadata as an IdP admin downloads it: entity id, HTTP-Redirect sign-on URL, a signing certificate (public only, self-signed). */
const IDP_CERTIFICATE = 'MIIDFzCCAf+gAwIBAgIUEe2f8cPNaBxkNCuFaqCCJ1bBChUwDQYJKoZIhvcNAQELBQAwGzEZMBcGA1UEAwwQaWRwLmV4YW1wbGUudGVzdDAeFw0yNjExMjcxNjEzMThaFw0zNjExMjQxNjEzMThaMBsxGTAXBgNVBAMMEGlkcC5leGFtcGxlLnRlc3QwggEiMA0GCSqGSIb3DQEBAQUAA4IBDwAwggEKAoIBAQC2SUnhR3ZKjIB2hfTFt7jV9cTW45fj8a7nB9wnvkPFWHijS64m87/+WTthpOlj1s8YxOYclsZZ93X47GaKWOTriKW1CGNK4xekfbtttnv9uAQZupbz2kmhOOZXX5foe7zY3QNiaASf/2YY0tRduHv4CrF58i7hFkGat6GnCR8Lfm7MgtahPhiqgs1H2g7memfai8rhnWvYH9K4J2dNBGEJevSFj/P7T0aFHd++pm3iSqrF5dCYccpcPZeput3IVfNSEhekCkKxEqkNDWUH5XNvDht76j0HKiVJcCLhMHA2ha9+aT30OHVPBqr1E6YTVfGX8Wg1c3vMHXJonnCcaFalAgMBAAGjUzBRMB0GA1UdDgQWBBRV2i9fI/D3pA+PKcd9uUmRQstBBjAfBgNVHSMEGDAWgBRV2i9fI/D3pA+PKcd9uUmRQstBBjAPBgNVHRMBAf8EBTADAQH/MA0GCSqGSIb3DQEBCwUAA4IBAQB4zKsueRo4sfVaCf5Lw7elvOdovo0fxwbINQT2tTrYprcN5LcT/yu1d1Kg/VUpXXM0yVv90v7bTDq6GiyEFo5C8VhQf0/Px++Y1lTYB7u7LUhpFZMPY3h/gzo/MqATxhUdDXUw9ieSVaYVSZY3DduOCwuT+892Xf2nfdRH+Pi6CUk3eztm31eEEUqts0tavYJqnXy0xdjJEGGGloqZhGv10fa5+tDnfaryb11g2W84C91IpGZSCt9xa+Yb8XMK0HGZaUBbQgx3MUER8QLVEBVzxfMpZA2zzyOpnkmXKYaR0s+y35V0RLzKbBUxPPZm2AK6l4qdeG4sQZe51+n2cl1v';
const idpMetadata = (entityId: string) => `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${IDP_CERTIFICATE}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.test/sso/saml"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;

/** Waits, as long as a busy machine may need, for what the page is on its way to show. */
const eventually = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: PATIENCE_MS, interval: 50 });

describe.skipIf(!hasChromium)("the dashboard's enterprise sign-in section of an organization in a real browser (headless Chromium)", () => {
  let stage: DashboardStage;
  let t: TestApp;
  let env: TestEnv;
  let dns: TestDnsServer;
  const tag = `ent${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    dns = await startDnsServer();
    stage = await startDashboardStage(tag, { dns: { servers: [dns.address], timeoutMs: PATIENCE_MS } });
    ({ t, env } = stage);
  }, 180_000);
  afterAll(async () => { await stage?.close(); await dns?.close(); });

  const createOrganization = async (environment: TestEnv, name: string) => {
    const res = await t.server(environment).post('/organizations', { name });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; name: string };
  };

  /** Signs a new operator in at the dashboard's start and walks Environments → Organizations → the organization → Enterprise sign-in. */
  async function openEnterpriseSection(organizationName: string) {
    const signedIn = await signedInPage(stage, '/', { permissions: ['clipboard-read', 'clipboard-write'] });
    const { page } = signedIn;
    await eventually(() => heading(page, 'Environments').count()).toBe(1);
    await page.getByRole('link', { name: tag, exact: true }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Organizations' }).click();
    await eventually(() => heading(page, 'Organizations').count()).toBe(1);
    await page.getByRole('link', { name: organizationName, exact: true }).click();
    await eventually(() => heading(page, organizationName).count()).toBe(1);
    await page.getByRole('navigation', { name: 'On this page' }).getByRole('link', { name: 'Enterprise sign-in' }).click();
    const section = page.getByRole('region', { name: 'Enterprise sign-in' });
    await eventually(() => section.isVisible()).toBe(true);
    return { ...signedIn, section };
  }

  it('adds a domain and shows its TXT record to copy, refuses to verify it until the record is published, then verifies it and changes its enrollment', async () => {
    const org = await createOrganization(env, 'Acme');
    const { context, page, section, foreign, refused } = await openEnterpriseSection('Acme');
    const domains = section.getByRole('region', { name: 'Verified domains' });
    await eventually(() => domains.getByText('This organization has no domains yet.').count()).toBe(1);

    const domain = `acme-${tag}.example`;
    await domains.getByLabel('Domain', { exact: true }).fill(`https://${domain.toUpperCase()}/about`);
    await domains.getByLabel('Enrollment', { exact: true }).selectOption('suggest');
    await domains.getByRole('button', { name: 'Add domain' }).click();
    const item = domains.getByRole('article', { name: domain });
    await eventually(() => item.count()).toBe(1);
    const [stored] = (await t.server(env).get(`/organizations/${org.id}/domains`)).json().items;
    expect(stored).toMatchObject({ domain, enrollment: 'suggest', verified: false, verification: { type: 'dns_txt', name: `_gatehouse-verification.${domain}` } });
    expect(await item.getByLabel(`TXT record name for ${domain}`, { exact: true }).inputValue()).toBe(stored.verification.name);
    const valueField = item.getByLabel(`TXT record value for ${stored.verification.name}`, { exact: true });
    expect(await valueField.inputValue()).toBe(stored.verification.value);
    expect(await item.textContent()).toContain('Not verified');
    expect(await accessibilityProblems(page)).toEqual([]);

    await item.getByRole('button', { name: `Copy TXT record value for ${stored.verification.name}` }).click();
    await eventually(() => page.evaluate(() => navigator.clipboard.readText())).toBe(stored.verification.value);

    // No record published yet: the server's refusal is shown, and the domain stays unverified.
    await item.getByRole('button', { name: `Verify ${domain}` }).click();
    await eventually(() => item.getByRole('alert').textContent()).toContain('domain_not_verified');
    expect((await t.server(env).get(`/organizations/${org.id}/domains/${stored.id}`)).json().verified).toBe(false);

    dns.records.set(stored.verification.name, [stored.verification.value]);
    await item.getByRole('button', { name: `Verify ${domain}` }).click();
    await eventually(() => item.getByRole('status').filter({ hasText: `${domain} is verified.` }).count()).toBe(1);
    // The list refreshes after the status is shown; until then the button reads "Checking DNS…".
    await eventually(() => item.getByText('Verified', { exact: true }).count()).toBe(1);
    expect(await item.getByRole('button', { name: `Verify ${domain}` }).count()).toBe(0);
    expect((await t.server(env).get(`/organizations/${org.id}/domains/${stored.id}`)).json()).toMatchObject({ verified: true, enrollment: 'suggest' });

    await item.getByLabel('Enrollment', { exact: true }).selectOption('automatic');
    await item.getByRole('button', { name: 'Save enrollment' }).click();
    await eventually(() => item.getByRole('status').filter({ hasText: `Enrollment of ${domain} saved.` }).count()).toBe(1);
    expect((await t.server(env).get(`/organizations/${org.id}/domains/${stored.id}`)).json().enrollment).toBe('automatic');
    expect(await accessibilityProblems(page)).toEqual([]);

    // Removing: Cancel keeps it; confirming removes it.
    await item.getByRole('button', { name: `Remove ${domain}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove this domain?' });
    await eventually(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await eventually(() => dialog.isVisible()).toBe(false);
    expect((await t.server(env).get(`/organizations/${org.id}/domains`)).json().items).toHaveLength(1);
    await item.getByRole('button', { name: `Remove ${domain}` }).click();
    await dialog.getByRole('button', { name: 'Remove domain' }).click();
    await eventually(() => domains.getByText('This organization has no domains yet.').count()).toBe(1);
    expect(await domains.getByRole('status').filter({ hasText: `${domain} was removed from the organization.` }).count()).toBe(1);
    expect((await t.server(env).get(`/organizations/${org.id}/domains`)).json().items).toEqual([]);

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it("refuses a public mailbox domain with the server's problem and adds nothing", async () => {
    const org = await createOrganization(env, 'Mailbox');
    const { context, section } = await openEnterpriseSection('Mailbox');
    const domains = section.getByRole('region', { name: 'Verified domains' });
    await domains.getByLabel('Domain', { exact: true }).fill('gmail.com');
    await domains.getByRole('button', { name: 'Add domain' }).click();
    await eventually(() => domains.getByRole('alert').textContent()).toContain('free_email_domain');
    expect((await t.server(env).get(`/organizations/${org.id}/domains`)).json().items).toEqual([]);
    await context.close();
  });

  it('creates a SCIM directory whose token is shown once and works at its SCIM base URL, rotates the token, and deletes the directory', async () => {
    const org = await createOrganization(env, 'Globex');
    const { context, page, section, foreign, refused } = await openEnterpriseSection('Globex');
    const directories = section.getByRole('region', { name: 'SCIM directories' });
    await eventually(() => directories.getByText('This organization has no SCIM directories.').count()).toBe(1);

    await directories.getByLabel('Directory name').fill('Okta');
    await directories.getByRole('button', { name: 'Create directory' }).click();
    const once = directories.getByRole('region', { name: 'SCIM bearer token of Okta' });
    await eventually(() => once.count()).toBe(1);
    const token = await once.getByLabel('SCIM bearer token of Okta').inputValue();
    expect(token).toMatch(/^scim_[A-Za-z0-9_-]{43}$/);
    expect(await once.textContent()).toContain('shown only this once');
    const [stored] = (await t.server(env).get(`/organizations/${org.id}/directories`)).json().items;
    expect(stored).toMatchObject({ name: 'Okta', organizationId: org.id });
    const baseUrl = `${stage.base}/scim/v2/${stored.id}`;
    expect(await directories.getByLabel('SCIM base URL of Okta', { exact: true }).first().inputValue()).toBe(baseUrl);
    const item = directories.getByRole('article', { name: 'Okta' });
    await eventually(() => item.count()).toBe(1);
    expect(await item.getByLabel('SCIM base URL of Okta', { exact: true }).inputValue()).toBe(baseUrl);
    expect(await accessibilityProblems(page)).toEqual([]);

    // The base URL and the token shown are what an identity provider needs.
    const scim = (bearer: string) => fetch(`${baseUrl}/Users`, { headers: { authorization: `Bearer ${bearer}` } });
    expect((await scim(token)).status).toBe(200);

    await once.getByRole('button', { name: 'Copy' }).click();
    await eventually(() => once.getByRole('status').textContent()).toBe('Copied to the clipboard.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    await once.getByRole('button', { name: 'I have copied it' }).click();
    await eventually(() => once.count()).toBe(0);
    expect(await page.content()).not.toContain(token);
    await page.reload();
    await eventually(() => item.count()).toBe(1);
    expect(await page.content()).not.toContain(token);

    // Rotating asks first, shows the new token once, and the old one stops working.
    await item.getByRole('button', { name: 'Rotate token of Okta' }).click();
    const rotate = page.getByRole('dialog', { name: "Rotate this directory's token?" });
    await eventually(() => rotate.isVisible()).toBe(true);
    await rotate.getByRole('button', { name: 'Rotate token' }).click();
    await eventually(() => once.count()).toBe(1);
    const rotated = await once.getByLabel('SCIM bearer token of Okta').inputValue();
    expect(rotated).not.toBe(token);
    expect((await scim(token)).status).toBe(401);
    expect((await scim(rotated)).status).toBe(200);
    expect(await accessibilityProblems(page)).toEqual([]);

    await item.getByRole('button', { name: 'Delete Okta' }).click();
    const remove = page.getByRole('dialog', { name: 'Delete this SCIM directory?' });
    await eventually(() => remove.isVisible()).toBe(true);
    await remove.getByRole('button', { name: 'Delete directory' }).click();
    await eventually(() => directories.getByText('This organization has no SCIM directories.').count()).toBe(1);
    expect(await directories.getByRole('status').filter({ hasText: 'The directory Okta was deleted' }).count()).toBe(1);
    expect(await once.count()).toBe(0);
    expect((await t.server(env).get(`/organizations/${org.id}/directories`)).json().items).toEqual([]);
    expect((await scim(rotated)).status).toBe(401);

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('creates a SAML connection from pasted IdP metadata and shows the ACS URL and SP entity ID to copy, enforces and disables it, and deletes it', async () => {
    const org = await createOrganization(env, 'Initech');
    const { context, page, section, foreign, refused } = await openEnterpriseSection('Initech');
    const sso = section.getByRole('region', { name: 'SSO connections' });
    await eventually(() => sso.getByText('This organization has no SSO connections.').count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);

    // Metadata that is not an IdP's: the server's refusal names the field, and nothing is created.
    await sso.getByLabel('Connection name').fill('Okta');
    await sso.getByLabel('IdP metadata XML').fill('<not-metadata/>');
    await sso.getByRole('button', { name: 'Create connection' }).click();
    await eventually(() => sso.getByRole('alert').textContent()).toContain('/body/idpMetadataXml');
    expect((await t.server(env).get(`/organizations/${org.id}/sso-connections`)).json().items).toEqual([]);

    const entityId = `https://idp.example.test/${tag}`;
    await sso.getByLabel('IdP metadata XML').fill(idpMetadata(entityId));
    await sso.getByRole('button', { name: 'Create connection' }).click();
    const item = sso.getByRole('article', { name: /^Okta/ });
    await eventually(() => item.count()).toBe(1);
    const [stored] = (await t.server(env).get(`/organizations/${org.id}/sso-connections`)).json().items;
    expect(stored).toMatchObject({ type: 'saml', name: 'Okta', enabled: true, enforced: false, idpEntityId: entityId, idpSsoUrl: 'https://idp.example.test/sso/saml', idpCertificateCount: 1 });
    expect(stored.acsUrl).toBe(`http://${env.frontendHost}/_svc/auth/sso/${stored.id}/acs`);
    expect(await item.getByLabel('ACS URL of Okta', { exact: true }).inputValue()).toBe(stored.acsUrl);
    expect(await item.getByLabel('SP entity ID of Okta', { exact: true }).inputValue()).toBe(stored.spEntityId);
    expect(await item.getByLabel('SP metadata URL of Okta', { exact: true }).inputValue()).toBe(stored.metadataUrl);
    expect(await item.textContent()).toContain(entityId);
    expect(await sso.getByRole('status').filter({ hasText: 'Okta was created.' }).count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);

    await item.getByRole('button', { name: 'Copy ACS URL of Okta' }).click();
    await eventually(() => page.evaluate(() => navigator.clipboard.readText())).toBe(stored.acsUrl);

    await item.getByRole('button', { name: 'Enforce Okta' }).click();
    await eventually(() => item.getByRole('button', { name: 'Stop enforcing Okta' }).count()).toBe(1);
    expect((await t.server(env).get(`/organizations/${org.id}/sso-connections/${stored.id}`)).json()).toMatchObject({ enabled: true, enforced: true });
    await item.getByRole('button', { name: 'Disable Okta' }).click();
    await eventually(() => item.getByRole('button', { name: 'Enable Okta' }).count()).toBe(1);
    expect((await t.server(env).get(`/organizations/${org.id}/sso-connections/${stored.id}`)).json()).toMatchObject({ enabled: false, enforced: true });
    expect(await item.textContent()).toContain('Disabled');

    await item.getByRole('button', { name: 'Delete Okta' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this SSO connection?' });
    await eventually(() => dialog.isVisible()).toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Delete connection' }).click();
    await eventually(() => sso.getByText('This organization has no SSO connections.').count()).toBe(1);
    expect((await t.server(env).get(`/organizations/${org.id}/sso-connections`)).json().items).toEqual([]);

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('maps identity-provider groups to roles for an SSO connection and a SCIM directory, and removes a mapping', async () => {
    const org = await createOrganization(env, 'Vandelay');
    const created = await t.server(env).post(`/organizations/${org.id}/sso-connections`, { type: 'saml', name: 'Okta', idpMetadataXml: idpMetadata(`https://idp.vandelay-${tag}.test`) });
    expect(created.statusCode, created.body).toBe(201);
    const connection = created.json() as { id: string };
    const directory = (await t.server(env).post(`/organizations/${org.id}/directories`, { name: 'Entra' })).json() as { id: string };
    const storedConnection = async () => (await t.server(env).get(`/organizations/${org.id}/sso-connections/${connection.id}`)).json().groupRoles;
    const storedDirectory = async () => (await t.server(env).get(`/organizations/${org.id}/directories/${directory.id}`)).json().groupRoles;
    const { context, page, section } = await openEnterpriseSection('Vandelay');

    const okta = section.getByRole('region', { name: 'SSO connections' }).getByRole('article', { name: /^Okta/ });
    await eventually(() => okta.getByText('No group gives a role: new members get the default role.').count()).toBe(1);
    const mapIn = async (item: typeof okta, owner: string, group: string, role: string) => {
      await item.getByLabel(`IdP group for ${owner}`, { exact: true }).fill(group);
      await item.getByLabel(`Role it gives in ${owner}`, { exact: true }).selectOption(role);
      await item.getByRole('button', { name: `Map group in ${owner}` }).click();
    };
    await mapIn(okta, 'Okta', 'Engineering', 'admin');
    await eventually(() => okta.getByRole('status').textContent()).toBe('Members of Engineering get the role Admin in Okta.');
    expect(await storedConnection()).toEqual({ Engineering: 'admin' });
    await mapIn(okta, 'Okta', 'Sales', 'member');
    await eventually(() => okta.getByRole('status').textContent()).toBe('Members of Sales get the role Member in Okta.');
    expect(await storedConnection()).toEqual({ Engineering: 'admin', Sales: 'member' });
    expect(await okta.getByRole('list', { name: 'Group roles of Okta' }).getByRole('listitem').allTextContents())
      .toEqual(['Engineering → Admin Remove Engineering from Okta', 'Sales → Member Remove Sales from Okta']);

    await okta.getByRole('button', { name: 'Remove Engineering from Okta' }).click();
    await eventually(() => okta.getByRole('status').textContent()).toBe('Engineering no longer gives a role in Okta.');
    expect(await storedConnection()).toEqual({ Sales: 'member' });

    const entra = section.getByRole('region', { name: 'SCIM directories' }).getByRole('article', { name: 'Entra' });
    await mapIn(entra, 'Entra', 'Staff', 'member');
    await eventually(() => entra.getByRole('status').textContent()).toBe('Members of Staff get the role Member in Entra.');
    expect(await storedDirectory()).toEqual({ Staff: 'member' });
    expect(await storedConnection()).toEqual({ Sales: 'member' });
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });

  it('creates an OpenID Connect connection and shows the redirect URI to register, never the client secret', async () => {
    const org = await createOrganization(env, 'Hooli');
    const { context, page, section } = await openEnterpriseSection('Hooli');
    const sso = section.getByRole('region', { name: 'SSO connections' });
    await sso.getByLabel('Protocol').selectOption('oidc');
    await sso.getByLabel('Connection name').fill('Entra ID');
    await sso.getByLabel('Issuer').fill('https://login.example.test/tenant/v2.0');
    await sso.getByLabel('Client ID').fill(`client-${tag}`);
    const secret = `secret-${randomBytes(12).toString('hex')}`;
    await sso.getByLabel('Client secret').fill(secret);
    await sso.getByLabel('Scopes (optional)').fill('openid email');
    await sso.getByRole('button', { name: 'Create connection' }).click();
    const item = sso.getByRole('article', { name: /^Entra ID/ });
    await eventually(() => item.count()).toBe(1);
    const [stored] = (await t.server(env).get(`/organizations/${org.id}/sso-connections`)).json().items;
    expect(stored).toMatchObject({ type: 'oidc', issuer: 'https://login.example.test/tenant/v2.0', clientId: `client-${tag}`, scopes: ['openid', 'email'], acsUrl: null });
    expect(await item.getByLabel('Redirect URI of Entra ID', { exact: true }).inputValue()).toBe(stored.redirectUri);
    expect(await page.content()).not.toContain(secret);
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });
});

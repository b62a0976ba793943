import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import { accessibilityProblems, hasChromium } from '../helpers/browser.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { type DashboardStage, exactHeading as heading, signedInPage, startDashboardStage } from './dashboard-stage.js';

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
    await eventually(() => item.getByRole('button', { name: `Verify ${domain}` }).count()).toBe(0);
    expect(await item.textContent()).toContain('Verified');
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
});

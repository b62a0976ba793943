import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import { browserStage, hasChromium, launchChromium } from '../helpers/browser.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { startSamlIdp, type SamlIdp } from '../helpers/saml-idp.js';
import { storedRoles } from '../organizations/support.js';
import { createConnection, givenOrganizationWithDomain, startAppWithDns } from '../sso/support.js';

describe.skipIf(!hasChromium)('SAML sign-in in a real browser (headless Chromium, IdP on another site)', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let idp: SamlIdp;
  let browser: Browser;
  let env: TestEnv;
  let frontend: string;
  let landing: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ t, dns } = await startAppWithDns());
    const stage = await browserStage(t, 'saml', '<!doctype html><title>the app</title><h1>the app</h1>');
    ({ env, frontend, close } = stage);
    landing = `${stage.appOrigin}/home?from=sso`;
    idp = await startSamlIdp();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await idp?.stop();
    await close?.();
    await dns?.close();
    await t?.close();
  });

  it('goes from the app to the IdP and back through the ACS form post, and lands signed in as a member', async () => {
    const org = await givenOrganizationWithDomain(t, env, dns, 'browser-saml.example');
    await createConnection(t, env, org.id, { type: 'saml', name: 'Corp', idpMetadataXml: idp.metadataXml, groupRoles: { Admins: 'admin' } });
    await idp.nextUser({ nameId: 'erin@browser-saml.example', email: 'erin@browser-saml.example', firstName: 'Erin', groups: ['Admins'] });
    const context = await browser.newContext();
    const page = await context.newPage();

    await page.goto(`${frontend}/_svc/auth/sso/authorize?email=${encodeURIComponent('erin@browser-saml.example')}&redirect_url=${encodeURIComponent(landing)}`);
    await page.waitForURL(landing, { timeout: PATIENCE_MS });

    expect(await page.locator('h1').textContent()).toBe('the app');
    const cookie = (await context.cookies(frontend)).find((c) => c.name === '__session');
    expect(cookie, 'no __session cookie on the frontend host').toBeDefined();
    const me = (await t.client(env, { cookie: cookie!.value }).get('/me')).json();
    expect(me).toMatchObject({ email: 'erin@browser-saml.example', firstName: 'Erin' });
    expect(await storedRoles(t, env, org.id)).toEqual({ [me.id]: 'admin' });
    expect((await context.cookies(frontend)).find((c) => c.name === '__sso_browser')).toBeUndefined();
    await context.close();
  });

  it("offers the organization's IdP on the hosted sign-in page for an email of an enforced domain, and signs in through it", async () => {
    const org = await givenOrganizationWithDomain(t, env, dns, 'browser-saml-enforced.example');
    await createConnection(t, env, org.id, { type: 'saml', idpMetadataXml: idp.metadataXml, enforced: true });
    await idp.nextUser({ nameId: 'frank@browser-saml-enforced.example', email: 'frank@browser-saml-enforced.example' });
    const context = await browser.newContext();
    const page = await context.newPage();

    await page.goto(`${frontend}/sign-in?redirect_url=${encodeURIComponent(landing)}`);
    await page.getByLabel('Email', { exact: true }).fill('frank@browser-saml-enforced.example');
    await page.getByLabel('Password', { exact: true }).fill('not asked for');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('link', { name: 'Continue with your organization’s sign-in' }).click();
    await page.waitForURL(landing, { timeout: PATIENCE_MS });

    const cookie = (await context.cookies(frontend)).find((c) => c.name === '__session');
    expect((await t.client(env, { cookie: cookie!.value }).get('/me')).json().email).toBe('frank@browser-saml-enforced.example');
    await context.close();
  });

  it('sends a browser that did not start the sign-in back with state_mismatch', async () => {
    const org = await givenOrganizationWithDomain(t, env, dns, 'browser-saml-csrf.example');
    await createConnection(t, env, org.id, { type: 'saml', idpMetadataXml: idp.metadataXml });
    await idp.nextUser({ nameId: 'mallory@browser-saml-csrf.example', email: 'mallory@browser-saml-csrf.example' });
    // The attacker starts a sign-in in their own browser and hands the IdP's page to the victim's.
    const started = await t.client(env).get(`/auth/sso/authorize?email=mallory%40browser-saml-csrf.example&redirect_url=${encodeURIComponent(landing)}`);
    const victim = await browser.newContext();
    const page = await victim.newPage();

    await page.goto(started.headers.location as string);
    await page.waitForURL((url) => url.href.startsWith(landing.split('?')[0]!) && url.searchParams.has('error'), { timeout: PATIENCE_MS });

    expect(new URL(page.url()).searchParams.get('error')).toBe('state_mismatch');
    expect((await victim.cookies(frontend)).find((c) => c.name === '__session')).toBeUndefined();
    await victim.close();
  });
});

import type { AddressInfo } from 'node:net';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CSP } from '../../src/platform/http/security-headers.js';
import { PACKAGE_VERSION } from '../../src/platform/version.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { hasChromium, launchChromium } from '../helpers/browser.js';


describe.skipIf(!hasChromium)('the API reference page in a real browser (headless Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://localhost:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('renders the operations under its Content-Security-Policy without a single violation or script error', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // Record violations from the first byte: the browser reports each one as an event on the document.
    await page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = seen;
      document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });

    const res = await page.goto(`${origin}/docs/`);
    expect(res?.status()).toBe(200);
    expect(await res?.headerValue('content-security-policy')).toBe(DOCS_CSP);
    await page.waitForSelector('.opblock-summary-path');
    // Branded, with the package's version in the title and in the rendered document info.
    expect(await page.title()).toBe(`Gatehouse ${PACKAGE_VERSION}: API reference`);
    expect(await page.textContent('.info .title')).toContain(PACKAGE_VERSION);

    const paths = await page.$$eval('.opblock-summary-path', (nodes) => nodes.map((n) => n.getAttribute('data-path')));
    expect(paths).toContain('/api/server/v1/users/{userId}');
    expect(paths).toContain('/_svc/auth/sign-in');
    await page.click('.opblock-summary-path[data-path="/_svc/auth/sign-in"]');
    await page.waitForSelector('.opblock.is-open .opblock-section');

    expect(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});

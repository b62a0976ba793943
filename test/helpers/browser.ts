import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestApp, TestEnv } from './app.js';
import { PATIENCE_MS } from './patience.js';

/** Debian's Chromium (never a downloaded browser); browser suites skip where it is not installed. */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

// Flags for a closed network: no background traffic, no first-run work; *.localhost resolves to this machine.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP *.localhost 127.0.0.1'];

/**
 * Headless Chromium whose every context (and so every page, `newPage` included) waits PATIENCE_MS for an
 * action's element or a navigation: Playwright's own default, 30 s, is a fixed limit a busy machine trips
 * (a click waiting for a list, a waitForURL for a redirect chain, on 2 cores shared with the rest of the suite).
 */
export async function launchChromium(): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(PATIENCE_MS);
    return context;
  };
  return browser;
}

/**
 * What a browser test stands on: the test app listening on a port, an environment whose frontend host is
 * `<name>.localhost:<port>`, and the customer's app on another origin (allowed), serving `page` at every path.
 * Redirects are not interceptable in Playwright, so a page a redirect lands on must come from a real server.
 */
export async function browserStage(t: TestApp, name: string, page: string) {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as AddressInfo).port;
  const frontend = `http://${name}.localhost:${port}`;
  const created = await t.admin.post('/environments', { name, frontendHost: `${name}.localhost:${port}` });
  const env: TestEnv = { ...created.json(), name };
  const customerApp = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page));
  await new Promise<void>((resolve) => customerApp.listen(0, '127.0.0.1', resolve));
  const appOrigin = `http://app.localhost:${(customerApp.address() as AddressInfo).port}`;
  await t.server(env).put('/allowed-origins', { origins: [appOrigin] });
  return { env, frontend, appOrigin, close: () => new Promise<void>((resolve) => { customerApp.close(() => resolve()); }) };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * The serious and critical WCAG 2.x A/AA violations axe-core finds on the page. axe is evaluated over the
 * DevTools protocol, as the page's CSP (rightly) runs no script it did not serve.
 */
export async function accessibilityProblems(page: Page) {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string; nodes: { html: string }[] }[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.html) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

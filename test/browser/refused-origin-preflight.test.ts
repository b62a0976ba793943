import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { browserStage, hasChromium, launchChromium } from '../helpers/browser.js';

const PAGE = '<!doctype html><title>app</title>';

describe.skipIf(!hasChromium)('a page on an origin the environment does not allow (headless Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let stage: Awaited<ReturnType<typeof browserStage>>;

  beforeAll(async () => {
    t = await startTestApp();
    stage = await browserStage(t, 'cors', PAGE);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await stage?.close();
    await t?.close();
  });

  /** Opens the app's page on `origin`, signs in from it with fetch (a preflighted POST); what fetch gave and what the console showed. */
  async function signInFrom(origin: string) {
    const page: Page = await (await browser.newContext()).newPage();
    const console: string[] = [];
    page.on('console', (message) => console.push(message.text()));
    await page.goto(`${origin}/`);
    const outcome = await page.evaluate(async (frontend) => {
      try {
        const res = await fetch(`${frontend}/_svc/auth/sign-in`, {
          method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'nobody@example.com', password: 'a wrong password' }),
        });
        return `status ${res.status}`;
      } catch (err) {
        return String(err);
      }
    }, stage.frontend);
    await page.close();
    return { outcome, console };
  }

  it("shows the refusal, the origin and how to allow it in the page's console", async () => {
    const refused = stage.appOrigin.replace('//app.localhost', '//other.localhost');
    const { outcome, console } = await signInFrom(refused);
    expect(outcome).toBe('TypeError: Failed to fetch');
    const message = console.find((line) => line.includes('origin_not_allowed'));
    expect(message, console.join('\n')).toContain(`Gatehouse does not allow ${refused} for environment ${stage.env.id}`);
    expect(message).toContain(`npx gatehouse allowed-origins add ${stage.env.id} ${refused}`);
    expect(message).toContain('PUT /api/server/v1/allowed-origins');
  });

  it('lets the allowed origin through the preflight to the real answer', async () => {
    const { outcome, console } = await signInFrom(stage.appOrigin);
    expect(outcome).toBe('status 401');
    expect(console.join('\n')).not.toContain('origin_not_allowed');
  });
});

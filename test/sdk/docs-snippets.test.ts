import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { createSessionVerifier, expressSession, type VerifiedSession } from '@gatehouse/sdk';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from '../helpers/browser.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { freePort } from '../helpers/processes.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { postEnvironmentOnOwnHost } from '../helpers/own-frontend-host.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url);
// Inside the repository, so the snippets' imports (@gatehouse/sdk, express) resolve as an adopter's would; the
// `source` condition takes the SDK's sources, as the tests do (test/sdk/package-install.test.ts runs its build).
const SNIPPETS_DIR = new URL('node_modules/.cache/gatehouse-doc-snippets/', ROOT);

/** The `<!-- snippet: name -->` TypeScript blocks of docs/sdk.md, in order. */
async function snippets(): Promise<[string, string][]> {
  const doc = await readFile(new URL('docs/sdk.md', ROOT), 'utf8');
  return [...doc.matchAll(/<!-- snippet: ([\w-]+) -->\n```ts\n([\s\S]*?)```/g)].map((m) => [m[1], m[2]]);
}

describe('docs/sdk.md', () => {
  let t: TestApp;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const created = (await postEnvironmentOnOwnHost(t, { name: 'docs', frontendHost: `localhost:${port}` })).json();
    env = { GATEHOUSE_URL: `http://127.0.0.1:${port}`, GATEHOUSE_SECRET_KEY: created.secretKey, GATEHOUSE_FRONTEND_URL: `http://localhost:${port}`, PORT: String(await freePort()) };
    await mkdir(SNIPPETS_DIR, { recursive: true });
  });
  afterAll(() => t?.close());

  it('has the five-minute path and the client sections as runnable snippets', async () => {
    expect((await snippets()).map(([name]) => name)).toEqual(['create-user', 'sign-in', 'express', 'online', 'errors-and-pages', 'active-organization']);
  });

  it('runs every snippet, in order, against a real Gatehouse', async () => {
    const outputs: Record<string, string> = {};
    for (const [name, code] of await snippets()) {
      const file = new URL(`${name}.mts`, SNIPPETS_DIR);
      await writeFile(file, code);
      const { stdout } = await run(process.execPath, ['--conditions=source', '--import', 'tsx', file.pathname], { cwd: ROOT, env: { ...process.env, ...env }, timeout: PATIENCE_MS });
      outputs[name] = stdout.trim();
    }
    expect(outputs['create-user']).toMatch(/^[0-9a-f-]{36} ada@example\.com$/);
    expect(outputs['sign-in']).toBe('ada@example.com 3');
    expect(outputs.express).toBe('listening');
    expect(outputs.online).toBe('null');
    expect(outputs['errors-and-pages']).toBe('already there: 409\nusers with an email: 1');
    expect(outputs['active-organization']).toBe('true acme owner');
  });

  // After the snippets above: ada@example.com exists.
  it.skipIf(!hasChromium)('signs in from a browser with its snippet and verifies the session in the Express app of step 4 (headless Chromium)', async () => {
    const doc = await readFile(new URL('docs/sdk.md', ROOT), 'utf8');
    const snippet = /<!-- browser-snippet: sign-in-browser -->\n```js\n([\s\S]*?)```/.exec(doc)![1]!
      .replace("const frontendUrl = 'http://localhost:3000';", `const frontendUrl = '${env.GATEHOUSE_FRONTEND_URL}';`);
    // The session JWT (60 s) is checked against real time by the Express app: mint it on a test clock that shows
    // now, not the time of beforeAll (the snippets above take a while on a busy machine).
    t.clock.set(new Date());
    // The customer's app: the page and its backend, verifying Gatehouse sessions as step 4 shows.
    const api = express();
    api.get('/', (_req, res) => { res.type('html').send('<!doctype html><title>app</title>'); });
    api.get('/api/me', expressSession(createSessionVerifier({ frontendUrl: env.GATEHOUSE_FRONTEND_URL! })), (req, res) => {
      res.json(req.gatehouse);
    });
    const server = api.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const appOrigin = `http://localhost:${(server.address() as AddressInfo).port}`;
    const browser = await launchChromium();
    try {
      await fetch(`${env.GATEHOUSE_URL}/api/server/v1/allowed-origins`, {
        method: 'PUT', headers: { authorization: `Bearer ${env.GATEHOUSE_SECRET_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ origins: [appOrigin] }),
      });
      const page = await browser.newPage();
      await page.goto(`${appOrigin}/`);
      const me = await page.evaluate(`(async () => { ${snippet}; return me; })()`) as VerifiedSession;
      expect(me).toMatchObject({ userId: expect.any(String), sessionId: expect.any(String), actorId: null });
    } finally {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

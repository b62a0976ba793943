import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkSources } from '../../scripts/sdk-sources.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

describe("the SDK's generated files", () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t?.close());

  it('match what the server documents now (run `npm run openapi` after changing a route)', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const [file, expected] of Object.entries(await sdkSources(doc))) {
      const checkedIn = await readFile(new URL(`../../packages/sdk/${file}`, import.meta.url), 'utf8');
      expect(checkedIn === expected, `packages/sdk/${file} is stale: run npm run openapi`).toBe(true);
    }
  });
});

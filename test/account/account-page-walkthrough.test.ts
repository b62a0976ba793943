import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { postEnvironmentOnOwnHost } from '../helpers/own-frontend-host.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url);
// Inside the repository, so the walk-through's import of @gatehouse/sdk resolves as an adopter's would (to the
// SDK's sources, by the `source` condition, as in the tests).
const SNIPPETS_DIR = new URL('node_modules/.cache/gatehouse-doc-snippets/', ROOT);

describe('docs/api.md: "Build an account page"', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t?.close());

  it('runs as written against a real Gatehouse: profile, a second address made primary, password, export, deletion', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const created = (await postEnvironmentOnOwnHost(t, { name: 'account-page', frontendHost: `localhost:${port}` })).json();
    const doc = await readFile(new URL('docs/api.md', ROOT), 'utf8');
    const code = /<!-- account-page -->\n```ts\n([\s\S]*?)```/.exec(doc)![1]!;
    await mkdir(SNIPPETS_DIR, { recursive: true });
    const file = new URL('account-page.mts', SNIPPETS_DIR);
    await writeFile(file, code);

    const { stdout } = await run(process.execPath, ['--conditions=source', '--import', 'tsx', file.pathname], {
      cwd: ROOT, timeout: PATIENCE_MS,
      env: {
        ...process.env, GATEHOUSE_URL: `http://127.0.0.1:${port}`, GATEHOUSE_FRONTEND_URL: `http://localhost:${port}`, GATEHOUSE_SECRET_KEY: created.secretKey,
        GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN, GATEHOUSE_ENVIRONMENT_ID: created.id,
      },
    });

    expect(stdout.trim().split('\n')).toEqual([
      'grace@example.com: 1 address, 1 session, self-deletion on',
      'primary: grace@work.example.com',
      'active sessions: 1',
      'export: grace@work.example.com, 2 addresses',
      'deleted',
    ]);
    const [user] = await t.db.selectFrom('users').select(['status', 'first_name', 'email']).where('environment_id', '=', created.id).execute();
    expect(user).toEqual({ status: 'deleted', first_name: 'Grace', email: 'grace@work.example.com' });
  });
});

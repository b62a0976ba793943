import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_OPERATOR_COMMAND, firstOperatorStep, operatorAccountsOver } from '../../src/operators/first-start.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { spawnServer, type ServerProcess } from '../helpers/processes.js';
import { givenOperator } from './support.js';

describe('the first operator step (firstOperatorStep)', () => {
  let t: TestApp;
  // Its own database on PostgreSQL: other files' operators would exist on the shared one.
  beforeAll(async () => { t = await startTestApp({}, { ownDatabase: true }); });
  afterAll(() => t.close());

  it('says the exact command while no operator exists, without making the operators\' environment; nothing once one exists', async () => {
    const accounts = operatorAccountsOver(t.db, 3000);
    const step = await firstOperatorStep(accounts, 'http://localhost:3000');
    expect(step).toBe([
      'No operator can sign in to the dashboard yet. Create the first one; it prints a one-time link to set the password:',
      '  npx gatehouse operators create --email you@example.com',
      '  (or add --password; then sign in at http://localhost:3000/dashboard)',
      '',
    ].join('\n'));
    expect(await t.db.selectFrom('environments').select('id').where('reserved', 'is not', null).execute()).toEqual([]);
    await givenOperator(t);
    expect(await firstOperatorStep(accounts, 'http://localhost:3000')).toBeUndefined();
  });
});

describe('npm start on a fresh data directory', () => {
  let server: ServerProcess | undefined;
  let dataDir: string;
  beforeAll(async () => { dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-first-operator-')); });
  afterEach(async () => { await server?.stop(); server = undefined; });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('prints the command that creates the first operator, which works as pasted; the next start, with an operator, does not', async () => {
    server = await spawnServer({ env: { GATEHOUSE_DATA_DIR: dataDir } });
    await server.waitForStderr('Gatehouse listening');
    const banner = server.stderr();
    expect(banner.split(FIRST_OPERATOR_COMMAND)).toHaveLength(2);
    // As pasted, with the repository's own bin for npx; the CLI acts through the running server.
    const { stdout } = await promisify(execFile)('bash', ['-c', FIRST_OPERATOR_COMMAND.replace('npx gatehouse', 'node bin/gatehouse.js')], {
      env: { ...process.env, GATEHOUSE_DATA_DIR: dataDir, DATABASE_URL: '' },
    });
    expect(stdout).toMatch(new RegExp(`^setPasswordUrl: http://127\\.0\\.0\\.1:${server.port}/dashboard/set-password\\?token=opw_`, 'm'));
    await server.stop();

    server = await spawnServer({ env: { GATEHOUSE_DATA_DIR: dataDir } });
    await server.waitForStderr('Gatehouse listening');
    expect(server.stderr()).not.toContain('operators create');
  });
});

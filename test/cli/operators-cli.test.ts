import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
/** A busy machine can take over a second to open the database, and then the CLI says so first ("Opening ..."). */
const withoutProgress = (stderr: string) => stderr.split('\n').filter((line) => !line.endsWith('...')).join('\n');

describe('npx gatehouse operators', () => {
  let dataDir: string;
  beforeAll(async () => { dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-operators-cli-')); });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  const gatehouse = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run('node', ['bin/gatehouse.js', ...args], { env: { ...process.env, GATEHOUSE_DATA_DIR: dataDir, DATABASE_URL: '', PORT: '4321' } });
      return { code: 0, stdout, stderr: withoutProgress(stderr) };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: withoutProgress(e.stderr) };
    }
  };

  it('creates an operator with --password, refuses the same email again and a weak password, and lists them', async () => {
    const created = await gatehouse('--json', 'operators', 'create', '--email', 'ada@example.com', '--password', 'a long operator passphrase');
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({
      operator: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), email: 'ada@example.com', status: 'active', createdAt: expect.any(String) }, setPasswordUrl: null,
    });

    const again = await gatehouse('operators', 'create', '--email', 'Ada@Example.com', '--password', 'another long passphrase');
    expect(again).toMatchObject({ code: 1, stderr: 'An operator with this email already exists.\n' });
    const weak = await gatehouse('operators', 'create', '--email', 'weak@example.com', '--password', 'short');
    expect(weak).toMatchObject({ code: 1, stderr: 'The password must be at least 8 characters.\n' });

    const listed = await gatehouse('--json', 'operators', 'list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).items.map((o: { email: string }) => o.email)).toEqual(['ada@example.com']);
  });

  it('without --password prints a one-time link to the dashboard\'s set-password page', async () => {
    const created = await gatehouse('operators', 'create', '--email', 'grace@example.com');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^setPasswordUrl: http:\/\/localhost:4321\/dashboard\/set-password\?token=opw_[A-Za-z0-9_-]{20,}$/m);
    expect(created.stdout).toContain('"email":"grace@example.com"');
  });

  it('needs --email', async () => {
    const res = await gatehouse('operators', 'create');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("required option '--email <email>' not specified");
  });
});

import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const SCRIPT = 'scripts/check-folder-imports.js';

/** Runs the folder check on a tree; answers its exit code and output. */
async function check(root: string) {
  try {
    const { stdout } = await run(process.execPath, [SCRIPT, root]);
    return { code: 0, output: stdout };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

describe('the folder-level import rule (npm run lint)', () => {
  const trees: string[] = [];
  afterAll(() => Promise.all(trees.map((dir) => rm(dir, { recursive: true, force: true }))));

  async function tree(files: Record<string, string>) {
    const root = await mkdtemp(join(tmpdir(), 'folder-imports-'));
    trees.push(root);
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(root, path, '..'), { recursive: true });
      await writeFile(join(root, path), text);
    }
    return root;
  }

  it('passes on src/ as it is: no two folders import each other, however indirectly', async () => {
    const result = await check('src');
    expect(result.output).toMatch(/folders of src\/ import each other in no loop/);
    expect(result.code).toBe(0);
  });

  it('fails on folders whose different files import each other (a loop no file-level cycle shows), naming each step', async () => {
    const root = await tree({
      'users/accounts.ts': "import { mirror } from '../email-addresses/primary.js';\nexport const a = mirror;\n",
      'users/schemas.ts': 'export type User = { id: string };\n',
      'email-addresses/primary.ts': 'export const mirror = 1;\n',
      'email-addresses/routes.ts': "import type { User } from '../users/schemas.js';\nexport type U = User;\n",
      'platform/clock.ts': 'export const now = 1;\n',
    });
    const result = await check(root);
    expect(result.code).toBe(1);
    expect(result.output).toContain('Folders that import each other in a loop: email-addresses, users');
    expect(result.output).toContain("email-addresses -> users   (");
    expect(result.output).toContain("users -> email-addresses   (");
  });

  it('counts a file at the top of the tree as one node with what imports it by its .js name', async () => {
    const root = await tree({
      'config.ts': "import { limit } from './a/limits.js';\nexport const config = limit;\n",
      'a/limits.ts': "import { config } from '../config.js';\nexport const limit = 1;\nexport const again = config;\n",
    });
    const result = await check(root);
    expect(result.code).toBe(1);
    expect(result.output).toContain('Folders that import each other in a loop: a, config');
  });

  it('follows a loop through three folders, re-exports, bare and dynamic imports', async () => {
    const root = await tree({
      'a/x.ts': "export const x = () => import('../b/y.js');\n",
      'b/y.ts': "export { z } from '../c/z.js';\n",
      'c/z.ts': "import '../a/x.js';\nexport const z = 1;\n",
    });
    const result = await check(root);
    expect(result.code).toBe(1);
    expect(result.output).toContain('Folders that import each other in a loop: a, b, c');
  });
});

describe('docs/architecture.md, the map of src/', () => {
  it('names every top-level folder of src/ as src/<folder>/', async () => {
    const doc = await readFile('docs/architecture.md', 'utf8');
    const folders = (await readdir('src', { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(folders.length).toBeGreaterThan(20);
    expect(folders.filter((folder) => !doc.includes(`src/${folder}/`))).toEqual([]);
  });
});

import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { E2E, MULTI_PROCESS, POOLED, RUNTIME, UNIT } from '../projects.js';

/** The glob forms test/projects.ts uses (`**` for any folders, `*` within a name) as a regular expression. */
const globToRegExp = (glob: string) =>
  new RegExp(`^${glob.split('**/').map((part) => part.split('*').map((text) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')).join('(?:.*/)?')}$`);

const testFiles = () => (readdirSync('test', { recursive: true }) as string[])
  .map((path) => `test/${path.split('\\').join('/')}`).filter((path) => path.endsWith('.test.ts')).sort();

const matches = (globs: string[]) => (path: string) => globs.some((glob) => globToRegExp(glob).test(path));

describe('the test projects and passes (test/projects.ts)', () => {
  it('puts every test file in exactly one of unit, e2e and multi-process, or else in database', () => {
    const files = testFiles();
    expect(files.length).toBeGreaterThan(200);
    const named = { unit: matches(UNIT), e2e: matches(E2E), 'multi-process': matches(MULTI_PROCESS) };
    const twice = files.filter((file) => Object.values(named).filter((inProject) => inProject(file)).length > 1);
    expect(twice).toEqual([]);
    // Each named project holds files: a glob that names nothing is a file moved without its line.
    for (const glob of [...UNIT, ...E2E, ...MULTI_PROCESS]) expect(files.filter((file) => globToRegExp(glob).test(file)), glob).not.toEqual([]);
  });

  it('names in the PgBouncer and Node 24 passes only paths that exist', () => {
    for (const path of [...POOLED, ...RUNTIME]) expect(existsSync(path), path).toBe(true);
  });

  it('reads the glob forms as vitest does', () => {
    expect(globToRegExp('test/**/unit-*.test.ts').test('test/platform/unit-cache.test.ts')).toBe(true);
    expect(globToRegExp('test/**/unit-*.test.ts').test('test/platform/cache.test.ts')).toBe(false);
    expect(globToRegExp('test/browser/**/*.test.ts').test('test/browser/hosted-pages.test.ts')).toBe(true);
    expect(globToRegExp('test/sdk/package-install.test.ts').test('test/sdk/package-install-test.ts')).toBe(false);
  });
});

import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

describe('the SDK in a browser bundle', () => {
  it('bundles for the browser with no Node built-in pulled in (the loopback path loads them only at run time, in Node)', async () => {
    const result = await build({
      entryPoints: [new URL('../../packages/sdk/src/index.ts', import.meta.url).pathname],
      bundle: true, platform: 'browser', format: 'esm', write: false, logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    const code = result.outputFiles[0]!.text;
    expect(code).not.toMatch(/(from|import\(|require\()\s*["'](node:)?(http|https|dns|net)["']/);
    expect(code).toContain('getBuiltinModule');
  });
});

/**
 * Builds dist/ (ESM and CommonJS, each with its .d.ts) from the entry points package.json exports: every
 * subpath's `source` condition is an entry, so a new subpath export (./react, ./next) is added in
 * package.json alone. dependencies and peerDependencies stay external (tsup's default), except openapi-fetch.
 */
import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

interface Exports { [subpath: string]: string | { source?: string } }
const { exports } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { exports: Exports };

/** `./src/react.tsx` → `react`: the output name beside the source's. */
const entry = Object.fromEntries(Object.values(exports)
  .flatMap((target) => (typeof target === 'object' && target.source ? [target.source] : []))
  .map((source) => [source.replace(/^\.\/src\//, '').replace(/\.tsx?$/, ''), source]));

export default defineConfig({
  entry,
  format: ['esm', 'cjs'],
  dts: true,
  target: 'node20',
  platform: 'neutral',
  clean: true,
  sourcemap: true,
  outDir: 'dist',
  tsconfig: 'tsconfig.build.json',
  // Bundled (5 kB, MIT, its notice in LICENSE): its CommonJS build sets `exports.default` without the
  // `__esModule` mark, so from our CommonJS build its default import is the module object, not createClient.
  noExternal: ['openapi-fetch'],
});

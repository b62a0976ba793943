// `npm run build` (also run by `npm ci` through `prepare`, and by `npm start` when dist/ is stale):
// compiles src/ to plain JavaScript in dist/ (esbuild, file by file; `npm run typecheck` is the type
// check) and writes the embedded database's template, so a start neither transpiles nor runs initdb.
import { cpSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as esbuild from 'esbuild';
import { buildInfoPath, DIST, ROOT, sourceFingerprint } from './build-state.js';

const started = performance.now();
const fingerprint = sourceFingerprint();
const SRC = join(ROOT, 'src');
const files = readdirSync(SRC, { withFileTypes: true, recursive: true })
  .filter((entry) => entry.isFile())
  .map((entry) => join(entry.parentPath, entry.name));

rmSync(DIST, { recursive: true, force: true });
await esbuild.build({
  entryPoints: files.filter((file) => /\.tsx?$/.test(file) && !file.endsWith('.d.ts')),
  outdir: DIST, outbase: SRC, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning',
});
// Files the code reads beside itself (the common-password list, the hosted pages' stylesheet).
for (const asset of files.filter((file) => !/\.tsx?$/.test(file))) cpSync(asset, join(DIST, relative(SRC, asset)));

const { writeEmbeddedTemplate } = await import(join(DIST, 'platform/db/pglite.js'));
await writeEmbeddedTemplate();
writeFileSync(buildInfoPath, `${JSON.stringify({ sourceFingerprint: fingerprint }, null, 2)}\n`);
process.stderr.write(`Built dist/ and the embedded database template in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

// `npm run build` (also run by `npm ci` through `prepare`, and by `npm start` when dist/ is stale):
// bundles the server and the CLI into dist/ (esbuild; `npm run typecheck` is the type check) and writes
// the embedded database's template, so a start neither transpiles nor runs initdb. A bundle rather than
// a file per source file: Node 20 resolves, reads and compiles each ES module on its own, and a start
// opened 2,100 of them (see BUNDLED), most of its time before the database opened.
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as esbuild from 'esbuild';
import { buildInfoPath, DIST, ROOT, sourceFingerprint } from './build-state.js';

const started = performance.now();
const fingerprint = sourceFingerprint();
const SRC = join(ROOT, 'src');
const files = readdirSync(SRC, { withFileTypes: true, recursive: true })
  .filter((entry) => entry.isFile())
  .map((entry) => join(entry.parentPath, entry.name));

/**
 * Code that reads a file beside itself (`new URL('./common-passwords.txt', import.meta.url)`) would look
 * beside the bundle. Each source file's import.meta.url becomes the address its own compiled file would
 * have in dist/, where the assets are copied below: every output file sits at the top of dist/ (entries
 * and chunks alike), so one address relative to the bundle's own serves all of them.
 */
const ownLocation = {
  name: 'own-location',
  setup(build) {
    build.onLoad({ filter: /\.tsx?$/ }, (args) => {
      if (!args.path.startsWith(`${SRC}/`)) return undefined;
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const compiled = `./${relative(SRC, args.path).replace(/\.tsx?$/, '.js')}`;
      return {
        contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(compiled)}, import.meta.url).href`),
        loader: args.path.endsWith('.tsx') ? 'tsx' : 'ts',
      };
    });
  },
};

/**
 * Packages bundled with our code rather than imported from node_modules: ES modules shipped as hundreds
 * of small files (typebox alone opened 679 at a start, kysely 262), pure JavaScript, nothing read beside
 * them. Every other package stays an import (native code, files of their own, CommonJS).
 */
const BUNDLED = new Set(['typebox', 'kysely', '@fastify/type-provider-typebox', 'uuidv7', 'jose']);
const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
const otherPackagesExternal = {
  name: 'other-packages-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => (BUNDLED.has(packageOf(args.path)) ? undefined : { path: args.path, external: true }));
  },
};

rmSync(DIST, { recursive: true, force: true });
await esbuild.build({
  // The server, the CLI (bin/gatehouse.js), and the template's writer for this build; code they share goes to chunks.
  entryPoints: { main: join(SRC, 'main.ts'), cli: join(SRC, 'cli.ts'), 'embedded-template': join(SRC, 'platform/db/pglite.ts') },
  bundle: true, splitting: true, chunkNames: 'chunk-[hash]',
  outdir: DIST, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning', plugins: [otherPackagesExternal, ownLocation],
});
// Files the code reads beside itself (the common-password list, the hosted pages' stylesheet).
for (const asset of files.filter((file) => !/\.tsx?$/.test(file))) cpSync(asset, join(DIST, relative(SRC, asset)));

const { writeEmbeddedTemplate } = await import(join(DIST, 'embedded-template.js'));
await writeEmbeddedTemplate();
writeFileSync(buildInfoPath, `${JSON.stringify({ sourceFingerprint: fingerprint }, null, 2)}\n`);
process.stderr.write(`Built dist/ and the embedded database template in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

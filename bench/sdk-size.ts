/**
 * `npm run bench -- sdk-size`: what @gatehouse/sdk adds to a browser app's bundle, built as an app's
 * bundler would take it from the package (dist/, rebuilt first): esbuild, browser, ESM, minified, tree-shaken,
 * raw and gzip bytes, for the client plane alone (`createClientPlane`) and for everything the package exports.
 * Writes bench/results/sdk-size.md. Sizes do not depend on the machine's load: one measurement suffices.
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { REPO_ROOT } from './lib/server.js';

export const description = 'the SDK in a browser bundle: createClientPlane alone and the whole package entry, minified, raw and gzip';

const CASES = [
  { name: '`createClientPlane` only', code: "import { createClientPlane } from '@gatehouse/sdk'; globalThis.auth = createClientPlane;" },
  { name: 'the whole package entry (`export *`)', code: "export * from '@gatehouse/sdk';" },
] as const;

interface Measured { name: string; raw: number; gzip: number; parts: [string, number][] }

/** Bytes in the bundle by package (or by SDK source file), largest first. */
function partsOf(metafile: esbuild.Metafile): [string, number][] {
  const totals = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      if (input === '<stdin>') continue;
      const part = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? input.replace(/^.*packages\/sdk\//, '@gatehouse/sdk ');
      totals.set(part, (totals.get(part) ?? 0) + bytesInOutput);
    }
  }
  return [...totals].filter(([, bytes]) => bytes > 0).sort((a, b) => b[1] - a[1]);
}

const bundle = (code: string, conditions: string[] = []) => esbuild.build({
  stdin: { contents: code, resolveDir: REPO_ROOT, loader: 'js' }, conditions,
  bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, metafile: true, logLevel: 'warning',
});

/** The sizes from dist/; where the bytes go from the same import built from the sources (dist/ is one file, openapi-fetch inside). */
async function measure(name: string, code: string): Promise<Measured> {
  const bytes = (await bundle(code)).outputFiles[0]!.contents;
  return { name, raw: bytes.length, gzip: gzipSync(bytes).length, parts: partsOf((await bundle(code, ['source'])).metafile) };
}

const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

function report(results: Measured[]): string {
  const sdkVersion = (JSON.parse(spawnSync('npm', ['pkg', 'get', 'version', '-w', '@gatehouse/sdk'], { cwd: REPO_ROOT, encoding: 'utf8' }).stdout) as Record<string, string>)['@gatehouse/sdk'];
  return [
    '# `sdk-size` results',
    '',
    `\`npm run bench -- sdk-size\`, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: @gatehouse/sdk ${sdkVersion} from its dist/, bundled by`,
    `esbuild ${esbuild.version} (browser, ESM, es2022, minified, tree-shaken); gzip at zlib's default level.`,
    '',
    '| Import | Minified | Gzip |',
    '|---|---:|---:|',
    ...results.map((r) => `| ${r.name} | ${kB(r.raw)} | ${kB(r.gzip)} |`),
    '',
    ...results.flatMap((r) => [`Where the bytes of ${r.name} go (minified, before gzip, built from the sources): ${r.parts.map(([part, bytes]) => `${part} ${kB(bytes)}`).join(', ')}.`, '']),
  ].join('\n');
}

export async function run(): Promise<void> {
  const build = spawnSync('npm', ['run', 'build:sdk'], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build:sdk failed');
  const results = [];
  for (const { name, code } of CASES) results.push(await measure(name, code));
  const text = report(results);
  await writeFile(join(REPO_ROOT, 'bench/results/sdk-size.md'), text);
  console.log(`\n${text}\nWrote bench/results/sdk-size.md`);
}

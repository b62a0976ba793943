// Whether dist/ was built from the source as it is now. Shared by the build, `npm start` and the CLI.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST = join(ROOT, 'dist');
const BUILD_INFO = join(DIST, 'build-info.json');

/** Every file the build reads, with its size and time: any edit, checkout or PGlite upgrade changes it. */
function inputs() {
  const tree = (dir) => readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
  return [...tree('src'), ...tree('migrations'), join(ROOT, 'package.json'), join(ROOT, 'node_modules/@electric-sql/pglite/package.json')].sort();
}

export function sourceFingerprint() {
  const hash = createHash('sha256');
  for (const file of inputs()) {
    const { size, mtimeMs } = statSync(file);
    hash.update(`${file}\0${size}\0${mtimeMs}\n`);
  }
  return hash.digest('hex');
}

export function isBuildFresh() {
  // A release layout (the container image) ships dist/ without src/: the build it holds is the one to run.
  if (!existsSync(join(ROOT, 'src'))) return existsSync(BUILD_INFO);
  try {
    return JSON.parse(readFileSync(BUILD_INFO, 'utf8')).sourceFingerprint === sourceFingerprint();
  } catch {
    return false;
  }
}

export const buildInfoPath = BUILD_INFO;

#!/usr/bin/env node
// The `gatehouse` operator CLI: the compiled dist/cli.js when the build is up to date (`npm run build`,
// which `npm ci` and `npm start` run), else src/cli.ts through tsx, so it never runs stale code.
import { isBuildFresh } from '../scripts/build-state.js';

if (isBuildFresh()) {
  await import('../dist/cli.js');
} else {
  // Compiling the source on the fly takes seconds on a first run: say so rather than sit silent.
  const progress = setTimeout(() => process.stderr.write('Running Gatehouse from source, as dist/ is older than src/ (npm run build makes this start at once)...\n'), 1000);
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
  clearTimeout(progress);
}

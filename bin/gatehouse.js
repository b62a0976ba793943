#!/usr/bin/env node
// The `gatehouse` operator CLI: the compiled dist/cli.js when the build is up to date (`npm run build`,
// which `npm ci` and `npm start` run), else src/cli.ts through tsx, so it never runs stale code.
import { isBuildFresh } from '../scripts/build-state.js';

if (isBuildFresh()) {
  await import('../dist/cli.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}

// `npm start`: runs the compiled server, building it first when the source changed since the last build.
import { spawnSync } from 'node:child_process';
import module from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST, isBuildFresh, ROOT } from './build-state.js';

if (!isBuildFresh()) {
  process.stderr.write('Building Gatehouse (dist/ is missing or older than the source)...\n');
  // In a child process, so the build's memory is not the server's.
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts/build.js')], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// Node 22.1+ keeps V8's compiled code of the modules between starts (a no-op on Node 20).
module.enableCompileCache?.();
await import(pathToFileURL(join(DIST, 'main.js')).href);

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { dumpImage } from '../../src/platform/db/pglite.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A file holding a migrated embedded database, dumped once per run (see openTestDatabase). */
    pgliteImagePath: string;
  }
}

/**
 * Runs once before the suite: initdb and the migrations cost seconds of CPU, and every file opens its
 * own in-memory database, so they run here once and each file loads the result.
 */
export async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-test-image-'));
  const path = join(dir, 'migrated.tar');
  await writeFile(path, Buffer.from(await (await dumpImage()).arrayBuffer()));
  project.provide('pgliteImagePath', path);
  return () => rm(dir, { recursive: true, force: true });
}

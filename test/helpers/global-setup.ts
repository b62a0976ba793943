import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { dumpImage } from '../../src/platform/db/pglite.js';
import { PATIENCE_MS } from './patience.js';
import { startPgBouncer } from './pgbouncer.js';

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
  // Each project of vitest.config.ts calls this, one after another in the main process: the first does the work,
  // the others share it (the image's path, and the pooler's URLs already in process.env).
  if (process.env.GATEHOUSE_TEST_IMAGE_PATH) {
    project.provide('pgliteImagePath', process.env.GATEHOUSE_TEST_IMAGE_PATH);
    return undefined;
  }
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-test-image-'));
  const path = join(dir, 'migrated.tar');
  await writeFile(path, Buffer.from(await (await dumpImage()).arrayBuffer()));
  process.env.GATEHOUSE_TEST_IMAGE_PATH = path;
  project.provide('pgliteImagePath', path);
  const stopPooler = await poolTheTestDatabase();
  return async () => {
    await stopPooler?.();
    await rm(dir, { recursive: true, force: true });
    delete process.env.GATEHOUSE_TEST_IMAGE_PATH;
  };
}

/**
 * TEST_PGBOUNCER=1 (with TEST_DATABASE_URL): the whole suite through one PgBouncer in transaction mode.
 * The test workers start after this and inherit the environment, so every file, and every server process
 * a file starts, reaches PostgreSQL through the pooler (TEST_DATABASE_URL), and LISTEN straight
 * (TEST_DATABASE_DIRECT_URL, see database-urls.ts).
 */
async function poolTheTestDatabase(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.TEST_PGBOUNCER !== '1') return undefined;
  const direct = process.env.TEST_DATABASE_URL;
  if (!direct) throw new Error('TEST_PGBOUNCER=1 needs TEST_DATABASE_URL: the PostgreSQL that PgBouncer stands in front of');
  // Gatehouse's transactions set their own limits; statements outside one get the server session's, here
  // only a statement timeout (Gatehouse refuses to start without one), and one long enough that the tests'
  // own clients (a database dropped on a busy machine, a lock held while a test looks) never meet it.
  const bouncer = await startPgBouncer(direct, { serverSettings: { statement_timeout: PATIENCE_MS } });
  process.env.TEST_DATABASE_DIRECT_URL = direct;
  process.env.TEST_DATABASE_URL = bouncer.pooled(direct);
  process.env.TEST_PGBOUNCER_ADMIN_URL = bouncer.adminUrl;
  return bouncer.stop;
}

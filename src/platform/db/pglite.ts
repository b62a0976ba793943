import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Kysely } from 'kysely';
import { migrate } from './migrate.js';
import { pgliteDialect } from './pglite-dialect.js';

/** Counts and sums come back as JS numbers, from PostgreSQL and PGlite alike. */
export const INT8 = 20;
export const NUMERIC = 1700;

/**
 * The embedded database's shared buffers. PostgreSQL's 128 MB default lives inside the WebAssembly heap
 * and grows it for good; the data files sit in the operating system's page cache anyway, so a small
 * pool costs little speed and saves about 100 MB of resident memory (and a third of a second at start).
 */
const SHARED_BUFFERS = '32MB';

/**
 * A migrated, empty data directory, made by the build (`npm run build`) next to the compiled code. A
 * new data directory starts as a copy of it: a file copy takes a fraction of a second where initdb takes
 * several (and grows the WebAssembly heap for good). Run from source (tests, tsx) it does not exist,
 * and PGlite runs initdb as usual.
 */
const TEMPLATE = new URL('./embedded-template/', import.meta.url);
const isDataDir = (dir: string | URL) => existsSync(new URL('PG_VERSION', dir instanceof URL ? dir : pathToFileURL(`${dir}/`)));

/**
 * PGlite, loaded only for the embedded database (on disk, or in memory when dataDir is undefined). An
 * in-memory database may start from `image`, a data directory dumped by `dumpImage`: loading one takes a
 * fraction of the time initdb does (the test suite opens one per file).
 */
export async function openPGlite(dataDir: string | undefined, template: URL | undefined = TEMPLATE, image?: Blob) {
  const [{ PGlite }, { pg_trgm }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/contrib/pg_trgm')]);
  if (dataDir !== undefined && template !== undefined && isDataDir(template) && !isDataDir(dataDir)) cpSync(template, dataDir, { recursive: true });
  return PGlite.create(dataDir, {
    ...(dataDir === undefined && image && { loadDataDir: image }),
    extensions: { pg_trgm },
    parsers: { [INT8]: Number, [NUMERIC]: Number },
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`],
  });
}

/** A migrated in-memory database, dumped as an image for an in-memory `openPGlite` to start from. */
export async function dumpImage(): Promise<Blob> {
  const lite = await openPGlite(undefined);
  try {
    await migrate(new Kysely({ dialect: pgliteDialect(lite) }));
    return await lite.dumpDataDir('none');
  } finally {
    await lite.close();
  }
}

/** Makes the template: a data directory, migrated, and closed cleanly. */
export async function writeEmbeddedTemplate(target: URL = TEMPLATE): Promise<void> {
  rmSync(target, { recursive: true, force: true });
  // PGlite makes the directory but not its parents (in a bundled dist/ nothing else is in platform/db/).
  mkdirSync(target, { recursive: true });
  const lite = await openPGlite(fileURLToPath(target), undefined);
  try {
    await migrate(new Kysely({ dialect: pgliteDialect(lite) }));
  } finally {
    await lite.close();
  }
}

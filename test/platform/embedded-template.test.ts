import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGlite, writeEmbeddedTemplate } from '../../src/platform/db/pglite.js';

const MIGRATIONS = readdirSync(new URL('../../migrations/', import.meta.url)).filter((f) => f.endsWith('.sql')).sort();

describe('the embedded database template', () => {
  let root: string;
  let template: URL;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-template-'));
    template = pathToFileURL(join(root, 'template/'));
    await writeEmbeddedTemplate(template);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const versions = async (dataDir: string) => {
    const lite = await openPGlite(dataDir, template);
    try {
      return (await lite.query<{ version: string }>('select version from schema_migrations order by version')).rows.map((r) => r.version);
    } finally {
      await lite.close();
    }
  };

  it('starts a new data directory migrated, next to files already in it (the lock, the admin token)', async () => {
    const dataDir = join(root, 'new');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'admin.token'), 'kept');
    expect(await versions(dataDir)).toEqual(MIGRATIONS);
    expect(readdirSync(dataDir)).toEqual(expect.arrayContaining(['PG_VERSION', 'admin.token']));
  });

  it('never copies over an existing database: its rows survive a reopen with the template present', async () => {
    const dataDir = join(root, 'existing');
    const lite = await openPGlite(dataDir, template);
    await lite.exec("create table kept (v text); insert into kept values ('mine')");
    await lite.close();
    const again = await openPGlite(dataDir, template);
    expect((await again.query<{ v: string }>('select v from kept')).rows).toEqual([{ v: 'mine' }]);
    await again.close();
  });
});

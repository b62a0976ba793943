import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = 'test/operations/rolling-upgrade';

/** `npm run check:migrations` on the given paths: its exit code and output. */
async function check(...paths: string[]) {
  return promisify(execFile)(process.execPath, ['scripts/check-migrations.js', ...paths], { cwd: ROOT })
    .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (err: { code: number; stdout: string; stderr: string }) => err);
}

/** Each finding as [line, why], without the advice that follows "make it safe". */
const findings = (stderr: string, file: string) => stderr.split('\n').filter((l) => l.startsWith(`${FIXTURES}/${file}:`)).map((l) => {
  const [, line, why] = /^[^:]+:(\d+): (.*)$/.exec(l)!;
  return [Number(line), why.replace(/: make it safe .*$/, '')];
});

const DROPS_COLUMN = 'drops a column the previous version may read or write';
const RENAMES = 'renames what the previous version names';
const NEW_TYPE = 'changes a column type (a table rewrite under an exclusive lock, and values the previous version may not read)';
const SET_NOT_NULL = "adds NOT NULL (the previous version's inserts may leave the column empty)";
const CHANGES_ROWS = 'changes existing rows while the previous version keeps writing them the old way';

describe('the rolling-upgrade check of migrations (npm run check:migrations)', () => {
  it("passes the project's migrations and names those that need the previous version stopped, as docs/operations.md does", async () => {
    const { code, stdout } = await check();
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\d+ migrations follow the rolling-upgrade rule; 17 statement\(s\) carry a rolling-upgrade note\.\n/);
    const offline = /Offline \(stop the previous version's processes before they run\): (.*)\.\n$/.exec(stdout)![1].split(', ');
    expect(offline).toEqual(['0015_mail_delivery_and_retention.sql', '0029_mail_jobs.sql']);
    const upgrades = readFileSync(`${ROOT}docs/operations.md`, 'utf8').split('\n## Upgrades\n')[1].split('\n## ')[0];
    for (const file of offline) expect(upgrades).toContain(file.replace(/_.*$/, ''));
  });

  it('passes expanding statements, whatever their comments, strings, quoted names and function bodies say', async () => {
    expect(await check(`${FIXTURES}/safe`)).toEqual({
      code: 0, stderr: '',
      stdout: "1 migrations follow the rolling-upgrade rule; 0 statement(s) carry a rolling-upgrade note.\nOffline (stop the previous version's processes before they run): none.\n",
    });
  });

  it('fails every statement an old process could notice, naming its line and why', async () => {
    const { code, stderr } = await check(`${FIXTURES}/unsafe`);
    expect(code).toBe(1);
    expect(findings(stderr, 'unsafe/0001_unsafe.sql')).toEqual([
      [2, DROPS_COLUMN],
      [3, RENAMES],
      [4, NEW_TYPE],
      [5, SET_NOT_NULL],
      [6, "adds a NOT NULL column without a default (the previous version's inserts fail)"],
      [7, 'adds a generated or identity column (a table rewrite under an exclusive lock)'],
      [8, 'adds a column with a volatile default (a table rewrite under an exclusive lock)'],
      [9, "adds a constraint the previous version's writes must satisfy"],
      [10, 'drops a constraint (a unique one may back an ON CONFLICT of the previous version)'],
      [11, 'allows NULL where the previous version reads a value'],
      [12, "drops a default the previous version's inserts may rely on"],
      [13, 'drops a table the previous version may use'],
      [14, 'drops an index the previous version may use'],
      [15, RENAMES],
      [16, RENAMES],
      [17, 'adds a unique index to an existing table (the previous version may write duplicates; the build blocks writes)'],
      [18, "adds a trigger that runs on the previous version's writes"],
      [19, 'replaces a function the previous version runs (directly or through a trigger)'],
      [20, CHANGES_ROWS],
      [21, CHANGES_ROWS],
      [22, 'copies existing rows (a backfill) while the previous version keeps writing them the old way'],
      [23, 'runs a DO block, whose statements this check cannot judge'],
      [24, CHANGES_ROWS],
      [25, DROPS_COLUMN],
      [27, 'takes away privileges the previous version may need'],
      [28, `${NEW_TYPE}; ${SET_NOT_NULL}`],
    ]);
    expect(stderr).toContain('make it safe (expand now, contract in a later release), or say why old processes are not affected in a comment above it: -- rolling-upgrade: <reason>');
    expect(stderr.trimEnd().split('\n').at(-1)).toBe('26 statement(s) break the rolling-upgrade rule (docs/operations.md, "Upgrades").');
  });

  it('passes those statements with a reason above or inside them, and names a migration whose note says offline', async () => {
    expect(await check(`${FIXTURES}/annotated`)).toEqual({
      code: 0, stderr: '',
      stdout: "1 migrations follow the rolling-upgrade rule; 3 statement(s) carry a rolling-upgrade note.\nOffline (stop the previous version's processes before they run): 0001_annotated.sql.\n",
    });
  });

  it('fails a note without a real reason, a note on a statement that needs none, and a file it cannot read as SQL', async () => {
    const { code, stderr } = await check(`${FIXTURES}/bad-notes`);
    expect(code).toBe(1);
    expect(findings(stderr, 'bad-notes/0001_bad_notes.sql')).toEqual([
      [2, `${DROPS_COLUMN}: the rolling-upgrade note must give the reason (at least 20 characters)`],
      [4, 'a rolling-upgrade note on a statement this check finds safe: put it above the statement it is about'],
      [5, 'drops an index the previous version may use'],
      [7, `${SET_NOT_NULL}: the rolling-upgrade note must give the reason (at least 20 characters)`],
    ]);
    expect(findings(stderr, 'bad-notes/0002_unclosed.sql')).toEqual([[0, 'cannot be read as SQL: line 1: the dollar-quoted body opened with $body$ is never closed']]);
  });

  it('exits 2 when a directory cannot be read', async () => {
    const { code, stderr } = await check(`${FIXTURES}/no-such-directory`);
    expect(code).toBe(2);
    expect(stderr).toMatch(/ENOENT/);
  });
});

import { readFile } from 'node:fs/promises';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const read = async (path: string) => JSON.parse(await readFile(new URL(`../../${path}`, import.meta.url), 'utf8'));

/** The oldest release of each Node.js line Gatehouse supports: CI runs 20 and 24 (.ci/run), 22 is the LTS between. */
const OLDEST_OF_EACH_LINE = ['20.19.0', '22.13.0', '24.0.0'];

interface LockedPackage { engines?: { node?: string }; optional?: boolean; os?: string[]; cpu?: string[] }

/**
 * Whether npm installs the package on this machine: an optional package built for another system or processor
 * (sharp's win32-ia32 binary, say) is skipped, so it cannot warn here.
 */
const installsHere = ({ optional, os, cpu }: LockedPackage) =>
  !optional || ((!os || os.includes(process.platform)) && (!cpu || cpu.includes(process.arch)));

describe('the Node.js versions Gatehouse supports', () => {
  it("lets every locked package install on each supported line without npm's EBADENGINE warning", async () => {
    const lock = await read('package-lock.json') as { packages: Record<string, LockedPackage> };
    const refusing = Object.entries(lock.packages).filter(([, locked]) => installsHere(locked)).flatMap(([path, { engines }]) =>
      OLDEST_OF_EACH_LINE.filter((version) => engines?.node && !semver.satisfies(version, engines.node))
        .map((version) => `${path.replace(/^.*node_modules\//, '')} wants node ${engines!.node}, not ${version}`));
    expect(refusing).toEqual([]);
  });

  it('declares in engines exactly the lines it supports', async () => {
    const { engines } = await read('package.json') as { engines: { node: string } };
    for (const version of OLDEST_OF_EACH_LINE) expect(semver.satisfies(version, engines.node), version).toBe(true);
    expect(semver.satisfies('20.18.0', engines.node)).toBe(false);
    expect(semver.satisfies('21.7.0', engines.node)).toBe(false);
  });

  it('says in the README which Node.js lines CI tests', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toContain('Tested on Node.js 20 (20.19+) and 24');
  });
});

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../helpers/processes.js';
import { PATIENCE_MS } from '../helpers/patience.js';

const run = promisify(execFile);

/** The shell blocks of a README section, as one terminal session would run them. */
async function sectionCommands(heading: string, next: string): Promise<string[]> {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf(heading), readme.indexOf(next));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** "Run it" after the start command, then "Operate it", in one terminal. */
async function readmeSession(): Promise<string> {
  const runIt = await sectionCommands('## Run it', '## Test it');
  expect(runIt[0]!.trim()).toBe('npm ci && npm start');
  return [...runIt.slice(1), ...(await sectionCommands('## Operate it', '## Read more'))].join('\n');
}

/** A developer's terminal: without the npm_* variables of the runner (under `npx -p node@24` they would send `npx gatehouse` elsewhere). */
const terminalEnv = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));

describe("the README's first commands", () => {
  let server: ServerProcess;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-readme-'));
    server = await spawnServer({ env: { GATEHOUSE_DATA_DIR: dataDir } });
  });
  afterAll(async () => { await server?.stop(); await rm(dataDir, { recursive: true, force: true }); });

  it('run as pasted in one terminal, the CLI\'s included, with the secret key the first start printed', async () => {
    const secretKey = /secret key:\s+(sk_[A-Za-z0-9_-]+)/.exec(server.stderr())![1]!;
    const script = (await readmeSession())
      .replace('export SECRET_KEY=sk_...', `export SECRET_KEY=${secretKey}`)
      .replaceAll('http://localhost:3000', `http://127.0.0.1:${server.port}`);
    expect(script).not.toContain('sk_...');
    // Each answer on its own line (curl prints none after the body), to read them apart. The session starts
    // several CLI processes one after another: each may take a full PATIENCE_MS on a busy machine.
    const { stdout } = await run('bash', ['-e', '-o', 'pipefail', '-c', `curl() { command curl "$@"; echo; }\n${script}`],
      { timeout: 5 * PATIENCE_MS, cwd: new URL('../../', import.meta.url).pathname, env: { ...terminalEnv(), GATEHOUSE_DATA_DIR: dataDir, DATABASE_URL: '' } });
    const answers = stdout.split('\n').filter((line) => line.startsWith('{"')).map((line) => JSON.parse(line));
    expect(answers.length).toBeGreaterThanOrEqual(3);
    // The CLI's answers (through the running server): the environments table names both, and the user it created is listed.
    expect(stdout).toMatch(/^ID\s+NAME\s+FRONTENDHOST$/m);
    expect(stdout).toMatch(/^\S+\s+staging\s+staging\.localhost:\d+$/m);
    expect(stdout).toMatch(/^\S+\s+grace@example\.com\s.*\bactive\b/m);
    expect(stdout).toMatch(/^http:\/\/localhost:5173$/m);
    expect(answers[0]).toMatchObject({ email: 'ada@example.com', status: 'active' });
    expect(answers[1]).toMatchObject({ action: 'document.shared', actor: { type: 'user', id: answers[0].id } });
    expect(answers[2]).toMatchObject({ token: expect.stringMatching(/^imp_/), expiresInSeconds: 600 });
  });
});

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../helpers/processes.js';

const run = promisify(execFile);

/** The shell blocks of the README's "Run it" section after the start command, as one terminal session would run them. */
async function runItCommands(): Promise<string> {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Run it'), readme.indexOf('## Test it'));
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  expect(blocks[0]!.trim()).toBe('npm ci && npm start');
  return blocks.slice(1).join('\n');
}

describe("the README's first commands", () => {
  let server: ServerProcess;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-readme-'));
    server = await spawnServer({ env: { GATEHOUSE_DATA_DIR: dataDir } });
  }, 60_000);
  afterAll(async () => { await server?.stop(); await rm(dataDir, { recursive: true, force: true }); });

  it('run as pasted in one terminal, with the secret key the first start printed', async () => {
    const secretKey = /secret key:\s+(sk_[A-Za-z0-9_-]+)/.exec(server.stderr())![1]!;
    const script = (await runItCommands())
      .replace('export SECRET_KEY=sk_...', `export SECRET_KEY=${secretKey}`)
      .replaceAll('http://localhost:3000', `http://127.0.0.1:${server.port}`);
    expect(script).not.toContain('sk_...');
    // Each answer on its own line (curl prints none after the body), to read them apart.
    const { stdout } = await run('bash', ['-e', '-o', 'pipefail', '-c', `curl() { command curl "$@"; echo; }\n${script}`], { timeout: 30_000 });
    const answers = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    expect(answers).toHaveLength(3);
    expect(answers[0]).toMatchObject({ email: 'ada@example.com', status: 'active' });
    expect(answers[1]).toMatchObject({ action: 'document.shared', actor: { type: 'user', id: answers[0].id } });
    expect(answers[2]).toMatchObject({ token: expect.stringMatching(/^imp_/), expiresInSeconds: 600 });
  }, 60_000);
});

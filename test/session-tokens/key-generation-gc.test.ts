import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PATIENCE_MS } from '../helpers/patience.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// Node 20 could lock a key's mutex twice when a garbage collection finalized a key-generation job while the
// same key exported as a JWK: the process then hung for good. With a 1 MiB young generation, collections come
// every few keys; before the fix such a loop hung within about 22,000 keys on the development machine.
const SCRIPT = `
  import { newKey } from './src/session-tokens/service.ts';
  import { createSealer } from './src/platform/crypto/encryption.ts';
  const sealer = createSealer(Buffer.alloc(32, 7));
  for (let i = 0; i < 40000; i++) newKey(sealer);
  console.log('made 40000 keys');
`;

describe('signing key generation', () => {
  it('makes key after key under constant garbage collection without hanging the process', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--max-semi-space-size=1', '--import', 'tsx', '--input-type=module', '-e', SCRIPT], { cwd: ROOT, timeout: PATIENCE_MS });
    expect(stdout.trim()).toBe('made 40000 keys');
  });
});

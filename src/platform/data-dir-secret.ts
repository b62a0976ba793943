import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A secret the embedded database keeps beside its files (`<dataDir>/<name>`): read when it exists, else
 * 32 random bytes written once, readable by the owner only. `created` says this call made it.
 */
export function dataDirSecret(dataDir: string, name: string, encoding: 'base64' | 'base64url'): { text: string; path: string; created: boolean } {
  const path = join(dataDir, name);
  if (existsSync(path)) return { text: readFileSync(path, 'utf8').trim(), path, created: false };
  mkdirSync(dataDir, { recursive: true });
  const text = randomBytes(32).toString(encoding);
  writeFileSync(path, `${text}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return { text, path, created: true };
}

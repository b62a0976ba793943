import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDirSecret } from './data-dir-secret.js';

/**
 * The embedded database's local admin access. A server on a data directory without GATEHOUSE_ADMIN_TOKEN
 * turns the admin API on with a token it keeps in `<dataDir>/admin.token` (owner-only, like the database
 * files beside it) and writes where it listens to `<dataDir>/server.json`, so the CLI on the same data
 * directory acts through the running server instead of refusing: the development loop needs no setting.
 */

const TOKEN_FILE = 'admin.token';
const ADDRESS_FILE = 'server.json';

/** The data directory's admin token, generated on first use. */
export const localAdminToken = (dataDir: string) => dataDirSecret(dataDir, TOKEN_FILE, 'base64url').text;

export interface LocalServer { url: string; pid: number; token: string }

/** Says where the server on this data directory listens; `forget` when it stops. */
export function announceLocalServer(dataDir: string, url: string) {
  const path = join(dataDir, ADDRESS_FILE);
  writeFileSync(path, `${JSON.stringify({ url, pid: process.pid })}\n`, { mode: 0o600 });
  return { forget: () => rmSync(path, { force: true }) };
}

/** The running server of this data directory and its token, when one announced itself. */
export function findLocalServer(dataDir: string): LocalServer | undefined {
  try {
    const { url, pid } = JSON.parse(readFileSync(join(dataDir, ADDRESS_FILE), 'utf8')) as { url: string; pid: number };
    const token = readFileSync(join(dataDir, TOKEN_FILE), 'utf8').trim();
    return { url, pid, token };
  } catch {
    return undefined;
  }
}

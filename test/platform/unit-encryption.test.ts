import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertServerConfig, ConfigError, loadConfig } from '../../src/config.js';
import { createSealer, dataDirEncryptionKey, parseEncryptionKey, SealedSecretUnreadableError } from '../../src/platform/crypto/encryption.js';

describe('sealing secrets at rest (AES-256-GCM)', () => {
  const key = randomBytes(32);

  it('opens what it sealed, with a fresh IV each time', () => {
    const sealer = createSealer(key);
    const [a, b] = [sealer.seal(Buffer.from('private key')), sealer.seal(Buffer.from('private key'))];
    expect(a.equals(b)).toBe(false);
    expect(sealer.open(a).toString()).toBe('private key');
  });

  it('refuses a tampered value and another key with an error that says the key is not the one that sealed it', () => {
    const sealed = createSealer(key).seal(Buffer.from('private key'));
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => createSealer(key).open(tampered)).toThrow(SealedSecretUnreadableError);
    expect(() => createSealer(randomBytes(32)).open(sealed)).toThrow(SealedSecretUnreadableError);
    expect(() => createSealer(randomBytes(32)).open(sealed)).toThrow(
      'A secret sealed in the database does not open with this encryption key (GATEHOUSE_ENCRYPTION_KEY, or the embedded database\'s '
      + 'encryption.key): it was sealed under another key, or altered. See docs/operations.md, "The encryption key and signing keys".');
  });

  it('reads a key as 64 hex digits, base64 or base64url, and nothing shorter or longer', () => {
    expect(parseEncryptionKey(key.toString('hex'))).toEqual(key);
    expect(parseEncryptionKey(key.toString('base64'))).toEqual(key);
    expect(parseEncryptionKey(key.toString('base64url'))).toEqual(key);
    for (const bad of ['', 'short', randomBytes(16).toString('base64'), randomBytes(33).toString('hex')]) expect(parseEncryptionKey(bad)).toBeUndefined();
  });

  it('generates the data directory key once, readable by its owner only, and reads it back after', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-key-'));
    try {
      const first = dataDirEncryptionKey(dir);
      expect(first.created).toBe(true);
      expect((await stat(first.path)).mode & 0o777).toBe(0o600);
      expect(parseEncryptionKey(await readFile(first.path, 'utf8'))).toEqual(first.key);
      const again = dataDirEncryptionKey(dir);
      expect(again).toEqual({ ...first, created: false });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a bad GATEHOUSE_ENCRYPTION_KEY without echoing it, and DATABASE_URL without one', () => {
    expect(() => loadConfig({ GATEHOUSE_ENCRYPTION_KEY: 'hunter2-not-a-key' })).toThrow(
      'GATEHOUSE_ENCRYPTION_KEY: must be 32 random bytes as 64 hex digits or base64 (openssl rand -base64 32) (value hidden, 17 characters)');
    const shared = loadConfig({ DATABASE_URL: 'postgres://db/gatehouse' });
    expect(() => assertServerConfig(shared)).toThrow(ConfigError);
    expect(() => assertServerConfig(shared)).toThrow('GATEHOUSE_ENCRYPTION_KEY: is required with DATABASE_URL');
    expect(() => assertServerConfig(loadConfig({ DATABASE_URL: 'postgres://db/gatehouse', GATEHOUSE_ENCRYPTION_KEY: key.toString('base64') }))).not.toThrow();
  });
});

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { dataDirSecret } from '../data-dir-secret.js';

/**
 * A sealed secret that does not open under this process's key: it was sealed under another one (a backup
 * restored with the wrong key, a lost key replaced) or altered. The message says so, for the log.
 */
export class SealedSecretUnreadableError extends Error {
  constructor() {
    super('A secret sealed in the database does not open with this encryption key (GATEHOUSE_ENCRYPTION_KEY, or the embedded '
      + 'database\'s encryption.key): it was sealed under another key, or altered. See docs/operations.md, "The encryption key and signing keys".');
    this.name = 'SealedSecretUnreadableError';
  }
}

/**
 * Encrypts secrets kept in the database (signing keys, external providers' client secrets, webhook secrets,
 * TOTP secrets) under the operator's key: AES-256-GCM.
 */
export interface Sealer {
  seal(plain: Buffer): Buffer;
  open(sealed: Buffer): Buffer;
}

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value is `version | iv | tag | ciphertext`; the version leaves room for another cipher or key later. */
export function createSealer(key: Buffer): Sealer {
  if (key.length !== 32) throw new Error('the encryption key must be 32 bytes');
  return {
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
    },
    open(sealed) {
      const bytes = Buffer.from(sealed);
      if (bytes[0] !== VERSION) throw new Error(`unknown sealed-value version ${bytes[0]}`);
      const iv = bytes.subarray(1, 1 + IV_BYTES);
      const tag = bytes.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAuthTag(tag);
      const body = decipher.update(bytes.subarray(1 + IV_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([body, decipher.final()]);
      } catch {
        // GCM's tag check is all final() can fail: the key is not the one that sealed it, or the bytes changed.
        throw new SealedSecretUnreadableError();
      }
    },
  };
}

/** 32 bytes written as 64 hex digits or as base64 / base64url; undefined for anything else. */
export function parseEncryptionKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(trimmed)) return undefined;
  const key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return key.length === 32 ? key : undefined;
}

const KEY_FILE = 'encryption.key';

/**
 * The embedded database's key: read from `<dataDir>/encryption.key`, or generated there once (owner
 * read/write only). `created` says the caller should tell the operator where it is.
 */
export function dataDirEncryptionKey(dataDir: string): { key: Buffer; path: string; created: boolean } {
  const { text, path, created } = dataDirSecret(dataDir, KEY_FILE, 'base64');
  const key = parseEncryptionKey(text);
  if (!key) throw new Error(`${path} does not hold a 32-byte key (64 hex digits or base64)`);
  return { key, path, created };
}

/**
 * The key that seals the database's secrets: GATEHOUSE_ENCRYPTION_KEY when set, else (embedded database)
 * the data directory's own. `generatedAt` names the file when this call made it, for the operator to hear.
 */
export function resolveEncryptionKey(configured: string | undefined, dataDir: string): { key: Buffer; generatedAt?: string } {
  if (configured) {
    const key = parseEncryptionKey(configured);
    if (!key) throw new Error('GATEHOUSE_ENCRYPTION_KEY is not a 32-byte key');
    return { key };
  }
  const { key, path, created } = dataDirEncryptionKey(dataDir);
  return created ? { key, generatedAt: path } : { key };
}

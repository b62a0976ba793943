import { hash, verify } from '@node-rs/argon2';
import { availableParallelism } from 'node:os';
import pLimit from 'p-limit';

// OWASP: argon2id, 19 MiB, t=2, p=1. The PHC string keeps the parameters, so they can be raised later.
const ARGON2ID = 2; // Algorithm.Argon2id (a const enum, which isolated modules cannot import)
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * At most one hash per core at a time; the rest wait their turn here. Each argon2id run holds 19 MiB: more
 * at once than cores only evicts each other's memory from the caches (about 5% fewer hashes per second on
 * two cores), and it would hold every thread of the libuv pool, which file and DNS work also need.
 */
export const passwordHashing = pLimit(availableParallelism());

/** Hashes on the libuv thread pool, off the event loop. */
export const hashPassword = (password: string) => passwordHashing(() => hash(password, OPTIONS));

let dummyHash: Promise<string> | undefined;

/**
 * Verifies a password. With no stored hash (unknown account, passwordless user) it still runs a full
 * verification against a dummy hash, so the answer takes the same time either way.
 */
export async function verifyPassword(storedHash: string | null | undefined, password: string): Promise<boolean> {
  if (!storedHash) {
    dummyHash ??= hashPassword('gatehouse-dummy-password');
    await verifyInTurn(await dummyHash, password);
    return false;
  }
  return verifyInTurn(storedHash, password);
}

/** A verification when its turn comes (passwordHashing); a malformed stored hash is a wrong password. */
const verifyInTurn = (storedHash: string, password: string) => passwordHashing(() => verify(storedHash, password)).catch(() => false);

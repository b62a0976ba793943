import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { hashPassword, passwordHashing, verifyPassword } from '../../src/platform/crypto/passwords.js';

describe('password hashing', () => {
  it('runs at most one argon2id hash per core at once, however many requests ask together, the rest waiting their turn, and answers each', async () => {
    const stored = await hashPassword('a long passphrase');
    const cores = availableParallelism();
    const asks = cores * 3;
    const running: number[] = [];
    const answers = Promise.all(Array.from({ length: asks }, (_, i) =>
      verifyPassword(stored, i % 2 === 0 ? 'a long passphrase' : 'wrong').finally(() => running.push(passwordHashing.activeCount))));
    // A verification with a stored hash asks for its turn at once.
    expect(passwordHashing.activeCount).toBe(cores);
    expect(passwordHashing.pendingCount).toBe(asks - cores);
    expect(await answers).toEqual(Array.from({ length: asks }, (_, i) => i % 2 === 0));
    expect(Math.max(...running)).toBeLessThanOrEqual(cores);
    expect(passwordHashing.activeCount + passwordHashing.pendingCount).toBe(0);
  });

  it('verifies against a dummy hash, under the same limit, when there is no stored hash, and says no', async () => {
    expect(await verifyPassword(null, 'anything')).toBe(false); // the dummy hash is made once, at the first such ask
    const asks = availableParallelism() * 6;
    const answers = Promise.all(Array.from({ length: asks }, () => verifyPassword(null, 'anything')));
    await new Promise((resolve) => setImmediate(resolve)); // each first awaits the dummy hash
    expect(passwordHashing.activeCount).toBe(availableParallelism());
    expect(passwordHashing.pendingCount).toBeGreaterThan(0);
    expect(await answers).toEqual(Array(asks).fill(false));
  });
});

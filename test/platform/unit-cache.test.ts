import { describe, expect, it } from 'vitest';
import { createCache } from '../../src/platform/cache.js';
import { createTestClock } from '../../src/platform/clock.js';

describe('the per-process cache', () => {
  const options = { ttlMs: 60_000, maxEntries: 3 };

  it('serves a stored value until its time limit', () => {
    const clock = createTestClock();
    const cache = createCache<string>(clock, options);
    cache.set('k', 'v', cache.generation());
    clock.advance(59_999);
    expect(cache.get('k')).toBe('v');
    clock.advance(1);
    expect(cache.get('k')).toBeUndefined();
  });

  it('drops a value whose load began before an eviction, so a revoked row is never cached after its revocation', () => {
    const cache = createCache<{ id: string }>(createTestClock(), options);
    const loadBegan = cache.generation();
    cache.deleteWhere((v) => v.id === 'key-1'); // the revocation arrives while the load is in flight
    cache.set('k', { id: 'key-1' }, loadBegan);
    expect(cache.get('k')).toBeUndefined();

    const afterwards = cache.generation();
    cache.set('k', { id: 'key-1' }, afterwards);
    expect(cache.get('k')).toEqual({ id: 'key-1' });
  });

  it('drops a value whose load began before the cache was cleared', () => {
    const cache = createCache<string>(createTestClock(), options);
    const loadBegan = cache.generation();
    cache.clear();
    cache.set('k', 'v', loadBegan);
    expect(cache.get('k')).toBeUndefined();
  });

  it('starts over when full instead of growing', () => {
    const cache = createCache<number>(createTestClock(), options);
    for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) cache.set(key, i, cache.generation());
    expect([cache.get('a'), cache.get('b'), cache.get('c'), cache.get('d')]).toEqual([undefined, undefined, undefined, 3]);
  });
});

import type { Clock } from './clock.js';

/**
 * A small in-process cache with a time limit, for rows read on every request (secret keys, environments).
 * Writers evict entries explicitly; the time limit only bounds how long a missed eviction could matter.
 */
export function createCache<V>(clock: Clock, options: { ttlMs: number; maxEntries: number }) {
  const entries = new Map<string, { value: V; expiresAt: number }>();
  // Bumped by every eviction: a value loaded before an eviction must not be stored after it.
  let generation = 0;
  return {
    /** The current generation; pass it back to set() so a load that raced an eviction is dropped. */
    generation: () => generation,
    get(key: string): V | undefined {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= clock.now().getTime()) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },
    set(key: string, value: V, loadedAt: number) {
      if (loadedAt !== generation) return;
      // A full cache starts over rather than tracking recency: misses only cost a query.
      if (entries.size >= options.maxEntries) entries.clear();
      entries.set(key, { value, expiresAt: clock.now().getTime() + options.ttlMs });
    },
    deleteWhere(matches: (value: V) => boolean) {
      generation++;
      for (const [key, entry] of entries) if (matches(entry.value)) entries.delete(key);
    },
    clear: () => {
      generation++;
      entries.clear();
    },
  };
}

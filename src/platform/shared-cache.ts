import { createCache } from './cache.js';
import type { Clock } from './clock.js';
import { inTransaction, type Db } from './db/database.js';
import { publishInvalidation, type Notifications } from './db/notifications.js';

export interface SharedCacheOptions<V> {
  db: Db;
  clock: Clock;
  notifications: Notifications;
  /** Names the cache in the invalidation messages (`<name>:<id>`); unique per cache. */
  name: string;
  /** The id a change is announced under; every cached value with that id is evicted. */
  idOf(value: V): string;
  ttlMs: number;
  maxEntries: number;
  /** At most how long a change waits to hear its own announcement (ECHO_WAIT_MS). */
  echoWaitMs?: number;
}

/** At most how long a change waits for its own announcement: one that late was lost, and the listener's reconnect clears the cache. */
export const ECHO_WAIT_MS = 1000;

/**
 * A cache of rows read on every request (secret keys, environments, later signing keys and role sets),
 * right across processes: a writer announces its change inside the transaction that makes it, every
 * process hears it at commit (LISTEN/NOTIFY) and evicts its copies. The time limit only bounds how long
 * a missed message could matter.
 */
export function createSharedCache<V>({ db, clock, notifications, name, idOf, ttlMs, maxEntries, echoWaitMs = ECHO_WAIT_MS }: SharedCacheOptions<V>) {
  const cache = createCache<V>(clock, { ttlMs, maxEntries });
  const evict = (id: string) => cache.deleteWhere((value) => idOf(value) === id);
  const awaiting = new Map<string, Set<() => void>>();
  notifications.subscribe((payload) => {
    const separator = payload.indexOf(':');
    if (payload.slice(0, separator) !== name) return;
    const id = payload.slice(separator + 1);
    evict(id);
    awaiting.get(id)?.forEach((heard) => heard());
  }, () => cache.clear());

  /** Settles when this process hears an announcement of `id`, or after `echoWaitMs` (a lost message never holds a write up). */
  function echoOf(id: string) {
    const waiters = awaiting.get(id) ?? new Set<() => void>();
    awaiting.set(id, waiters);
    let heard!: () => void;
    const settled = new Promise<void>((resolve) => { heard = resolve; });
    waiters.add(heard);
    const timer = setTimeout(heard, echoWaitMs);
    const stop = () => {
      clearTimeout(timer);
      waiters.delete(heard);
      if (waiters.size === 0) awaiting.delete(id);
    };
    return { settled, stop };
  }

  return {
    /**
     * Serves from the cache only while this process is sure to hear about changes, and stores a loaded
     * value only if no eviction arrived while it was loading (it may predate the change evicted).
     */
    async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
      const hit = notifications.listening ? cache.get(key) : undefined;
      if (hit) return hit;
      const generation = cache.generation();
      const value = await load();
      if (value && notifications.listening) cache.set(key, value, generation);
      return value;
    },
    /**
     * Announces and writes a change of the value with this id in one transaction (a notification is
     * delivered only at commit, so a rolled-back change announces nothing), then evicts this process's copy.
     * With other processes listening, it returns once this process has heard its own announcement too:
     * PostgreSQL signals every listener at the same commit, so by the time the caller is answered the other
     * processes have been told as well, and a request that follows the answer does not race their eviction.
     */
    async change<T>(id: string, write: (trx: Db) => Promise<T>): Promise<T> {
      const echo = notifications.acrossProcesses && notifications.listening ? echoOf(id) : undefined;
      try {
        const result = await inTransaction(db, async (trx) => {
          await publishInvalidation(trx, `${name}:${id}`);
          return write(trx);
        });
        evict(id);
        await echo?.settled;
        return result;
      } finally {
        echo?.stop();
      }
    },
  };
}

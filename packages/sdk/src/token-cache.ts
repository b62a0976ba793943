import { decodeJwt } from 'jose';

/**
 * The first-party cookie that carries the session JWT to the app's own server (cookie mode). Never
 * `__session`: that is Gatehouse's opaque session cookie, and an app served on the frontend host would
 * overwrite it.
 */
export const SESSION_JWT_COOKIE = '__gatehouse_jwt';

/** A session JWT and the moment it expires, on the cache's clock. */
export interface CachedToken { token: string; expiresAtMs: number; lifetimeMs: number }

export interface SessionTokenCacheOptions {
  /** Mints a session JWT (the client plane's `createSessionToken`); null when there is no session. */
  mint: () => Promise<{ token: string } | null>;
  /** The one clock the cache reads (default `Date.now`). */
  now?: () => number;
  /** A token is refreshed this long before it expires (default 15 s, at most half its lifetime). */
  refreshBeforeSeconds?: number;
  /** Told of every new token, and of null when there is none (no session, or `clear()`). */
  onChange?: (token: CachedToken | null) => void;
}

/**
 * The token's lifetime measured on its own claims (`exp - iat`, both from Gatehouse's clock) and counted
 * from when the request left, on the local clock: a browser whose clock is off still refreshes in time.
 */
function cached(token: string, requestedAtMs: number): CachedToken {
  const { exp, iat } = decodeJwt(token);
  const lifetimeMs = Math.max(0, ((exp ?? 0) - (iat ?? exp ?? 0)) * 1000);
  return { token, expiresAtMs: requestedAtMs + lifetimeMs, lifetimeMs };
}

/**
 * Caches the session JWT: `getToken()` answers the cached one while it is fresh, else mints a new one;
 * concurrent callers share one request. What a request started before `clear()` answers is dropped.
 */
export function createSessionTokenCache(options: SessionTokenCacheOptions) {
  const now = options.now ?? Date.now;
  const refreshBeforeMs = (options.refreshBeforeSeconds ?? 15) * 1000;
  let current: CachedToken | null = null;
  let inFlight: Promise<string | null> | null = null;
  let generation = 0;

  const marginMs = (token: CachedToken) => Math.min(refreshBeforeMs, token.lifetimeMs / 2);
  const isFresh = (token: CachedToken) => now() < token.expiresAtMs - marginMs(token);

  function set(token: CachedToken | null) {
    current = token;
    options.onChange?.(token);
  }

  function mint(): Promise<string | null> {
    const started = generation;
    const requestedAtMs = now();
    const request = options.mint().then((answer) => {
      if (started !== generation) return current?.token ?? null;
      set(answer ? cached(answer.token, requestedAtMs) : null);
      return answer?.token ?? null;
    }).finally(() => {
      if (inFlight === request) inFlight = null;
    });
    inFlight = request;
    return request;
  }

  return {
    /** The session JWT, or null when signed out. `skipCache` mints a new one (after the active organization changed). */
    getToken({ skipCache = false }: { skipCache?: boolean } = {}): Promise<string | null> {
      if (!skipCache && current && isFresh(current)) return Promise.resolve(current.token);
      return inFlight ?? mint();
    },
    /** The cached token without minting, fresh or not. */
    peek: (): CachedToken | null => current,
    /** Milliseconds until the cached token is due for a refresh (0 when it is already), null without one. */
    refreshInMs: (): number | null => (current ? Math.max(0, current.expiresAtMs - marginMs(current) - now()) : null),
    /**
     * Forgets the token (sign-out, another session): requests still on their way are ignored. `untilNextAnswer`
     * tells no one: a reload replaces the token at once, and a cookie cleared meanwhile would sign the app's
     * server out of a page rendered in between.
     */
    clear({ untilNextAnswer = false }: { untilNextAnswer?: boolean } = {}) {
      generation++;
      inFlight = null;
      if (untilNextAnswer) current = null;
      else set(null);
    },
  };
}
export type SessionTokenCache = ReturnType<typeof createSessionTokenCache>;

import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createSessionTokenCache, type CachedToken } from '@gatehouse/sdk';
import { createTestClock } from '../../src/platform/clock.js';

const KEY = new TextEncoder().encode('a key the cache never checks: it only reads the claims');

/** A JWT issued at `iat` (seconds, Gatehouse's clock) for `lifetime` seconds; the cache reads, never verifies, it. */
const jwt = (iat: number, lifetime = 60, sid = 'sess') =>
  new SignJWT({ sid }).setProtectedHeader({ alg: 'HS256' }).setSubject('user').setIssuedAt(iat).setExpirationTime(iat + lifetime).sign(KEY);

/** A mint whose answers the test hands out one by one, counting the requests. */
function controlledMint() {
  const pending: ((answer: { token: string } | null) => void)[] = [];
  return {
    mint: () => new Promise<{ token: string } | null>((resolve) => { pending.push(resolve); }),
    get requests() { return pending.length; },
    answer: async (index: number, token: string | null) => {
      pending[index]!(token === null ? null : { token });
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

function setup(options: { refreshBeforeSeconds?: number } = {}) {
  const clock = createTestClock('2030-01-01T00:00:00.000Z');
  const mint = controlledMint();
  const changes: (CachedToken | null)[] = [];
  const cache = createSessionTokenCache({ mint: mint.mint, now: () => clock.now().getTime(), onChange: (token) => changes.push(token), ...options });
  return { clock, mint, cache, changes };
}

describe('the session JWT cache of getToken()', () => {
  it('answers the cached token while it is fresh, without another request', async () => {
    const { mint, cache, clock } = setup();
    const first = cache.getToken();
    const token = await jwt(1000);
    await mint.answer(0, token);
    expect(await first).toBe(token);
    clock.advance(44_000);
    expect(await cache.getToken()).toBe(token);
    expect(mint.requests).toBe(1);
  });

  it('refreshes a token 15 s before it expires, and answers the new one', async () => {
    const { mint, cache, clock } = setup();
    const first = cache.getToken();
    await mint.answer(0, await jwt(1000));
    await first;
    clock.advance(45_000);
    const second = cache.getToken();
    expect(mint.requests).toBe(2);
    const renewed = await jwt(1045, 60, 'renewed');
    await mint.answer(1, renewed);
    expect(await second).toBe(renewed);
  });

  it('shares one request among concurrent callers', async () => {
    const { mint, cache } = setup();
    const callers = [cache.getToken(), cache.getToken(), cache.getToken()];
    expect(mint.requests).toBe(1);
    const token = await jwt(1000);
    await mint.answer(0, token);
    expect(await Promise.all(callers)).toEqual([token, token, token]);
  });

  it('counts the lifetime from exp - iat on the local clock, so a server clock an hour ahead changes nothing', async () => {
    const { mint, cache, clock } = setup();
    const pending = cache.getToken();
    const hourAhead = Date.parse('2030-01-01T01:00:00.000Z') / 1000;
    await mint.answer(0, await jwt(hourAhead, 60));
    await pending;
    expect(cache.peek()).toMatchObject({ expiresAtMs: Date.parse('2030-01-01T00:01:00.000Z'), lifetimeMs: 60_000 });
    expect(cache.refreshInMs()).toBe(45_000);
    clock.advance(30_000);
    await cache.getToken();
    expect(mint.requests).toBe(1);
  });

  it('counts the lifetime from when the request left, not from when it answered', async () => {
    const { mint, cache, clock } = setup();
    const pending = cache.getToken();
    clock.advance(10_000);
    await mint.answer(0, await jwt(1000, 60));
    await pending;
    expect(cache.refreshInMs()).toBe(35_000);
  });

  it('refreshes a short-lived token at half its lifetime when 15 s would be most of it', async () => {
    const { mint, cache, clock } = setup();
    const pending = cache.getToken();
    await mint.answer(0, await jwt(1000, 20));
    await pending;
    expect(cache.refreshInMs()).toBe(10_000);
    clock.advance(10_000);
    void cache.getToken();
    expect(mint.requests).toBe(2);
  });

  it('mints a new token on skipCache, for claims that changed', async () => {
    const { mint, cache } = setup();
    const first = cache.getToken();
    await mint.answer(0, await jwt(1000));
    await first;
    void cache.getToken({ skipCache: true });
    expect(mint.requests).toBe(2);
  });

  it('answers null without a session and asks again next time, so a later sign-in is seen', async () => {
    const { mint, cache, changes } = setup();
    const first = cache.getToken();
    await mint.answer(0, null);
    expect(await first).toBeNull();
    expect(changes).toEqual([null]);
    void cache.getToken();
    expect(mint.requests).toBe(2);
  });

  it('keeps no failure: the next call asks again', async () => {
    const clock = createTestClock();
    let calls = 0;
    const cache = createSessionTokenCache({ now: () => clock.now().getTime(), mint: async () => { calls++; throw new Error('down'); } });
    await expect(cache.getToken()).rejects.toThrow('down');
    await expect(cache.getToken()).rejects.toThrow('down');
    expect(calls).toBe(2);
  });

  it('drops what a request started before clear() answers, so a signed-out app never gets the old session back', async () => {
    const { mint, cache, changes } = setup();
    const before = cache.getToken();
    cache.clear();
    await mint.answer(0, await jwt(1000));
    expect(await before).toBeNull();
    expect(cache.peek()).toBeNull();
    expect(changes).toEqual([null]);
    void cache.getToken();
    expect(mint.requests).toBe(2);
  });

  it('tells onChange of each new token with its expiry', async () => {
    const { mint, cache, changes } = setup();
    const pending = cache.getToken();
    const token = await jwt(1000);
    await mint.answer(0, token);
    await pending;
    expect(changes).toEqual([{ token, expiresAtMs: Date.parse('2030-01-01T00:01:00.000Z'), lifetimeMs: 60_000 }]);
  });
});

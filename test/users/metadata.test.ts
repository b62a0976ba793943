import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { createUser, expectProblem, MISSING_ID, objectOfSize, storedUser } from './support.js';

describe('PATCH /api/server/v1/users/:userId/metadata', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const bagsOf = async (env: TestEnv, userId: string) => {
    const row = await storedUser(t, env, userId);
    return { publicMetadata: row.public_metadata, privateMetadata: row.private_metadata, unsafeMetadata: row.unsafe_metadata };
  };

  it('deep-merges nested objects, replaces arrays and removes keys set to null at any depth', async () => {
    const env = await t.given.environment();
    const user = await createUser(t, env, {
      email: 'ada@example.com',
      publicMetadata: { plan: 'free', profile: { theme: 'dark', langs: ['en', 'da'], address: { city: 'Aarhus', zip: '8000' } } },
    });

    const res = await t.server(env).patch(`/users/${user.id}/metadata`, {
      publicMetadata: { plan: null, added: true, profile: { langs: ['fr'], address: { zip: null, street: 'Vestergade' } } },
    });

    const expected = { added: true, profile: { theme: 'dark', langs: ['fr'], address: { city: 'Aarhus', street: 'Vestergade' } } };
    expect(res.statusCode).toBe(200);
    expect(res.json().publicMetadata).toEqual(expected);
    expect((await bagsOf(env, user.id)).publicMetadata).toEqual(expected);
  });

  it('keeps an object emptied by null removals as {}', async () => {
    const env = await t.given.environment();
    const user = await createUser(t, env, { email: 'ada@example.com', privateMetadata: { billing: { customer: 'cus_1' }, other: 1 } });

    const res = await t.server(env).patch(`/users/${user.id}/metadata`, { privateMetadata: { billing: { customer: null } } });

    expect(res.statusCode).toBe(200);
    expect(res.json().privateMetadata).toEqual({ billing: {}, other: 1 });
    expect((await bagsOf(env, user.id)).privateMetadata).toEqual({ billing: {}, other: 1 });
  });

  it('leaves an omitted bag unchanged and answers with the whole updated user', async () => {
    const env = await t.given.environment();
    const user = await createUser(t, env, {
      email: 'ada@example.com', publicMetadata: { a: 1 }, privateMetadata: { b: 2 }, unsafeMetadata: { c: 3 },
    });
    t.clock.advance(5000);

    const res = await t.server(env).patch(`/users/${user.id}/metadata`, { unsafeMetadata: { d: 4 } });

    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ...user, publicMetadata: { a: 1 }, privateMetadata: { b: 2 }, unsafeMetadata: { c: 3, d: 4 }, updatedAt: t.clock.now().toISOString(),
    });
    expect(await bagsOf(env, user.id)).toEqual({ publicMetadata: { a: 1 }, privateMetadata: { b: 2 }, unsafeMetadata: { c: 3, d: 4 } });
  });

  it('treats a patch of {} or of an empty bag as no change to any bag', async () => {
    const env = await t.given.environment();
    const user = await createUser(t, env, { email: 'ada@example.com', publicMetadata: { a: 1 } });
    expect((await t.server(env).patch(`/users/${user.id}/metadata`, {})).json().publicMetadata).toEqual({ a: 1 });
    expect((await t.server(env).patch(`/users/${user.id}/metadata`, { publicMetadata: {} })).json().publicMetadata).toEqual({ a: 1 });
    expect((await bagsOf(env, user.id)).publicMetadata).toEqual({ a: 1 });
  });

  it('keeps JSON value types as given: numbers, strings, booleans and nested arrays of objects', async () => {
    const env = await t.given.environment();
    const user = await createUser(t, env, { email: 'ada@example.com' });
    const value = { n: 1, s: '1', f: 1.5, yes: false, list: [{ id: 1 }, { id: '2' }], unicode: 'Ærø 😀' };
    const res = await t.server(env).patch(`/users/${user.id}/metadata`, { publicMetadata: value });
    expect(res.json().publicMetadata).toEqual(value);
    expect((await t.server(env).get(`/users/${user.id}`)).json().publicMetadata).toEqual(value);
  });

  describe('the 8 KB budget', () => {
    it('accepts a merged result of exactly 8192 bytes across the three bags', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com', privateMetadata: objectOfSize(4000) });
      // public 4190 + private 4000 + unsafe {} (2) = 8192.
      const res = await t.server(env).patch(`/users/${user.id}/metadata`, { publicMetadata: objectOfSize(4190) });
      expect(res.statusCode).toBe(200);
      expect((await bagsOf(env, user.id)).publicMetadata).toEqual(objectOfSize(4190));
    });

    it('refuses a merge whose result across the three bags is 8193 bytes with 400 metadata_too_large, storing nothing', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, {
        email: 'ada@example.com', publicMetadata: { keep: 'me' }, privateMetadata: objectOfSize(4000),
      });
      const before = await storedUser(t, env, user.id);
      t.clock.advance(1000);

      // The patch alone is small per bag; the merged bags are 4191 + 4000 + 2 = 8193 bytes.
      const res = await t.server(env).patch(`/users/${user.id}/metadata`, {
        publicMetadata: { keep: null, k: 'x'.repeat(4191 - '{"k":""}'.length) },
      });

      expect(expectProblem(res, 400, 'metadata_too_large').properties).toEqual({ code: 'metadata_too_large', bytes: 8193, limit: 8192 });
      expect(await storedUser(t, env, user.id)).toEqual(before);
    });

    it('measures the merged result, so a patch that removes a large key can add another', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com', unsafeMetadata: { big: 'x'.repeat(8000) } });

      const res = await t.server(env).patch(`/users/${user.id}/metadata`, {
        unsafeMetadata: { big: null }, publicMetadata: { other: 'y'.repeat(8000) },
      });

      expect(res.statusCode).toBe(200);
      expect(await bagsOf(env, user.id)).toEqual({ publicMetadata: { other: 'y'.repeat(8000) }, privateMetadata: {}, unsafeMetadata: {} });
    });

    it('refuses a small patch when the bags it leaves alone already fill the budget', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'ada@example.com', privateMetadata: objectOfSize(8188) });
      const res = await t.server(env).patch(`/users/${user.id}/metadata`, { unsafeMetadata: { a: 1 } });
      expectProblem(res, 400, 'metadata_too_large');
      expect((await bagsOf(env, user.id)).unsafeMetadata).toEqual({});
    });
  });

  it("answers 404 user_not_found for another environment's user and a missing id, leaving their metadata alone", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const foreign = await createUser(t, theirs, { email: 'ada@example.com', publicMetadata: { plan: 'pro' } });

    expectProblem(await t.server(mine).patch(`/users/${foreign.id}/metadata`, { publicMetadata: { plan: 'free' } }), 404, 'user_not_found');
    expectProblem(await t.server(mine).patch(`/users/${MISSING_ID}/metadata`, { publicMetadata: { plan: 'free' } }), 404, 'user_not_found');

    expect((await bagsOf(theirs, foreign.id)).publicMetadata).toEqual({ plan: 'pro' });
  });

  it.each([
    ['a bag that is an array', { publicMetadata: [1, 2] }],
    ['a bag that is null', { privateMetadata: null }],
    ['an unknown field', { metadata: { a: 1 } }],
    ['a profile field', { firstName: 'Grace' }],
  ])('answers 400 invalid_request for %s and changes nothing', async (_case, body) => {
    const env = await t.given.environment();
    const user = await createUser(t, env, { email: 'ada@example.com', publicMetadata: { a: 1 }, privateMetadata: { b: 2 } });
    const before = await storedUser(t, env, user.id);
    expectProblem(await t.server(env).patch(`/users/${user.id}/metadata`, body), 400, 'invalid_request');
    expect(await storedUser(t, env, user.id)).toEqual(before);
  });

  it('answers 400 invalid_request for a __proto__ key and changes nothing', async () => {
    const env = await t.given.environment();
    const user = await createUser(t, env, { email: 'ada@example.com' });
    const res = await t.server(env).patch(`/users/${user.id}/metadata`, '{"publicMetadata":{"__proto__":{"admin":true}}}', {
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(res, 400, 'invalid_request');
    expect((await bagsOf(env, user.id)).publicMetadata).toEqual({});
  });

  it('loses no key when ten patches of different keys arrive at once', async () => {
    const env = await t.given.environment();
    const user = await createUser(t, env, { email: 'ada@example.com', publicMetadata: { existing: true } });
    const keys = Array.from({ length: 10 }, (_, i) => `key${i}`);

    const responses = await Promise.all(keys.map((key, i) =>
      t.server(env).patch(`/users/${user.id}/metadata`, { publicMetadata: { [key]: i }, privateMetadata: { nested: { [key]: i } } })));

    for (const res of responses) expect(res.statusCode).toBe(200);
    const bags = await bagsOf(env, user.id);
    expect(bags.publicMetadata).toEqual({ existing: true, ...Object.fromEntries(keys.map((key, i) => [key, i])) });
    expect(bags.privateMetadata).toEqual({ nested: Object.fromEntries(keys.map((key, i) => [key, i])) });
  });
});

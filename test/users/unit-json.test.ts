import { describe, expect, it } from 'vitest';
import { deepMerge, jsonByteSize } from '../../src/platform/json.js';
import { METADATA_BUDGET_BYTES, metadataSize } from '../../src/platform/metadata.js';

describe('deepMerge', () => {
  it('merges nested objects recursively and keeps keys the patch does not mention', () => {
    const target = { profile: { theme: 'dark', address: { city: 'Aarhus', zip: '8000' } }, plan: 'free' };
    expect(deepMerge(target, { profile: { address: { city: 'Odense' } } })).toEqual({
      profile: { theme: 'dark', address: { city: 'Odense', zip: '8000' } }, plan: 'free',
    });
  });

  it('replaces arrays whole instead of merging or concatenating them', () => {
    expect(deepMerge({ tags: ['a', 'b', 'c'] }, { tags: ['z'] })).toEqual({ tags: ['z'] });
    expect(deepMerge({ tags: ['a'] }, { tags: [] })).toEqual({ tags: [] });
  });

  it('replaces a primitive with an object and an object with a primitive', () => {
    expect(deepMerge({ a: 1 }, { a: { b: 2 } })).toEqual({ a: { b: 2 } });
    expect(deepMerge({ a: { b: 2 } }, { a: 'flat' })).toEqual({ a: 'flat' });
    expect(deepMerge({ a: ['x'] }, { a: { b: 2 } })).toEqual({ a: { b: 2 } });
  });

  it('removes a key set to null at the top level and at any depth', () => {
    const target = { keep: 1, drop: 2, nested: { deeper: { drop: true, keep: false } } };
    expect(deepMerge(target, { drop: null, nested: { deeper: { drop: null } } })).toEqual({
      keep: 1, nested: { deeper: { keep: false } },
    });
  });

  it('keeps an object emptied by null removals as {}', () => {
    expect(deepMerge({ a: { b: 1 } }, { a: { b: null } })).toEqual({ a: {} });
  });

  it('ignores null for a key that does not exist, and drops nulls inside a newly added object', () => {
    expect(deepMerge({ a: 1 }, { missing: null })).toEqual({ a: 1 });
    expect(deepMerge({}, { fresh: { x: null, y: 1 } })).toEqual({ fresh: { y: 1 } });
  });

  it('keeps falsy values that are not null: false, 0 and the empty string', () => {
    expect(deepMerge({ a: true, b: 1, c: 'x' }, { a: false, b: 0, c: '' })).toEqual({ a: false, b: 0, c: '' });
  });

  it('does not change its inputs', () => {
    const target = { a: { b: 1, c: [1, 2] } };
    const patch = { a: { b: null, d: 2 } };
    const targetCopy = structuredClone(target);
    const patchCopy = structuredClone(patch);
    deepMerge(target, patch);
    expect(target).toEqual(targetCopy);
    expect(patch).toEqual(patchCopy);
  });

  it('treats a __proto__ key as plain data and never changes the prototype of the result', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}, "nested": {"__proto__": {"x": 1}}}');
    const merged = deepMerge({}, patch);
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(merged.nested)).toBe(Object.prototype);
    expect((merged as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.parse(JSON.stringify(merged))).toEqual(patch);
  });
});

describe('metadataSize', () => {
  it('counts the compact JSON of every bag, so three empty bags take 6 bytes', () => {
    expect(metadataSize({}, {}, {})).toBe(6);
    expect(metadataSize({ a: 1 }, {}, {})).toBe('{"a":1}'.length + 4);
  });

  it('counts a missing or null bag like an empty one', () => {
    expect(metadataSize(undefined, null, {})).toBe(6);
  });

  it('counts UTF-8 bytes, not characters', () => {
    expect(jsonByteSize({ k: 'é' })).toBe(10); // {"k":"é"}: 9 characters, é is 2 bytes
    expect(jsonByteSize({ k: '😀' })).toBe(12); // an astral character is 4 bytes
    expect(metadataSize({ k: 'é' }, { k: 'é' }, {})).toBe(22);
  });

  it('does not count whitespace, however the object was written', () => {
    expect(metadataSize(JSON.parse('{ "a" : [ 1 , 2 ] ,\n "b" : { } }'))).toBe('{"a":[1,2],"b":{}}'.length);
  });

  it('sets the budget at 8192 bytes', () => {
    expect(METADATA_BUDGET_BYTES).toBe(8192);
  });
});

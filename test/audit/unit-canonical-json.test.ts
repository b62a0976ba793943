import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/platform/json.js';

describe('canonicalJson (what an idempotent append compares)', () => {
  it('writes object keys in sorted order at every depth, so key order does not matter', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    expect(canonicalJson({ b: 1, a: 2 })).toBe(canonicalJson({ a: 2, b: 1 }));
  });

  it('keeps array order, types and string escapes: those are different requests', () => {
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: '1' }));
    expect(canonicalJson({ 'quote"d': 'line\nbreak' })).toBe('{"quote\\"d":"line\\nbreak"}');
  });

  it('treats a __proto__ key from parsed JSON as data', () => {
    expect(canonicalJson(JSON.parse('{"__proto__":{"x":1},"a":1}'))).toBe('{"__proto__":{"x":1},"a":1}');
  });
});

export type JsonObject = Record<string, unknown>;

const isPlainObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The object's own value for a key; never an inherited one such as `__proto__` or `constructor`. */
const ownValue = (obj: JsonObject, key: string) => (Object.hasOwn(obj, key) ? obj[key] : undefined);

/**
 * Sets an own, enumerable key. Plain assignment of `__proto__` would swap the object's prototype instead
 * of storing data, and parsed JSON can carry that key.
 */
const setOwn = (obj: JsonObject, key: string, value: unknown) =>
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });

/**
 * Deep merge as Clerk does it: objects merge recursively, any other value (arrays included) replaces,
 * and null removes the key at any depth. An object emptied that way stays as {}.
 */
export function deepMerge(target: JsonObject, patch: JsonObject): JsonObject {
  const result: JsonObject = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (isPlainObject(value)) {
      const current = ownValue(result, key);
      setOwn(result, key, deepMerge(isPlainObject(current) ? current : {}, value));
    } else setOwn(result, key, value);
  }
  return result;
}

/** UTF-8 byte length of the compact JSON form. */
export const jsonByteSize = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * JSON with object keys in sorted order at every depth, so two bodies that differ only in key order
 * (`{"a":1,"b":2}` and `{"b":2,"a":1}`) have the same text; arrays keep their order.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    return `{${Object.keys(value).filter((key) => value[key] !== undefined).sort().map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

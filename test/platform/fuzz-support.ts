import fc from 'fast-check';
import { PASSWORD } from '../helpers/given.js';

/**
 * What the fuzzer needs of JSON Schema: the subset the route schemas use (objects, records, strings with
 * formats and patterns, integers, numbers, booleans, arrays, enum, const, anyOf). fast-check has no
 * JSON-Schema arbitrary, so this one is written for that subset and fails loudly on anything else.
 */
export interface Schema {
  type?: string; format?: string; pattern?: string; enum?: unknown[]; const?: unknown; anyOf?: Schema[];
  minLength?: number; maxLength?: number; minimum?: number; maximum?: number;
  properties?: Record<string, Schema>; required?: string[]; additionalProperties?: boolean | Schema;
  minProperties?: number; items?: Schema; maxItems?: number; uniqueItems?: boolean;
}

/** What the generator takes from the test: its clock, so that timestamps fall in the window the service accepts. */
export interface Hints { now: () => Date }

const word = fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/);
const email = word.map((w) => `${w}@example.com`);

function stringOf(schema: Schema, hints: Hints, name: string): fc.Arbitrary<string> {
  if (name === 'password' || name === 'newPassword') return word.map((w) => `${PASSWORD} ${w}`);
  if (name === 'ipAddress') return fc.ipV4();
  switch (schema.format) {
    case 'email': return email;
    case 'uuid': return fc.uuid({ version: 7 });
    case 'uri': return word.map((w) => `https://${w}.example.com/welcome`);
    case 'date-time': return fc.integer({ min: 1_000, max: 86_400_000 }).map((ago) => new Date(hints.now().getTime() - ago).toISOString());
    case undefined: break;
    default: throw new Error(`fuzz: unsupported string format ${schema.format}`);
  }
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 24, 24);
  if (schema.pattern) {
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= (schema.maxLength ?? Infinity));
  }
  return fc.string({ minLength: min, maxLength: Math.max(min, max) });
}

function objectOf(schema: Schema, hints: Hints): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  if (Object.keys(properties).length === 0) {
    // A free-form bag (metadata, partial settings): small JSON, non-empty when the schema asks for it.
    return fc.dictionary(word, fc.jsonValue({ maxDepth: 2 }), { minKeys: schema.minProperties ?? 0, maxKeys: 4 });
  }
  const model = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, arbitraryOf(property, hints, name)]));
  return fc.record(model, { requiredKeys: schema.required ?? [] });
}

/** A generator of values that the schema accepts (as far as the subset allows to know). */
export function arbitraryOf(schema: Schema, hints: Hints, name = ''): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((branch) => arbitraryOf(branch, hints, name)));
  switch (schema.type) {
    case 'object': return objectOf(schema, hints);
    case 'string': return stringOf(schema, hints, name);
    case 'boolean': return fc.boolean();
    case 'integer':
      return fc.integer({ min: Math.max(schema.minimum ?? -1000, -1000), max: Math.min(schema.maximum ?? 1000, 1000) });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true });
    case 'array': {
      const items = arbitraryOf(schema.items ?? {}, hints, name);
      const constraints = { maxLength: Math.min(schema.maxItems ?? 3, 3) };
      return schema.uniqueItems ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) }) : fc.array(items, constraints);
    }
    case undefined: return fc.jsonValue({ maxDepth: 2 });
    default: throw new Error(`fuzz: unsupported schema type ${schema.type}`);
  }
}

/**
 * JSON sent as written. Nesting as deep as a 64 KiB body allows is deeper than JSON.stringify (or any
 * recursive walk) can take, so it travels as text.
 */
export class RawJson {
  constructor(readonly text: string) {}
}
const deepArray = new RawJson('['.repeat(20_000) + ']'.repeat(20_000));
const deepObject = new RawJson('{"a":'.repeat(6_000) + '1' + '}'.repeat(6_000));

const PLACEHOLDER = '\u0001raw json\u0001';

/** The JSON text of a body that may hold one RawJson. */
export function jsonText(body: unknown): string {
  let raw: RawJson | undefined;
  const text = JSON.stringify(body, (_key, value: unknown) => {
    if (!(value instanceof RawJson)) return value;
    raw = value;
    return PLACEHOLDER;
  });
  return raw ? text.replace(JSON.stringify(PLACEHOLDER), raw.text) : text;
}

/** Text PostgreSQL cannot store, alone and inside other text. */
const unstorableText = fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\udbff\u0000', 'ok\ud83d');
/** Numbers beyond every column's range, negative, fractional. */
const outOfRange = fc.constantFrom(1e20, -1e20, 2 ** 31, -(2 ** 31) - 1, 2 ** 63, Number.MAX_SAFE_INTEGER + 2, -1, 0, 1.5, 1e308, -0);

/** The one value a mutation puts in place of a valid one. */
export const mutantValue: fc.Arbitrary<unknown> = fc.oneof(
  unstorableText,
  outOfRange,
  fc.constantFrom('99999999999999999999', '-1', '1e400', 'NaN', ''),
  // Long text, within the body limit.
  fc.constantFrom('x'.repeat(300), 'é'.repeat(3_000), 'a@'.repeat(5_000), '%'.repeat(10_000)),
  // Wrong types.
  fc.constantFrom<unknown>(true, null, [], {}, ['a', 'b'], { a: 1 }, 'text'),
  // Deep nesting.
  fc.constantFrom(deepArray, deepObject),
  // Any other string.
  fc.string({ unit: 'binary', maxLength: 40 }),
);

/** Names for a key added where none is expected. */
export const unknownKey = fc.constantFrom('unknown', '__proto__', 'constructor', 'toString', 'a\u0000', '\ud800', '', 'x'.repeat(300));

/**
 * A replacement carries any mutant and, for when `sameType` holds, one of the same type as the value it
 * replaces (a number for a number, text for text): the edges of a type are where its column breaks.
 */
export type Mutation =
  | { kind: 'none' }
  | { kind: 'replace'; at: number; value: unknown; sameType: boolean; number: unknown; text: unknown }
  | { kind: 'addKey'; at: number; key: string; value: unknown };

/** Mostly one value replaced or one key added; now and then the valid request as generated, a control that reaches the database. */
export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), value: mutantValue, sameType: fc.boolean(), number: outOfRange, text: unstorableText }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('addKey' as const), at: fc.nat(), key: unknownKey, value: mutantValue }) },
);

type Node = { parent: Record<string, unknown> | unknown[]; key: string | number; value: unknown };

/** Every value of a request part below its root, containers included, in document order. */
function nodesOf(root: Record<string, unknown>): Node[] {
  const nodes: Node[] = [];
  const visit = (parent: Record<string, unknown> | unknown[]) => {
    for (const [key, value] of Object.entries(parent)) {
      const node = { parent, key: Array.isArray(parent) ? Number(key) : key, value };
      nodes.push(node);
      if (typeof value === 'object' && value !== null) visit(value as Record<string, unknown>);
    }
  };
  visit(root);
  return nodes;
}

/** Sets an own key, even `__proto__`, which plain assignment would turn into a prototype swap. */
const setOwn = (target: object, key: string | number, value: unknown) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });

/**
 * Applies a mutation to a request given as `{ params, query, headers, body }` (a deep copy is changed).
 * Replacing picks any value, containers included; adding a key picks any object, the parts themselves too.
 */
export function mutate(request: Record<string, unknown>, m: Mutation): Record<string, unknown> {
  const copy = structuredClone(request);
  if (m.kind === 'none') return copy;
  if (m.kind === 'replace') {
    const nodes = nodesOf(copy).filter((n) => n.parent !== copy || n.key === 'body');
    if (nodes.length === 0) return copy;
    const node = nodes[m.at % nodes.length];
    const sameType = !m.sameType ? undefined : typeof node.value === 'number' ? m.number : typeof node.value === 'string' ? m.text : undefined;
    setOwn(node.parent, node.key, sameType ?? m.value);
  } else {
    const objects = [copy.params, copy.query, copy.body, ...nodesOf(copy).map((n) => n.value)]
      .filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && v !== copy.headers);
    if (objects.length > 0) setOwn(objects[m.at % objects.length], m.key, m.value);
  }
  return copy;
}

/** Percent-encodes text for a URL, lone surrogates too (as the bytes of their code point), which encodeURIComponent refuses. */
export function encodeComponent(text: string): string {
  return text.replace(/\p{Cs}|[^\p{Cs}]+/gu, (part) => {
    if (!/^\p{Cs}$/u.test(part)) return encodeURIComponent(part);
    const unit = part.charCodeAt(0);
    return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
  });
}

/** A query or path value as a client would put it in a URL: arrays repeat, other non-text is JSON. */
export const asText = (value: unknown): string => (typeof value === 'string' ? value : jsonText(value) ?? String(value));

/** A header value a client can send at all (the HTTP parser refuses control characters and non-Latin-1 text). */
export const asHeader = (value: unknown): string => asText(value).replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');

/**
 * PostgreSQL stores neither the NUL character in text or jsonb nor a lone UTF-16 surrogate in jsonb, and
 * a lone surrogate bound as text is silently replaced by U+FFFD. Such strings are refused at the edge, so a
 * request never gets as far as a driver error (a 500) or a silently changed value.
 */

// With the `u` flag a well-formed surrogate pair is one code point, so \p{Cs} matches only lone surrogates.
const UNSTORABLE = /[\0\p{Cs}]/u;
const UNSTORABLE_ALL = /[\0\p{Cs}]/gu;

/** What a validation error carries; shaped like Ajv's so the one error handler renders it the same way. */
export interface UnstorableTextError { instancePath: string; keyword: 'storableText'; params: Record<string, never>; message: string; schemaPath: string }

const reason = (text: string) =>
  text.includes('\0') ? 'the NUL character (U+0000)' : 'a lone UTF-16 surrogate';

/**
 * A JSON Pointer segment (RFC 6901: `~` as `~0`, `/` as `~1`). The refused characters themselves are
 * percent-encoded as in a URI (NUL as %00, a surrogate as the three bytes of its code point) so that the
 * problem names the key readably.
 */
function segment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1').replace(UNSTORABLE_ALL, (c) => {
    const unit = c.charCodeAt(0);
    if (unit === 0) return '%00';
    const bytes = [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)];
    return bytes.map((b) => `%${b.toString(16).toUpperCase()}`).join('');
  });
}

/** Enough to point at the problem; a body full of NULs does not need an answer as long. */
const MAX_ERRORS = 20;

const error = (instancePath: string, message: string): UnstorableTextError =>
  ({ instancePath, keyword: 'storableText', params: {}, message, schemaPath: '#/storableText' });

/** Where a value sits; built into a path only for an error, since deep nesting makes long paths. */
interface Place { parent: Place | undefined; segment: string }

function pathOf(place: Place | undefined): string {
  const segments: string[] = [];
  for (let at = place; at; at = at.parent) segments.push(at.segment);
  return segments.reverse().map((s) => `/${s}`).join('');
}

/**
 * Every string in a parsed request part (object keys and values, at any depth) that PostgreSQL cannot
 * store. Walks with an explicit stack: a 64 KiB body can nest deeper than the call stack allows.
 */
export function unstorableText(data: unknown): UnstorableTextError[] {
  const errors: UnstorableTextError[] = [];
  // Each entry: a value, where it sits and the property name it sits under (checked when it is reached).
  const pending: [unknown, Place | undefined, string | undefined][] = [[data, undefined, undefined]];
  while (pending.length > 0 && errors.length < MAX_ERRORS) {
    const [value, place, key] = pending.pop()!;
    if (key !== undefined && UNSTORABLE.test(key)) errors.push(error(pathOf(place), `property name must not contain ${reason(key)}`));
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) errors.push(error(pathOf(place), `must not contain ${reason(value)}`));
    } else if (Array.isArray(value)) {
      // Pushed last first, so errors come out in document order.
      for (let index = value.length - 1; index >= 0; index--) pending.push([value[index], { parent: place, segment: String(index) }, undefined]);
    } else if (typeof value === 'object' && value !== null) {
      for (const [name, item] of Object.entries(value).reverse()) pending.push([item, { parent: place, segment: segment(name) }, name]);
    }
  }
  return errors.slice(0, MAX_ERRORS);
}

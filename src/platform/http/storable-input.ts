/**
 * Input the service cannot store or process, refused at the edge so that a request never gets as far as a
 * driver error (a 500) or a silently changed value:
 * - PostgreSQL stores neither the NUL character in text or jsonb nor a lone UTF-16 surrogate in jsonb, and
 *   a lone surrogate bound as text is silently replaced by U+FFFD;
 * - objects and arrays nested thousands deep (a 64 KiB body allows 30,000 levels) overflow the call stack
 *   of JSON.stringify, the metadata merge and PostgreSQL's jsonb parser.
 */

/** Deeper than any metadata bag needs, far shallower than any stack in the way. */
export const MAX_NESTING = 64;

// With the `u` flag a well-formed surrogate pair is one code point, so \p{Cs} matches only lone surrogates.
const UNSTORABLE = /[\0\p{Cs}]/u;
const UNSTORABLE_ALL = /[\0\p{Cs}]/gu;

/** Enough to point at the problem; a body full of NULs does not need an answer as long. */
const MAX_ERRORS = 20;

/** A validation error shaped like Ajv's, so the one error handler renders it as every other. */
export interface UnstorableInputError { instancePath: string; keyword: 'storable'; params: Record<string, never>; message: string; schemaPath: string }

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

/** Where a value sits; made into a path only for an error, since deep nesting makes long paths. */
interface Place { parent: Place | undefined; key: string; depth: number }

function pathOf(place: Place | undefined): string {
  const segments: string[] = [];
  for (let at = place; at; at = at.parent) segments.push(segment(at.key));
  return segments.reverse().map((s) => `/${s}`).join('');
}

const refusal = (place: Place | undefined, message: string): UnstorableInputError =>
  ({ instancePath: pathOf(place), keyword: 'storable', params: {}, message, schemaPath: '#/storable' });

/** A value to look at, where it sits, and the property name it sits under (checked when it is reached). */
type Pending = [value: unknown, place: Place | undefined, key: string | undefined];

/** The entries of a container, last first: popped from a stack, they come out in document order. */
function childrenOf(value: object, place: Place | undefined): Pending[] {
  const depth = (place?.depth ?? 0) + 1;
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
  return entries.reverse().map(([key, item]) =>
    [item, { parent: place, key, depth }, Array.isArray(value) ? undefined : key]);
}

/**
 * Every string (object keys and values, at any depth) that PostgreSQL cannot store and every container
 * nested too deep, in a parsed request part. Walks with an explicit stack, so depth cannot overflow it.
 */
export function unstorableInput(data: unknown): UnstorableInputError[] {
  const errors: UnstorableInputError[] = [];
  const pending: Pending[] = [[data, undefined, undefined]];
  while (pending.length > 0 && errors.length < MAX_ERRORS) {
    const [value, place, key] = pending.pop()!;
    if (key !== undefined && UNSTORABLE.test(key)) errors.push(refusal(place, `property name must not contain ${reason(key)}`));
    if (typeof value === 'string' && UNSTORABLE.test(value)) errors.push(refusal(place, `must not contain ${reason(value)}`));
    if (typeof value !== 'object' || value === null) continue;
    // The part itself (the body object) is the first level.
    if ((place?.depth ?? 0) >= MAX_NESTING) errors.push(refusal(place, `must not nest objects and arrays more than ${MAX_NESTING} levels deep`));
    else for (const child of childrenOf(value, place)) pending.push(child);
  }
  return errors;
}

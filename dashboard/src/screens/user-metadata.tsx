import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { serverApi, type User } from '../api/gatehouse.js';
import { ProblemMessage } from '../ui/states.js';

/** The server's budget: the three bags' compact JSON together, in UTF-8 bytes (src/platform/metadata.ts). */
export const METADATA_BUDGET_BYTES = 8192;

const BAGS = [
  { key: 'publicMetadata', label: 'Public metadata', hint: 'Readable by the user\'s own session and in session tokens.' },
  { key: 'privateMetadata', label: 'Private metadata', hint: 'Only the Server API and this dashboard see it.' },
  { key: 'unsafeMetadata', label: 'Unsafe metadata', hint: 'The user can change it from the client.' },
] as const;
type Bag = (typeof BAGS)[number]['key'];
type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const encoder = new TextEncoder();
const bytesOf = (value: unknown) => encoder.encode(JSON.stringify(value)).length;

/** What the server keeps of a bag after a merge: a null removes its key, at every depth of objects. */
function withoutNulls(bag: JsonObject): JsonObject {
  const kept: JsonObject = {};
  for (const [key, value] of Object.entries(bag)) {
    if (value === null) continue;
    kept[key] = isObject(value) ? withoutNulls(value) : value;
  }
  return kept;
}

/**
 * The merge patch that turns `current` into `edited` under the server's deep merge: a key removed in the
 * editor is sent as null, a nested object as its own patch, anything else changed as its new value.
 */
export function mergePatch(current: JsonObject, edited: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const key of Object.keys(current)) if (!Object.hasOwn(edited, key)) patch[key] = null;
  for (const [key, value] of Object.entries(edited)) {
    const before = current[key];
    if (isObject(value) && isObject(before)) {
      const nested = mergePatch(before, value);
      if (Object.keys(nested).length > 0) patch[key] = nested;
    } else if (JSON.stringify(value) !== JSON.stringify(before)) patch[key] = value;
  }
  return patch;
}

/** A bag's text parsed: the object, or why it is not one. */
function parse(text: string): { value: JsonObject } | { error: string } {
  if (text.trim() === '') return { value: {} };
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? { value } : { error: 'Must be a JSON object, like {"plan": "pro"}.' };
  } catch (err) {
    return { error: `Not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}

const pretty = (bag: JsonObject) => JSON.stringify(bag, null, 2);
const bagsOf = (user: User): Record<Bag, JsonObject> =>
  ({ publicMetadata: user.publicMetadata as JsonObject, privateMetadata: user.privateMetadata as JsonObject, unsafeMetadata: user.unsafeMetadata as JsonObject });
const textsOf = (bags: Record<Bag, JsonObject>): Record<Bag, string> =>
  ({ publicMetadata: pretty(bags.publicMetadata), privateMetadata: pretty(bags.privateMetadata), unsafeMetadata: pretty(bags.unsafeMetadata) });

/**
 * The three metadata bags as JSON editors with the 8 KB budget they share, counted as the server counts it
 * while typing. Saving sends only what changed, as a merge patch (a removed key as null).
 */
export function MetadataEditor({ user, environmentId }: { user: User; environmentId: string }) {
  const queryClient = useQueryClient();
  // The bags as the editors were filled (or last saved): the patch is what the operator changed from them, so a
  // key written meanwhile by the app or a backend (a refetch updates `user`) is never sent back as removed.
  const [shown, setShown] = useState<Record<Bag, JsonObject>>(() => bagsOf(user));
  const [texts, setTexts] = useState<Record<Bag, string>>(() => textsOf(shown));
  const [saved, setSaved] = useState('');
  const [attempted, setAttempted] = useState(false);
  const parsed = Object.fromEntries(BAGS.map(({ key }) => [key, parse(texts[key])])) as Record<Bag, ReturnType<typeof parse>>;
  const valid = BAGS.every(({ key }) => 'value' in parsed[key]);
  const bytes = BAGS.reduce((sum, { key }) => {
    const result = parsed[key];
    return sum + bytesOf('value' in result ? withoutNulls(result.value) : shown[key]);
  }, 0);
  const over = bytes > METADATA_BUDGET_BYTES;
  const patch: Partial<Record<Bag, JsonObject>> = {};
  if (valid) {
    for (const { key } of BAGS) {
      const result = parsed[key];
      if (!('value' in result)) continue;
      const changes = mergePatch(shown[key], result.value);
      if (Object.keys(changes).length > 0) patch[key] = changes;
    }
  }
  const changed = Object.keys(patch).length > 0;

  const save = useMutation({
    mutationFn: () => serverApi(environmentId).mergeUserMetadata({ userId: user.id, ...patch }),
    onSuccess: (updated) => {
      queryClient.setQueryData(['user', environmentId, user.id], updated);
      const bags = bagsOf(updated);
      setShown(bags);
      setTexts(textsOf(bags));
      setSaved('Metadata saved.');
      setAttempted(false);
    },
  });
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    setSaved('');
    setAttempted(true);
    if (!valid || over || !changed || user.status === 'deleted') return;
    save.mutate();
  };
  const readOnly = user.status === 'deleted';

  return (
    <section aria-labelledby="metadata">
      <h2 id="metadata">Metadata</h2>
      <form onSubmit={onSubmit} className="user-metadata" noValidate>
        {BAGS.map(({ key, label, hint }) => {
          const result = parsed[key];
          const error = 'error' in result ? result.error : undefined;
          return (
            <div key={key} className="user-metadata-bag">
              <label htmlFor={`bag-${key}`}>{label}</label>
              <p id={`bag-${key}-hint`} className="muted">{hint}</p>
              <textarea id={`bag-${key}`} name={key} rows={6} spellCheck={false} value={texts[key]} readOnly={readOnly}
                aria-invalid={error ? true : undefined} aria-describedby={`bag-${key}-hint${error ? ` bag-${key}-error` : ''}`}
                onChange={(event) => { setSaved(''); save.reset(); setTexts((now) => ({ ...now, [key]: event.target.value })); }} />
              {error && <p id={`bag-${key}-error`} className="user-field-error">{label}: {error}</p>}
            </div>
          );
        })}
        <p className={over ? 'user-budget user-budget-over' : 'user-budget'} aria-live="polite" id="metadata-budget">
          {bytes.toLocaleString('en-US')} of {METADATA_BUDGET_BYTES.toLocaleString('en-US')} bytes used by the three bags together
          {over && ` — ${(bytes - METADATA_BUDGET_BYTES).toLocaleString('en-US')} bytes over the limit; remove some before saving`}
        </p>
        {!readOnly && (
          <div className="actions">
            <button type="submit" className="primary" disabled={save.isPending} aria-describedby="metadata-budget">{save.isPending ? 'Saving…' : 'Save metadata'}</button>
            <p role="status">{saved || (attempted && valid && !changed ? 'Nothing changed: there is nothing to save.' : '')}</p>
          </div>
        )}
        {attempted && !valid && <p role="alert" className="user-field-error">Not saved: fix the JSON above first.</p>}
        {attempted && valid && over && <p role="alert" className="user-field-error">Not saved: the metadata is over the 8,192-byte budget.</p>}
        <ProblemMessage error={save.error} />
      </form>
    </section>
  );
}

import { useState, type FormEvent } from 'react';
import { serverApi } from '../api/gatehouse.js';

/**
 * The users screen's search, kept in the URL so a reload or a shared link lands on the same results: one of
 * `email`, `name` or `metadata` (the `key = value` text as typed, in the `bag` named, public unless said),
 * and the server's `cursor` of the page shown.
 */
export interface UsersSearch { email?: string; name?: string; metadata?: string; bag?: 'private'; cursor?: string }

/** The field the search form offers: the email, the name (name, first or last), or one metadata bag. */
export type SearchField = 'email' | 'name' | 'public' | 'private';

const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);

/** The route's search params: unknown or blank values are dropped, as a hand-edited URL may carry them. */
export function validateUsersSearch(search: Record<string, unknown>): UsersSearch {
  return {
    email: text(search.email), name: text(search.name), metadata: text(search.metadata),
    bag: search.bag === 'private' ? 'private' : undefined, cursor: text(search.cursor),
  };
}

/** The search in force: the first given of email, name and metadata (the form only ever sets one). */
export function activeSearch(search: UsersSearch): { field: SearchField; value: string } | undefined {
  if (search.email) return { field: 'email', value: search.email };
  if (search.name) return { field: 'name', value: search.name };
  if (search.metadata) return { field: search.bag === 'private' ? 'private' : 'public', value: search.metadata };
  return undefined;
}

/** The URL's search for a field and what was typed (no cursor: a new search starts on page 1). */
export function searchFor(field: SearchField, value: string): UsersSearch {
  if (!value) return {};
  if (field === 'email') return { email: value };
  if (field === 'name') return { name: value };
  return { metadata: value, ...(field === 'private' && { bag: 'private' as const }) };
}

/**
 * `key = value` as a containment filter: the value is JSON when it reads as JSON (`42`, `true`, `"42"`,
 * `null`), else the text as typed; a dotted key (`onboarding.completed`) names a nested key.
 */
export function parseMetadataFilter(typed: string): { filter: Record<string, unknown> } | { problem: string } {
  const at = typed.indexOf('=');
  const key = at < 0 ? '' : typed.slice(0, at).trim();
  const raw = at < 0 ? '' : typed.slice(at + 1).trim();
  if (!key || !raw) return { problem: 'Write the metadata search as key = value, for example plan = pro.' };
  const path = key.split('.').map((part) => part.trim());
  if (path.some((part) => part === '')) return { problem: `“${key}” is not a key: a dot separates the names of nested keys, and none may be empty.` };
  let value: unknown;
  try { value = JSON.parse(raw); } catch { value = raw; }
  return { filter: path.reduceRight<Record<string, unknown>>((inner, name) => ({ [name]: inner }), value as never) };
}

/** Why the search in the URL cannot be sent (a metadata search that is not `key = value`), or undefined. */
export function searchProblem(search: UsersSearch): string | undefined {
  const active = activeSearch(search);
  if (!active || active.field === 'email' || active.field === 'name') return undefined;
  const parsed = parseMetadataFilter(active.value);
  return 'problem' in parsed ? parsed.problem : undefined;
}

/** The page of users the search asks for, from the Server API: a list by email or name, or a search by metadata. */
export function usersPage(environmentId: string, search: UsersSearch, limit: number, signal: AbortSignal) {
  const api = serverApi(environmentId);
  const { cursor } = search;
  const active = activeSearch(search);
  if (!active || active.field === 'email' || active.field === 'name') {
    const by = active?.field === 'email' ? { emailSearch: active.value } : active?.field === 'name' ? { nameSearch: active.value } : {};
    return api.listUsers({ ...by, cursor, limit }, { signal });
  }
  const parsed = parseMetadataFilter(active.value);
  if ('problem' in parsed) throw new Error(parsed.problem);
  const bag = active.field === 'private' ? { privateMetadata: parsed.filter } : { publicMetadata: parsed.filter };
  return api.searchUsers({ ...bag, cursor, limit }, { signal });
}

const FIELDS: { value: SearchField; option: string; label: string }[] = [
  { value: 'email', option: 'Email', label: 'Email contains' },
  { value: 'name', option: 'Name', label: 'Name contains' },
  { value: 'public', option: 'Public metadata', label: 'Public metadata (key = value)' },
  { value: 'private', option: 'Private metadata', label: 'Private metadata (key = value)' },
];

/** What the results are, in words: the table's caption and the empty state say it. */
export function describeSearch(search: UsersSearch): string | undefined {
  const active = activeSearch(search);
  if (!active) return undefined;
  if (active.field === 'email') return `whose email contains “${active.value}”`;
  if (active.field === 'name') return `whose name contains “${active.value}”`;
  return `whose ${active.field} metadata has ${active.value}`;
}

/** One search form: the field chosen, then what to look for; submitting puts both in the URL. */
export function UsersSearchForm({ search, onSearch }: { search: UsersSearch; onSearch: (next: UsersSearch) => void }) {
  const active = activeSearch(search);
  const [field, setField] = useState<SearchField>(active?.field ?? 'email');
  const chosen = FIELDS.find((f) => f.value === field)!;
  const metadata = field === 'public' || field === 'private';
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    onSearch(searchFor(field, String(new FormData(event.currentTarget).get('q')).trim()));
  };
  return (
    <form role="search" aria-label="Users" onSubmit={onSubmit} className="search users-search">
      <label htmlFor="users-search-field">Search by</label>
      <select id="users-search-field" value={field} onChange={(event) => setField(event.target.value as SearchField)}>
        {FIELDS.map((f) => <option key={f.value} value={f.value}>{f.option}</option>)}
      </select>
      <label htmlFor="users-search-text">{chosen.label}</label>
      <input id="users-search-text" name="q" type="search" defaultValue={active?.field === field ? active.value : ''} key={`${field}:${active?.value ?? ''}`}
        spellCheck={false} autoComplete="off" aria-describedby={metadata ? 'users-search-hint' : undefined} />
      <button type="submit">Search</button>
      {active && <button type="button" onClick={() => { setField('email'); onSearch({}); }}>Show all users</button>}
      {metadata && (
        <p id="users-search-hint" className="muted users-search-hint">
          For example <code>plan = pro</code> or <code>onboarding.completed = true</code>: a dot names a nested key; the value is read as
          JSON when it is JSON (<code>42</code>, <code>true</code>, <code>&quot;42&quot;</code>), else as text.
        </p>
      )}
    </form>
  );
}

import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { GatehouseError } from '../api/gatehouse.js';
import { Page } from './page.js';

/** A failed call, as the server's problem+json stated it (its detail and stable code), announced at once. */
export function ProblemMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const known = error instanceof GatehouseError;
  return (
    <div role="alert" className="problem">
      <p>{known ? error.message : 'Something went wrong. Try again.'}</p>
      {known && error.code && <p className="problem-code">Error code: <code>{error.code}</code>{error.instance && <> · reference <code>{error.instance}</code></>}</p>}
      {known && error.errors.length > 0 && (
        <ul>{error.errors.map((field) => <li key={field.path}><code>{field.path}</code>: {field.message}</li>)}</ul>
      )}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return <p role="status" className="muted">Loading {what}…</p>;
}

export function Empty({ children }: { children: React.ReactNode }) {
  return <p className="empty">{children}</p>;
}

/** One record's screen: loading, then its problem under the screen's title, or the record as `children` shows it. */
export function Loaded<T>({ query, what, title, children }: { query: UseQueryResult<T>; what: string; title: string; children: (data: T) => ReactNode }) {
  if (query.isPending) return <Loading what={what} />;
  if (query.error) return <Page title={title}><ProblemMessage error={query.error} /></Page>;
  return <>{children(query.data as T)}</>;
}

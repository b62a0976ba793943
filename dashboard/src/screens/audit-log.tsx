import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useEffect, useRef, type FormEvent } from 'react';
import { serverApi } from '../api/gatehouse.js';
import { Page } from '../ui/page.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';
import { useLiveFeed } from './audit-live.js';
import { filterOf, FILTER_KEYS, formatTime, matchesFilter, type AuditEvent, type AuditFilter } from './audit-parts.js';

const route = getRouteApi('/signed-in/environments/$environmentId/audit-log');
const PAGE_SIZE = 50;

/** `datetime-local` shows local time without a zone; the URL and the API keep the instant (ISO 8601). */
const toLocalInput = (iso: string | undefined) => {
  if (!iso || Number.isNaN(Date.parse(iso))) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (value: string) => (value ? new Date(value).toISOString() : undefined);

const FIELDS: { key: Exclude<(typeof FILTER_KEYS)[number], 'occurredAfter' | 'occurredBefore'>; label: string; hint?: string }[] = [
  { key: 'action', label: 'Action', hint: 'Exact, e.g. user.banned' },
  { key: 'result', label: 'Result', hint: 'Exact, e.g. success' },
  { key: 'actorId', label: 'Actor id' },
  { key: 'targetType', label: 'Target type', hint: 'e.g. user' },
  { key: 'targetId', label: 'Target id' },
  { key: 'correlationId', label: 'Correlation id' },
];

/** The audit log, newest first: the Server API's filters and cursor in the URL, and a live feed by sequence. */
export function AuditLogScreen() {
  const { environmentId } = route.useParams();
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const filter = filterOf(search);
  const { cursor } = search;
  const live = search.live === true;
  const events = useQuery({
    queryKey: ['audit-events', environmentId, filter, cursor ?? ''],
    queryFn: ({ signal }) => serverApi(environmentId).searchAuditEvents({ ...filter, cursor, limit: PAGE_SIZE, order: 'desc' }, { signal }),
    placeholderData: keepPreviousData,
  });
  const feed = useLiveFeed(environmentId, live);
  const onFilter = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const typed = (name: string) => String(form.get(name) ?? '').trim() || undefined;
    const next: AuditFilter = {};
    for (const { key } of FIELDS) next[key] = typed(key);
    next.occurredAfter = fromLocalInput(String(form.get('occurredAfter') ?? ''));
    next.occurredBefore = fromLocalInput(String(form.get('occurredBefore') ?? ''));
    void navigate({ search: { ...next, live: search.live } });
  };
  const toggleLive = () => { void navigate({ search: { ...filter, live: live ? undefined : true } }); };
  const filtered = Object.keys(filter).length > 0;
  // New events from the live feed go on top of the first page, as far as they match the filters.
  const fresh = live && !cursor ? (feed.data?.events ?? []).filter((event) => matchesFilter(event, filter)) : [];
  const shownIds = new Set(fresh.map((event) => event.id));
  const rows = [...fresh, ...(events.data?.items ?? []).filter((event) => !shownIds.has(event.id))];
  // The inputs follow the URL (back, forward, Clear filters) without re-mounting, so focus stays where it was.
  const form = useRef<HTMLFormElement>(null);
  const formKey = JSON.stringify(filter);
  useEffect(() => {
    const shown: AuditFilter = JSON.parse(formKey) as AuditFilter;
    for (const { key } of FIELDS) setInput(form.current, key, shown[key] ?? '');
    setInput(form.current, 'occurredAfter', toLocalInput(shown.occurredAfter));
    setInput(form.current, 'occurredBefore', toLocalInput(shown.occurredBefore));
  }, [formKey]);
  return (
    <Page title="Audit log">
      <form role="search" aria-label="Filter the audit log" onSubmit={onFilter} className="audit-filters" ref={form}>
        {FIELDS.map(({ key, label, hint }) => (
          <div key={key} className="field">
            <label htmlFor={`audit-${key}`}>{label}</label>
            <input id={`audit-${key}`} name={key} type="text" defaultValue={filter[key] ?? ''} placeholder={hint} autoComplete="off" spellCheck={false} />
          </div>
        ))}
        <div className="field">
          <label htmlFor="audit-occurredAfter">Occurred from</label>
          <input id="audit-occurredAfter" name="occurredAfter" type="datetime-local" defaultValue={toLocalInput(filter.occurredAfter)} />
        </div>
        <div className="field">
          <label htmlFor="audit-occurredBefore">Occurred before</label>
          <input id="audit-occurredBefore" name="occurredBefore" type="datetime-local" defaultValue={toLocalInput(filter.occurredBefore)} />
        </div>
        <div className="actions">
          <button type="submit">Apply filters</button>
          {filtered && <Link from="/environments/$environmentId/audit-log" search={{ live: search.live }}>Clear filters</Link>}
        </div>
      </form>
      <div className="audit-live">
        <button type="button" aria-pressed={live} onClick={toggleLive}>Live</button>
        <p role="status" aria-live="polite" className="muted">{liveStatus(live, feed, fresh.length)}</p>
      </div>
      <ProblemMessage error={feed.error} />
      {events.isPending && <Loading what="audit events" />}
      <ProblemMessage error={events.error} />
      {events.data && rows.length === 0 && <Empty>{filtered ? 'No audit event matches these filters.' : 'This environment has no audit events yet.'}</Empty>}
      {rows.length > 0 && (
        <table className="audit-table">
          <caption className="visually-hidden">{filtered ? 'Audit events matching the filters, newest first' : 'Audit events, newest first'}</caption>
          <thead>
            <tr><th scope="col">Occurred</th><th scope="col">Action</th><th scope="col">Result</th><th scope="col">Actor</th><th scope="col">Targets</th><th scope="col">Sequence</th></tr>
          </thead>
          <tbody aria-busy={events.isFetching}>
            {rows.map((event) => <EventRow key={event.id} event={event} environmentId={environmentId} fresh={shownIds.has(event.id)} />)}
          </tbody>
        </table>
      )}
      <nav aria-label="Pages" className="pager">
        {cursor && <Link from="/environments/$environmentId/audit-log" search={{ ...filter, cursor: undefined }}>Newest events</Link>}
        {events.data?.hasMore && events.data.nextCursor && (
          <Link from="/environments/$environmentId/audit-log" search={{ ...filter, cursor: events.data.nextCursor }}>Older events</Link>
        )}
      </nav>
    </Page>
  );
}

function setInput(form: HTMLFormElement | null, name: string, value: string) {
  const input = form?.elements.namedItem(name);
  if (input instanceof HTMLInputElement && input.value !== value) input.value = value;
}

function liveStatus(live: boolean, feed: ReturnType<typeof useLiveFeed>, count: number) {
  if (!live) return 'Live is off.';
  if (feed.error) return 'Live: the feed failed; it tries again.';
  if (!feed.data) return 'Live: starting…';
  if (feed.paused) return 'Live: paused while this tab is hidden.';
  if (count === 0) return 'Live: watching for new events.';
  return `Live: ${count} new ${count === 1 ? 'event' : 'events'} since Live was switched on.`;
}

// The tail of a long id: uuidv7 ids of the same moment share their head (the time), not their tail.
const short = (id: string | null) => (id ? (id.length > 12 ? `…${id.slice(-8)}` : id) : '');

function EventRow({ event, environmentId, fresh }: { event: AuditEvent; environmentId: string; fresh: boolean }) {
  return (
    <tr className={fresh ? 'audit-fresh' : undefined}>
      <td>{formatTime(event.occurredAt)}</td>
      <td>
        <Link to="/environments/$environmentId/audit-log/$eventId" params={{ environmentId, eventId: event.id }}>{event.action}</Link>
        {fresh && <span className="badge badge-new">New</span>}
      </td>
      <td>{event.result}</td>
      <td>{event.actor.type} {short(event.actor.id)}</td>
      <td>{event.targets.length === 0 ? '—' : event.targets.map((target) => `${target.type} ${short(target.id)}`.trim()).join(', ')}</td>
      <td>{event.sequence}</td>
    </tr>
  );
}

import type { components } from '@gatehouse/sdk';
import { Link } from '@tanstack/react-router';

/** The audit screens' own pieces: the event type, the URL's filters, and how an actor or target is shown. */
export type AuditEvent = components['schemas']['AuditEvent'];

/** The Server API's search filters, kept in the URL under the names it takes, so a filtered view is a deep link. */
export const FILTER_KEYS = ['action', 'result', 'actorId', 'targetType', 'targetId', 'occurredAfter', 'occurredBefore', 'correlationId'] as const;
export type AuditFilter = Partial<Record<(typeof FILTER_KEYS)[number], string>>;
export type AuditLogSearch = AuditFilter & { cursor?: string; live?: boolean };

const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/** The audit log route's search params: the filters, the page's cursor and whether the live feed is on. */
export function validateAuditLogSearch(search: Record<string, unknown>): AuditLogSearch {
  const valid: AuditLogSearch = {};
  for (const key of FILTER_KEYS) valid[key] = text(search[key]);
  valid.cursor = text(search.cursor);
  valid.live = search.live === true || search.live === 'true' ? true : undefined;
  return valid;
}

export const filterOf = (search: AuditLogSearch): AuditFilter =>
  Object.fromEntries(FILTER_KEYS.flatMap((key) => (search[key] ? [[key, search[key]]] : [])));

/** Whether an event (from the live feed, which has no filters) matches the filters as the server's search would. */
export function matchesFilter(event: AuditEvent, filter: AuditFilter) {
  if (filter.action && event.action !== filter.action) return false;
  if (filter.result && event.result !== filter.result) return false;
  if (filter.actorId && event.actor.id?.toLowerCase() !== filter.actorId.toLowerCase()) return false;
  if (filter.correlationId && event.correlationId?.toLowerCase() !== filter.correlationId.toLowerCase()) return false;
  const occurred = Date.parse(event.occurredAt);
  if (filter.occurredAfter && occurred < Date.parse(filter.occurredAfter)) return false;
  if (filter.occurredBefore && occurred >= Date.parse(filter.occurredBefore)) return false;
  if (filter.targetType || filter.targetId) {
    const hit = event.targets.some((target) => (!filter.targetType || target.type === filter.targetType) && (!filter.targetId || target.id === filter.targetId));
    if (!hit) return false;
  }
  return true;
}

export const formatTime = (iso: string) => new Date(iso).toLocaleString();

/** An actor or target: a user links to their page, anything else is its type and id. */
export function Party({ environmentId, type, id }: { environmentId: string; type: string; id: string | null }) {
  if (type === 'user' && id) {
    return <>user <Link to="/environments/$environmentId/users/$userId" params={{ environmentId, userId: id }}><code>{id}</code></Link></>;
  }
  return <>{type}{id && <> <code>{id}</code></>}</>;
}

import type { components } from '@gatehouse/sdk';
import { useQuery } from '@tanstack/react-query';
import { GatehouseError, serverApi } from '../api/gatehouse.js';
import { Loading, ProblemMessage } from '../ui/states.js';

/** The webhook screens' own pieces: types, the event-type catalogue and its checkboxes, field errors, an endpoint's state. */
export type WebhookEndpoint = components['schemas']['WebhookEndpoint'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
export type DeliveryStatus = WebhookDelivery['status'];

export const WEBHOOK_SECRET_WARNING = "It is shown only this once. Your receiver verifies each delivery's signature with it (Standard Webhooks): keep it on your backend.";

export const DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'succeeded', 'failed'];

/** The endpoint route's search params: the deliveries' status filter and page cursor. */
export function validateWebhookEndpointSearch(search: Record<string, unknown>): { status?: DeliveryStatus; cursor?: string } {
  const status = DELIVERY_STATUSES.find((known) => known === search.status);
  const cursor = typeof search.cursor === 'string' && search.cursor !== '' ? search.cursor : undefined;
  return { status, cursor };
}

/** The catalogue of event types (it changes only with a new Gatehouse). */
export const eventTypesQuery = (environmentId: string) => ({
  queryKey: ['webhook-event-types', environmentId],
  queryFn: ({ signal }: { signal: AbortSignal }) => serverApi(environmentId).listWebhookEventTypes(undefined, { signal }),
  staleTime: Infinity,
});

export const endpointsKey = (environmentId: string) => ['webhook-endpoints', environmentId];
export const endpointKey = (environmentId: string, endpointId: string) => ['webhook-endpoint', environmentId, endpointId];

/** The form's field errors by field (url, description, eventTypes), from the problem's /body/... paths. */
export function endpointFieldErrors(error: unknown): Partial<Record<'url' | 'description' | 'eventTypes', string>> {
  const byField: Partial<Record<'url' | 'description' | 'eventTypes', string>> = {};
  if (!(error instanceof GatehouseError)) return byField;
  for (const { path, message } of error.errors) {
    const field = /^\/body\/(url|description|eventTypes)\b/.exec(path)?.[1] as 'url' | 'description' | 'eventTypes' | undefined;
    if (field) byField[field] = byField[field] ? `${byField[field]}; ${message}` : message;
  }
  return byField;
}

/** An endpoint's event types in words. */
export const eventTypesText = (eventTypes: string[] | null) => (eventTypes === null ? 'All events' : eventTypes.join(', '));

/** Enabled, or disabled with its reason, in words (never by colour alone); "Disabled: failing" stands out. */
export function EndpointState({ endpoint }: { endpoint: Pick<WebhookEndpoint, 'enabled' | 'disabledReason'> }) {
  if (endpoint.enabled) return <span className="badge badge-active">Enabled</span>;
  if (endpoint.disabledReason === 'failing') return <span className="badge badge-failing">Disabled: failing</span>;
  return <span className="badge badge-disabled">Disabled</span>;
}

/** A delivery's status in words. */
export function DeliveryStatusBadge({ status }: { status: DeliveryStatus }) {
  return <span className={`badge badge-delivery-${status}`}>{status[0]!.toUpperCase() + status.slice(1)}</span>;
}

/**
 * The event types an endpoint receives: "All events" (the default, sent as null) or those ticked from the
 * catalogue, each with what makes it. `value` null means all.
 */
export function EventTypesField({ environmentId, idPrefix, value, onChange, error }: {
  environmentId: string; idPrefix: string; value: string[] | null; onChange: (next: string[] | null) => void; error?: string;
}) {
  const catalogue = useQuery(eventTypesQuery(environmentId));
  const errorId = `${idPrefix}-event-types-error`;
  const all = value === null;
  return (
    <fieldset className="setting-group webhook-event-types" aria-describedby={error ? errorId : undefined}>
      <legend>Event types</legend>
      <div className="setting-check">
        <input id={`${idPrefix}-all-events`} type="checkbox" checked={all} onChange={(event) => onChange(event.target.checked ? null : [])} />
        <label htmlFor={`${idPrefix}-all-events`}>All events</label>
        <p className="help">Every event type, including those a later Gatehouse adds.</p>
      </div>
      {!all && catalogue.isPending && <Loading what="event types" />}
      <ProblemMessage error={catalogue.error} />
      {!all && catalogue.data && (
        <div className="webhook-type-list">
          {catalogue.data.items.map(({ type, description }) => (
            <div key={type} className="setting-check">
              <input id={`${idPrefix}-type-${type}`} type="checkbox" checked={value.includes(type)}
                aria-describedby={`${idPrefix}-type-${type}-help`}
                onChange={(event) => onChange(event.target.checked ? [...value, type] : value.filter((t) => t !== type))} />
              <label htmlFor={`${idPrefix}-type-${type}`}><code>{type}</code></label>
              <p id={`${idPrefix}-type-${type}-help`} className="help">{description}</p>
            </div>
          ))}
        </div>
      )}
      {error && <p id={errorId} className="field-error">Event types: {error}</p>}
    </fieldset>
  );
}

/** The types as the catalogue orders them, so the request and the screen read the same. */
export const inCatalogueOrder = (types: string[], catalogue: { type: string }[] | undefined) =>
  catalogue ? catalogue.map((entry) => entry.type).filter((type) => types.includes(type)) : types;

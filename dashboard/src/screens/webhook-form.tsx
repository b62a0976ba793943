import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { ProblemMessage } from '../ui/states.js';
import { endpointFieldErrors, EventTypesField, eventTypesQuery, inCatalogueOrder } from './webhook-parts.js';

export interface EndpointDraft { url: string; description: string | null; eventTypes: string[] | null }

/**
 * An endpoint's URL, description and event types, for adding one and for editing one. The server's field
 * errors (400 invalid_request, properties.errors) stand next to their fields; any other problem (409
 * webhook_endpoint_limit) under the form.
 */
export function EndpointForm({ environmentId, idPrefix, initial, submitLabel, busy, error, onSubmit, children }: {
  environmentId: string; idPrefix: string; initial: EndpointDraft; submitLabel: string; busy: boolean; error: unknown;
  onSubmit: (draft: EndpointDraft) => void; children?: ReactNode;
}) {
  const catalogue = useQuery(eventTypesQuery(environmentId));
  const [eventTypes, setEventTypes] = useState<string[] | null>(initial.eventTypes);
  const [localError, setLocalError] = useState('');
  const errors = endpointFieldErrors(error);
  const typesError = localError || errors.eventTypes;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    if (eventTypes !== null && eventTypes.length === 0) { setLocalError('Choose at least one event type, or All events.'); return; }
    setLocalError('');
    const description = String(data.get('description') ?? '').trim();
    onSubmit({
      url: String(data.get('url') ?? '').trim(),
      description: description === '' ? null : description,
      eventTypes: eventTypes && inCatalogueOrder(eventTypes, catalogue.data?.items),
    });
  };
  const field = (name: 'url' | 'description') => ({
    id: `${idPrefix}-${name}`,
    'aria-invalid': errors[name] ? true : undefined,
    'aria-describedby': [`${idPrefix}-${name}-help`, errors[name] && `${idPrefix}-${name}-error`].filter(Boolean).join(' '),
  });
  return (
    <form className="settings-form webhook-form" onSubmit={submit} noValidate>
      <div className="setting">
        <label htmlFor={`${idPrefix}-url`}>URL</label>
        <input {...field('url')} name="url" type="url" required maxLength={2048} defaultValue={initial.url} autoComplete="off" placeholder="https://api.example.com/webhooks/gatehouse" />
        <p id={`${idPrefix}-url-help`} className="help">Where deliveries are POSTed: an https: (or http:) URL without credentials.</p>
        {errors.url && <p id={`${idPrefix}-url-error`} className="field-error">URL: {errors.url}</p>}
      </div>
      <div className="setting">
        <label htmlFor={`${idPrefix}-description`}>Description (optional)</label>
        <input {...field('description')} name="description" maxLength={500} defaultValue={initial.description ?? ''} autoComplete="off" />
        <p id={`${idPrefix}-description-help`} className="help">A note for people, at most 500 characters.</p>
        {errors.description && <p id={`${idPrefix}-description-error`} className="field-error">Description: {errors.description}</p>}
      </div>
      <EventTypesField environmentId={environmentId} idPrefix={idPrefix} value={eventTypes} error={typesError}
        onChange={(next) => { setLocalError(''); setEventTypes(next); }} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>{busy ? 'Saving…' : submitLabel}</button>
        {children}
      </div>
      <ProblemMessage error={error} />
    </form>
  );
}

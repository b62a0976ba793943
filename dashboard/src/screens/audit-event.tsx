import { useQuery } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { serverApi } from '../api/gatehouse.js';
import { Page } from '../ui/page.js';
import { Loaded } from '../ui/states.js';
import { formatTime, Party, type AuditEvent } from './audit-parts.js';

const route = getRouteApi('/signed-in/environments/$environmentId/audit-log/$eventId');

/** One audit event with every field; a user as actor or target links to the user's page. */
export function AuditEventScreen() {
  const { environmentId, eventId } = route.useParams();
  const event = useQuery({
    queryKey: ['audit-event', environmentId, eventId],
    queryFn: ({ signal }) => serverApi(environmentId).getAuditEvent({ eventId }, { signal }),
    staleTime: Infinity, // An audit event never changes.
  });
  return (
    <>
      <p><Link to="/environments/$environmentId/audit-log" params={{ environmentId }}>← Audit log</Link></p>
      <Loaded query={event} what="the audit event" title="Audit event">{(data) => <EventDetail event={data} environmentId={environmentId} />}</Loaded>
    </>
  );
}

function EventDetail({ event, environmentId }: { event: AuditEvent; environmentId: string }) {
  const { producer } = event;
  return (
    <Page title={`Audit event: ${event.action}`}>
      <dl className="fields">
        <dt>Action</dt><dd><code>{event.action}</code></dd>
        <dt>Result</dt><dd><code>{event.result}</code></dd>
        <dt>Actor</dt>
        <dd>
          <Party environmentId={environmentId} type={event.actor.type} id={event.actor.id} />
          {event.actor.impersonatorId && <>, impersonated by <code>{event.actor.impersonatorId}</code></>}
        </dd>
        <dt>Targets</dt>
        <dd>
          {event.targets.length === 0 ? 'None' : (
            <ul className="plain">
              {event.targets.map((target, index) => <li key={`${target.type}:${target.id ?? ''}:${index}`}><Party environmentId={environmentId} type={target.type} id={target.id} /></li>)}
            </ul>
          )}
        </dd>
        <dt>IP address</dt><dd>{event.context.ipAddress ?? '—'}</dd>
        <dt>User agent</dt><dd>{event.context.userAgent ?? '—'}</dd>
        <dt>Sequence</dt><dd>{event.sequence}</dd>
        <dt>Occurred</dt><dd><time dateTime={event.occurredAt}>{formatTime(event.occurredAt)}</time> (<code>{event.occurredAt}</code>)</dd>
        <dt>Recorded</dt><dd><time dateTime={event.recordedAt}>{formatTime(event.recordedAt)}</time> (<code>{event.recordedAt}</code>)</dd>
        <dt>Written by</dt>
        <dd>
          {producer.type === 'gatehouse' ? 'Gatehouse' : producer.type === 'secret_key' ? 'A secret key' : producer.type}
          {producer.via && <> via <code>{producer.via}</code></>}
          {producer.keyId && <> (key <code>{producer.keyId}</code>)</>}
        </dd>
        <dt>Correlation id</dt>
        <dd>
          {event.correlationId
            ? <Link to="/environments/$environmentId/audit-log" params={{ environmentId }} search={{ correlationId: event.correlationId }}><code>{event.correlationId}</code></Link>
            : '—'}
        </dd>
        <dt>Schema version</dt><dd>{event.schemaVersion}</dd>
        <dt>Event id</dt><dd><code>{event.id}</code></dd>
      </dl>
      <h2 id="audit-metadata">Metadata</h2>
      <pre tabIndex={0} aria-labelledby="audit-metadata" className="json">{JSON.stringify(event.metadata, null, 2)}</pre>
    </Page>
  );
}

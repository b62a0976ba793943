import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { serverApi } from '../api/gatehouse.js';
import { when } from '../ui/settings-secret.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';
import { DELIVERY_STATUSES, DeliveryStatusBadge, type DeliveryStatus, type WebhookDelivery, type WebhookEndpoint } from './webhook-parts.js';

const route = getRouteApi('/signed-in/environments/$environmentId/webhooks/$endpointId');
const PAGE_SIZE = 25;
const FROM = '/environments/$environmentId/webhooks/$endpointId';

const STATUS_WORDS: Record<DeliveryStatus | 'all', string> = { all: 'All', pending: 'Pending', succeeded: 'Succeeded', failed: 'Failed' };

/** The endpoint's deliveries, newest first: the status filter and the server's cursor in the URL, Retry on each. */
export function WebhookDeliveries({ endpoint, environmentId }: { endpoint: WebhookEndpoint; environmentId: string }) {
  const { status, cursor } = route.useSearch();
  const navigate = route.useNavigate();
  const queryClient = useQueryClient();
  const deliveries = useQuery({
    queryKey: ['webhook-deliveries', environmentId, endpoint.id, status ?? '', cursor ?? ''],
    queryFn: ({ signal }) => serverApi(environmentId).listWebhookDeliveries({ endpointId: endpoint.id, status, cursor, limit: PAGE_SIZE }, { signal }),
    placeholderData: keepPreviousData,
  });
  const [done, setDone] = useState('');
  const retry = useMutation({
    mutationFn: (delivery: WebhookDelivery) => serverApi(environmentId).retryWebhookDelivery({ deliveryId: delivery.id }),
    onSuccess: async (_answer, delivery) => {
      setDone(`The ${delivery.type} delivery is due again now.`);
      await queryClient.invalidateQueries({ queryKey: ['webhook-deliveries', environmentId, endpoint.id] });
    },
  });
  const page = deliveries.data;
  return (
    <section aria-labelledby="webhook-deliveries">
      <h2 id="webhook-deliveries">Deliveries</h2>
      <div className="actions webhook-delivery-tools">
        <label htmlFor="delivery-status">Status</label>
        <select id="delivery-status" value={status ?? 'all'}
          onChange={(event) => { setDone(''); void navigate({ search: { status: DELIVERY_STATUSES.find((s) => s === event.target.value), cursor: undefined } }); }}>
          {(['all', ...DELIVERY_STATUSES] as const).map((value) => <option key={value} value={value}>{STATUS_WORDS[value]}</option>)}
        </select>
        <button type="button" onClick={() => void deliveries.refetch()} disabled={deliveries.isFetching}>{deliveries.isFetching ? 'Refreshing…' : 'Refresh'}</button>
        <p role="status" className="form-status">{done}</p>
      </div>
      <ProblemMessage error={retry.error} />
      {deliveries.isPending && <Loading what="deliveries" />}
      <ProblemMessage error={deliveries.error} />
      {page && page.items.length === 0 && <Empty>{status ? `No ${status} deliveries to this endpoint.` : 'No deliveries to this endpoint yet.'}</Empty>}
      {page && page.items.length > 0 && (
        <table className="webhook-deliveries">
          <caption className="visually-hidden">{status ? `${STATUS_WORDS[status]} deliveries, newest first` : 'Deliveries, newest first'}</caption>
          <thead>
            <tr>
              <th scope="col">Created</th><th scope="col">Event type</th><th scope="col">Status</th><th scope="col">Attempts</th>
              <th scope="col">Last response</th><th scope="col">Next attempt</th><th scope="col"><span className="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody aria-busy={deliveries.isFetching}>
            {page.items.map((delivery) => (
              <DeliveryRow key={delivery.id} delivery={delivery} busy={retry.isPending && retry.variables?.id === delivery.id}
                onRetry={() => { setDone(''); retry.mutate(delivery); }} />
            ))}
          </tbody>
        </table>
      )}
      <nav aria-label="Deliveries pages" className="pager">
        {cursor && <Link from={FROM} search={{ status, cursor: undefined }}>Newest deliveries</Link>}
        {page?.hasMore && page.nextCursor && <Link from={FROM} search={{ status, cursor: page.nextCursor }}>Older deliveries</Link>}
      </nav>
    </section>
  );
}

function DeliveryRow({ delivery, busy, onRetry }: { delivery: WebhookDelivery; busy: boolean; onRetry: () => void }) {
  return (
    <tr data-delivery={delivery.id}>
      <td>{when(delivery.createdAt)}</td>
      <td><code>{delivery.type}</code></td>
      <td><DeliveryStatusBadge status={delivery.status} /></td>
      <td>
        {delivery.attempt === 0 ? 'None yet' : (
          <details>
            <summary>{delivery.attempt} {delivery.attempt === 1 ? 'attempt' : 'attempts'}</summary>
            <ol className="webhook-attempts">
              {delivery.attempts.map((attempt) => (
                <li key={attempt.attempt}>
                  <p>
                    Attempt {attempt.attempt}: {attempt.responseStatus === null ? 'no answer' : `HTTP ${attempt.responseStatus}`} in {attempt.durationMs} ms,
                    {' '}started {when(attempt.startedAt)}
                  </p>
                  {attempt.error && <p className="field-error">Error: {attempt.error}</p>}
                  {attempt.responseBody !== null && attempt.responseBody !== '' && (
                    <pre tabIndex={0} aria-label={`Response body of attempt ${attempt.attempt}`}>{attempt.responseBody}</pre>
                  )}
                </li>
              ))}
            </ol>
          </details>
        )}
        {delivery.lastError && <p className="muted webhook-last-error">Last error: {delivery.lastError}</p>}
      </td>
      <td>{delivery.responseStatus ?? '—'}</td>
      <td>{delivery.status === 'pending' ? when(delivery.nextAttemptAt) : '—'}</td>
      <td>
        <button type="button" onClick={onRetry} disabled={busy}>
          {busy ? 'Retrying…' : 'Retry'}<span className="visually-hidden"> the {delivery.type} delivery of {when(delivery.createdAt)}</span>
        </button>
      </td>
    </tr>
  );
}

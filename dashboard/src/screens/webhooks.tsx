import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { serverApi } from '../api/gatehouse.js';
import { Page } from '../ui/page.js';
import { SecretOnce, when } from '../ui/settings-secret.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';
import { EndpointForm, type EndpointDraft } from './webhook-form.js';
import { EndpointState, endpointsKey, eventTypesText, WEBHOOK_SECRET_WARNING } from './webhook-parts.js';

const route = getRouteApi('/signed-in/environments/$environmentId/webhooks');
/** An environment has at most 20 endpoints: one page holds them all. */
const PAGE_SIZE = 100;

/** The environment's webhook endpoints, and a new one added with its signing secret shown once. */
export function WebhooksScreen() {
  const { environmentId } = route.useParams();
  const endpoints = useQuery({
    queryKey: endpointsKey(environmentId),
    queryFn: ({ signal }) => serverApi(environmentId).listWebhookEndpoints({ limit: PAGE_SIZE }, { signal }),
  });
  const items = endpoints.data?.items;
  return (
    <Page title="Webhooks">
      <p className="muted">Gatehouse POSTs each event (a user created, a session revoked, …) to these endpoints, signed per Standard Webhooks.</p>
      <h2 id="webhook-endpoints">Endpoints</h2>
      {endpoints.isPending && <Loading what="webhook endpoints" />}
      <ProblemMessage error={endpoints.error} />
      {items?.length === 0 && <Empty>This environment has no webhook endpoints yet.</Empty>}
      {items && items.length > 0 && (
        <table aria-labelledby="webhook-endpoints">
          <thead><tr><th scope="col">URL</th><th scope="col">Description</th><th scope="col">Event types</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
          <tbody aria-busy={endpoints.isFetching}>
            {items.map((endpoint) => (
              <tr key={endpoint.id} className={endpoint.disabledReason === 'failing' ? 'webhook-failing' : undefined}>
                <td className="token">
                  <Link to="/environments/$environmentId/webhooks/$endpointId" params={{ environmentId, endpointId: endpoint.id }} search={{}}>{endpoint.url}</Link>
                </td>
                <td>{endpoint.description ?? '—'}</td>
                <td>{eventTypesText(endpoint.eventTypes)}</td>
                <td><EndpointState endpoint={endpoint} /></td>
                <td>{when(endpoint.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <AddEndpoint environmentId={environmentId} />
    </Page>
  );
}

function AddEndpoint({ environmentId }: { environmentId: string }) {
  const queryClient = useQueryClient();
  const [created, setCreated] = useState<{ id: string; url: string; secret: string } | null>(null);
  // A new form after each creation: its fields start empty again.
  const [formKey, setFormKey] = useState(0);
  const create = useMutation({
    mutationFn: (draft: EndpointDraft) => serverApi(environmentId).createWebhookEndpoint(draft),
    onSuccess: async (endpoint) => {
      setCreated({ id: endpoint.id, url: endpoint.url, secret: endpoint.secret });
      setFormKey((key) => key + 1);
      await queryClient.invalidateQueries({ queryKey: endpointsKey(environmentId) });
    },
  });
  return (
    <section aria-labelledby="add-webhook-endpoint">
      <h2 id="add-webhook-endpoint">Add endpoint</h2>
      {created && (
        <>
          <p role="status">
            Added <Link to="/environments/$environmentId/webhooks/$endpointId" params={{ environmentId, endpointId: created.id }} search={{}}>{created.url}</Link>.
          </p>
          <SecretOnce label="Signing secret" secret={created.secret} warning={WEBHOOK_SECRET_WARNING} onDone={() => setCreated(null)} />
        </>
      )}
      <EndpointForm key={formKey} environmentId={environmentId} idPrefix="new-endpoint" initial={{ url: '', description: null, eventTypes: null }}
        submitLabel="Add endpoint" busy={create.isPending} error={create.error} onSubmit={(draft) => { setCreated(null); create.mutate(draft); }} />
    </section>
  );
}

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { serverApi } from '../api/gatehouse.js';
import { ConfirmDialog } from '../ui/confirm.js';
import { Page } from '../ui/page.js';
import { SecretOnce, when } from '../ui/settings-secret.js';
import { Loaded, ProblemMessage } from '../ui/states.js';
import { WebhookDeliveries } from './webhook-deliveries.js';
import { EndpointForm, type EndpointDraft } from './webhook-form.js';
import { EndpointState, endpointKey, endpointsKey, eventTypesText, WEBHOOK_SECRET_WARNING, type WebhookEndpoint } from './webhook-parts.js';

const route = getRouteApi('/signed-in/environments/$environmentId/webhooks/$endpointId');

/** One webhook endpoint (a deep link): its settings, on and off, its secret, deletion, and its deliveries. */
export function WebhookEndpointScreen() {
  const { environmentId, endpointId } = route.useParams();
  const endpoint = useQuery({
    queryKey: endpointKey(environmentId, endpointId),
    queryFn: ({ signal }) => serverApi(environmentId).getWebhookEndpoint({ endpointId }, { signal }),
  });
  return (
    <>
      <p><Link to="/environments/$environmentId/webhooks" params={{ environmentId }}>← All webhook endpoints</Link></p>
      <Loaded query={endpoint} what="the webhook endpoint" title="Webhook endpoint">
        {(data) => (
          <Page title="Webhook endpoint">
            <EndpointSettings endpoint={data} environmentId={environmentId} />
            <WebhookDeliveries endpoint={data} environmentId={environmentId} />
          </Page>
        )}
      </Loaded>
    </>
  );
}

/** What changed between the endpoint and the form, as the PATCH takes it. */
function changesOf(endpoint: WebhookEndpoint, draft: EndpointDraft): Partial<EndpointDraft> {
  return {
    ...(draft.url !== endpoint.url && { url: draft.url }),
    ...(draft.description !== endpoint.description && { description: draft.description }),
    ...(JSON.stringify(draft.eventTypes) !== JSON.stringify(endpoint.eventTypes) && { eventTypes: draft.eventTypes }),
  };
}

function useEndpointChange(environmentId: string, endpointId: string) {
  const queryClient = useQueryClient();
  return async (updated: WebhookEndpoint) => {
    queryClient.setQueryData(endpointKey(environmentId, endpointId), updated);
    await queryClient.invalidateQueries({ queryKey: endpointsKey(environmentId) });
  };
}

function EndpointSettings({ endpoint, environmentId }: { endpoint: WebhookEndpoint; environmentId: string }) {
  const changed = useEndpointChange(environmentId, endpoint.id);
  const [saved, setSaved] = useState('');
  const update = useMutation({
    mutationFn: (changes: Partial<EndpointDraft>) => serverApi(environmentId).updateWebhookEndpoint({ endpointId: endpoint.id, ...changes }),
    onSuccess: async (updated) => { setSaved('Changes saved.'); await changed(updated); },
  });
  const onSubmit = (draft: EndpointDraft) => {
    const changes = changesOf(endpoint, draft);
    setSaved('');
    if (Object.keys(changes).length === 0) setSaved('Nothing to save: the URL, description and event types are unchanged.');
    else update.mutate(changes);
  };
  return (
    <section aria-labelledby="endpoint-settings">
      <h2 id="endpoint-settings">Settings</h2>
      <dl className="fields">
        <dt>URL</dt><dd className="token"><code>{endpoint.url}</code></dd>
        <dt>Description</dt><dd>{endpoint.description ?? '—'}</dd>
        <dt>Event types</dt><dd>{eventTypesText(endpoint.eventTypes)}</dd>
        <dt>Status</dt><dd><EndpointState endpoint={endpoint} /></dd>
        <dt>Endpoint id</dt><dd><code>{endpoint.id}</code></dd>
        <dt>Created</dt><dd>{when(endpoint.createdAt)}</dd>
        <dt>Updated</dt><dd>{when(endpoint.updatedAt)}</dd>
      </dl>
      {endpoint.disabledReason === 'failing' && (
        <p className="notice webhook-failing-notice">
          <strong>Disabled: failing.</strong> Every delivery to this endpoint failed for days, so Gatehouse stopped sending to it.
          Fix the receiver, then enable the endpoint and retry the failed deliveries.
        </p>
      )}
      <OnOff endpoint={endpoint} environmentId={environmentId} />
      <h3 id="edit-endpoint" className="form-title">Edit</h3>
      <EndpointForm key={endpoint.updatedAt} environmentId={environmentId} idPrefix="edit-endpoint" initial={endpoint}
        submitLabel="Save changes" busy={update.isPending} error={update.error} onSubmit={onSubmit}>
        <p role="status" className="form-status">{saved}</p>
      </EndpointForm>
      <RotateSecret endpoint={endpoint} environmentId={environmentId} />
      <DeleteEndpoint endpoint={endpoint} environmentId={environmentId} />
    </section>
  );
}

/** Enable or disable: reversible, so no confirmation. */
function OnOff({ endpoint, environmentId }: { endpoint: WebhookEndpoint; environmentId: string }) {
  const changed = useEndpointChange(environmentId, endpoint.id);
  const [done, setDone] = useState('');
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => serverApi(environmentId).updateWebhookEndpoint({ endpointId: endpoint.id, enabled }),
    onSuccess: async (updated) => {
      setDone(updated.enabled ? 'Enabled: new events are delivered to this endpoint.' : 'Disabled: no events are delivered to this endpoint until it is enabled.');
      await changed(updated);
    },
  });
  return (
    <div className="actions">
      <button type="button" onClick={() => toggle.mutate(!endpoint.enabled)} disabled={toggle.isPending}>
        {endpoint.enabled ? 'Disable endpoint' : 'Enable endpoint'}
      </button>
      <p role="status" className="form-status">{done}</p>
      <ProblemMessage error={toggle.error} />
    </div>
  );
}

function RotateSecret({ endpoint, environmentId }: { endpoint: WebhookEndpoint; environmentId: string }) {
  const changed = useEndpointChange(environmentId, endpoint.id);
  const [asking, setAsking] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const rotate = useMutation({
    mutationFn: () => serverApi(environmentId).rotateWebhookSecret({ endpointId: endpoint.id }),
    onSuccess: async ({ secret: next, ...updated }) => { setAsking(false); setSecret(next); await changed(updated); },
  });
  return (
    <>
      <h3 id="signing-secret" className="form-title">Signing secret</h3>
      <p className="muted">Rotating replaces the secret; the previous one also signs deliveries for 24 hours, while your receiver moves to the new one.</p>
      <div className="actions">
        <button type="button" onClick={() => { rotate.reset(); setSecret(null); setAsking(true); }}>Rotate secret</button>
      </div>
      {secret && <SecretOnce label="New signing secret" secret={secret} warning={WEBHOOK_SECRET_WARNING} onDone={() => setSecret(null)} />}
      <ConfirmDialog open={asking} title="Rotate the signing secret?" confirmLabel="Rotate secret" busy={rotate.isPending}
        onConfirm={() => rotate.mutate()} onCancel={() => setAsking(false)}>
        <p>A new secret signs deliveries from now on. The current one also signs them for 24 hours more, then stops.</p>
        <ProblemMessage error={rotate.error} />
      </ConfirmDialog>
    </>
  );
}

function DeleteEndpoint({ endpoint, environmentId }: { endpoint: WebhookEndpoint; environmentId: string }) {
  const queryClient = useQueryClient();
  const navigate = route.useNavigate();
  const [asking, setAsking] = useState(false);
  const remove = useMutation({
    mutationFn: () => serverApi(environmentId).deleteWebhookEndpoint({ endpointId: endpoint.id }),
    onSuccess: async () => {
      setAsking(false);
      queryClient.removeQueries({ queryKey: endpointKey(environmentId, endpoint.id) });
      await queryClient.invalidateQueries({ queryKey: endpointsKey(environmentId) });
      await navigate({ to: '/environments/$environmentId/webhooks', params: { environmentId } });
    },
  });
  return (
    <div className="actions">
      <button type="button" className="danger" onClick={() => { remove.reset(); setAsking(true); }}>Delete endpoint</button>
      <ConfirmDialog open={asking} title="Delete this webhook endpoint?" confirmLabel="Delete endpoint" busy={remove.isPending}
        onConfirm={() => remove.mutate()} onCancel={() => setAsking(false)}>
        <p>Nothing more is sent to <code>{endpoint.url}</code>, and its deliveries are deleted with it. This cannot be undone.</p>
        <ProblemMessage error={remove.error} />
      </ConfirmDialog>
    </div>
  );
}

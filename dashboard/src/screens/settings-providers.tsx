import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { adminApi, GatehouseError } from '../api/gatehouse.js';
import type { components } from '@gatehouse/sdk';
import { ConfirmDialog } from '../ui/confirm.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';

type Provider = components['schemas']['OAuthProvider'];
type ProviderType = Provider['type'];

const TYPES: { value: ProviderType; label: string }[] = [
  { value: 'google', label: 'Google' }, { value: 'github', label: 'GitHub' }, { value: 'microsoft', label: 'Microsoft' },
  { value: 'oidc', label: 'OpenID Connect (any provider)' }, { value: 'oauth2', label: 'OAuth 2 (explicit URLs)' },
];

interface Draft {
  providerId: string; type: ProviderType; name: string; clientId: string; clientSecret: string;
  issuer: string; authorizationUrl: string; tokenUrl: string; userInfoUrl: string; scopes: string; enabled: boolean;
}
const EMPTY: Draft = { providerId: '', type: 'google', name: '', clientId: '', clientSecret: '', issuer: '', authorizationUrl: '', tokenUrl: '', userInfoUrl: '', scopes: '', enabled: true };

const draftOf = (provider: Provider): Draft => ({
  providerId: provider.id, type: provider.type, name: provider.name, clientId: provider.clientId, clientSecret: '',
  issuer: provider.issuer ?? '', authorizationUrl: provider.authorizationUrl ?? '', tokenUrl: provider.tokenUrl ?? '',
  userInfoUrl: provider.userInfoUrl ?? '', scopes: provider.scopes.join(' '), enabled: provider.enabled,
});

/** The environment's external sign-in providers: list, add and edit (the client secret is write-only), delete. */
export function OAuthProviders({ environmentId }: { environmentId: string }) {
  const queryClient = useQueryClient();
  const queryKey = ['oauth-providers', environmentId];
  const providers = useQuery({ queryKey, queryFn: ({ signal }) => adminApi.listOAuthProviders({ id: environmentId }, { signal }) });
  const [editing, setEditing] = useState<{ draft: Draft; isNew: boolean } | null>(null);
  const [deleting, setDeleting] = useState<Provider | null>(null);
  const [done, setDone] = useState('');
  const remove = useMutation({
    mutationFn: (providerId: string) => adminApi.deleteOAuthProvider({ id: environmentId, providerId }),
    onSuccess: async () => {
      setDone(`${deleting?.name ?? 'The provider'} is deleted.`);
      setDeleting(null);
      await queryClient.invalidateQueries({ queryKey });
    },
  });
  return (
    <section aria-labelledby="oauth-providers">
      <h2 id="oauth-providers">OAuth providers</h2>
      <p className="muted">External sign-in: &ldquo;Sign in with Google&rdquo; and the like. Register each callback URL at its provider.</p>
      {providers.isPending && <Loading what="OAuth providers" />}
      <ProblemMessage error={providers.error} />
      {providers.data?.items.length === 0 && <Empty>No external provider is set up.</Empty>}
      {providers.data && providers.data.items.length > 0 && (
        <table>
          <caption className="visually-hidden">OAuth providers</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">ID</th><th scope="col">Type</th><th scope="col">Client ID</th><th scope="col">Enabled</th><th scope="col">Callback URL</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {providers.data.items.map((provider) => (
              <tr key={provider.id}>
                <td>{provider.name}</td>
                <td><code>{provider.id}</code></td>
                <td>{provider.type}</td>
                <td><code>{provider.clientId}</code></td>
                <td>{provider.enabled ? 'Yes' : 'No'}</td>
                <td><code className="wrap">{provider.callbackUrl}</code></td>
                <td className="row-actions">
                  <button type="button" onClick={() => { setDone(''); setEditing({ draft: draftOf(provider), isNew: false }); }}>Edit<span className="visually-hidden"> {provider.name}</span></button>
                  <button type="button" className="danger" onClick={() => { remove.reset(); setDone(''); setDeleting(provider); }}>Delete<span className="visually-hidden"> {provider.name}</span></button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="actions">
        {!editing && <button type="button" onClick={() => { setDone(''); setEditing({ draft: EMPTY, isNew: true }); }}>Add provider</button>}
        <p role="status">{done}</p>
      </div>
      {editing && (
        <ProviderForm key={editing.draft.providerId || 'new'} environmentId={environmentId} initial={editing.draft} isNew={editing.isNew}
          onDone={(message) => { setEditing(null); setDone(message); void queryClient.invalidateQueries({ queryKey }); }}
          onCancel={() => setEditing(null)} />
      )}
      <ConfirmDialog open={deleting !== null} title="Delete this provider?" confirmLabel="Delete provider" busy={remove.isPending}
        onConfirm={() => deleting && remove.mutate(deleting.id)} onCancel={() => setDeleting(null)}>
        <p>Users can no longer sign in with <strong>{deleting?.name}</strong>. Their accounts stay.</p>
        <ProblemMessage error={remove.error} />
      </ConfirmDialog>
    </section>
  );
}

function ProviderForm({ environmentId, initial, isNew, onDone, onCancel }: {
  environmentId: string; initial: Draft; isNew: boolean; onDone: (message: string) => void; onCancel: () => void;
}) {
  const [draft, setDraft] = useState(initial);
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((current) => ({ ...current, [key]: value }));
  const save = useMutation({
    mutationFn: (d: Draft) => {
      const optional = (value: string) => (value.trim() === '' ? undefined : value.trim());
      const scopes = d.scopes.split(/[\s,]+/).filter(Boolean);
      return adminApi.putOAuthProvider({
        id: environmentId, providerId: d.providerId.trim(), type: d.type, name: d.name.trim(), clientId: d.clientId.trim(),
        clientSecret: optional(d.clientSecret), issuer: optional(d.issuer), authorizationUrl: optional(d.authorizationUrl),
        tokenUrl: optional(d.tokenUrl), userInfoUrl: optional(d.userInfoUrl), ...(scopes.length > 0 && { scopes }), enabled: d.enabled,
      });
    },
    onSuccess: (provider) => onDone(isNew ? `${provider.name} is added. Register ${provider.callbackUrl} at the provider.` : `${provider.name} is saved.`),
  });
  const errors = new Map(save.error instanceof GatehouseError ? save.error.errors.map((e) => [e.path.replace(/^\/(body|params)\//, ''), e.message]) : []);
  const onSubmit = (event: FormEvent<HTMLFormElement>) => { event.preventDefault(); save.mutate(draft); };
  const text = (key: 'providerId' | 'name' | 'clientId' | 'clientSecret' | 'issuer' | 'authorizationUrl' | 'tokenUrl' | 'userInfoUrl' | 'scopes', label: string, help?: string, extra?: { type?: string; disabled?: boolean; autoComplete?: string }) => {
    const id = `provider-${key}`;
    const error = errors.get(key);
    const describedBy = [help && `${id}-help`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
    return (
      <div className="setting">
        <label htmlFor={id}>{label}</label>
        <input id={id} type={extra?.type ?? 'text'} value={draft[key]} onChange={(event) => set(key, event.target.value)} disabled={extra?.disabled}
          autoComplete={extra?.autoComplete ?? 'off'} aria-describedby={describedBy} aria-invalid={error ? true : undefined} />
        {help && <p id={`${id}-help`} className="help">{help}</p>}
        {error && <p id={`${id}-error`} className="field-error">{label}: {error}</p>}
      </div>
    );
  };
  const explicit = draft.type === 'oauth2';
  return (
    <form className="settings-form provider-form" onSubmit={onSubmit} noValidate aria-labelledby="provider-form-title">
      <h3 id="provider-form-title">{isNew ? 'Add a provider' : `Edit ${initial.name}`}</h3>
      {text('providerId', 'Provider ID', 'The environment\'s own name for it ("google", "corp-sso"): a-z, 0-9, "_" and "-". It is part of the callback URL.', { disabled: !isNew })}
      <div className="setting">
        <label htmlFor="provider-type">Type</label>
        <select id="provider-type" value={draft.type} onChange={(event) => set('type', event.target.value as ProviderType)}>
          {TYPES.map((type) => <option key={type.value} value={type.value}>{type.label}</option>)}
        </select>
      </div>
      {text('name', 'Name', 'Shown on the sign-in page ("Sign in with …").')}
      {text('clientId', 'Client ID')}
      {text('clientSecret', 'Client secret', isNew ? 'Stored sealed and never shown again.' : 'Write-only: leave empty to keep the stored secret.', { type: 'password', autoComplete: 'new-password' })}
      {(draft.type === 'oidc' || draft.type === 'microsoft' || draft.type === 'oauth2') &&
        text('issuer', 'Issuer', draft.type === 'oidc' ? 'Required: the OpenID Connect issuer, discovered from.' : draft.type === 'microsoft' ? 'Optional: a Microsoft tenant\'s issuer.' : 'Optional: the iss the authorization response may carry.')}
      {explicit && text('authorizationUrl', 'Authorization URL')}
      {explicit && text('tokenUrl', 'Token URL')}
      {explicit && text('userInfoUrl', 'User info URL')}
      {text('scopes', 'Scopes', 'Separated by spaces; empty uses the type\'s defaults.')}
      <div className="setting setting-check">
        <input id="provider-enabled" type="checkbox" checked={draft.enabled} onChange={(event) => set('enabled', event.target.checked)} />
        <label htmlFor="provider-enabled">Enabled</label>
      </div>
      <div className="actions">
        <button type="submit" className="primary" disabled={save.isPending}>{save.isPending ? 'Saving…' : isNew ? 'Add provider' : 'Save provider'}</button>
        <button type="button" onClick={onCancel} disabled={save.isPending}>Cancel</button>
      </div>
      <ProblemMessage error={save.error} />
    </form>
  );
}

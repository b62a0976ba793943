import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { adminApi, GatehouseError, serverApi } from '../api/gatehouse.js';
import { ConfirmDialog } from '../ui/confirm.js';
import { SecretOnce, when } from '../ui/settings-secret.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';
import { StatusBadge } from '../ui/status.js';

/** The environment's secret keys: listed by hint, a new one shown once, revocation behind a confirmation. */
export function SecretKeys({ environmentId }: { environmentId: string }) {
  const queryClient = useQueryClient();
  const queryKey = ['secret-keys', environmentId];
  const keys = useQuery({ queryKey, queryFn: ({ signal }) => adminApi.listSecretKeys({ id: environmentId }, { signal }) });
  const [created, setCreated] = useState<{ id: string; secretKey: string } | null>(null);
  const [revoking, setRevoking] = useState<{ id: string; hint: string | null } | null>(null);
  const [done, setDone] = useState('');
  const create = useMutation({
    mutationFn: () => adminApi.createSecretKey({ id: environmentId }),
    onSuccess: async (key) => { setDone(''); setCreated(key); await queryClient.invalidateQueries({ queryKey }); },
  });
  const revoke = useMutation({
    mutationFn: (keyId: string) => adminApi.revokeSecretKey({ keyId }),
    onSuccess: async () => {
      setDone(`The key ${revoking?.hint ?? ''} is revoked: it no longer authenticates.`);
      setRevoking(null);
      await queryClient.invalidateQueries({ queryKey });
    },
  });
  return (
    <section aria-labelledby="secret-keys">
      <h2 id="secret-keys">Secret keys</h2>
      <p className="muted">Your backend calls the Server API with a secret key. Only a hint of each key is shown.</p>
      {keys.isPending && <Loading what="secret keys" />}
      <ProblemMessage error={keys.error} />
      {keys.data?.items.length === 0 && <Empty>This environment has no secret keys.</Empty>}
      {keys.data && keys.data.items.length > 0 && (
        <table>
          <caption className="visually-hidden">Secret keys</caption>
          <thead><tr><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Revoked</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {keys.data.items.map((key) => (
              <tr key={key.id}>
                <td><code>{key.hint ?? 'sk_…'}</code>{key.hint === null && <span className="muted"> (issued before hints)</span>}</td>
                <td><StatusBadge status={key.revokedAt ? 'revoked' : 'active'} /></td>
                <td>{when(key.createdAt)}</td>
                <td>{when(key.revokedAt)}</td>
                <td>
                  {!key.revokedAt && (
                    <button type="button" className="danger" onClick={() => { revoke.reset(); setDone(''); setRevoking(key); }}>
                      Revoke<span className="visually-hidden"> key {key.hint ?? key.id}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="actions">
        <button type="button" onClick={() => create.mutate()} disabled={create.isPending}>{create.isPending ? 'Creating…' : 'Create secret key'}</button>
        <p role="status">{done}</p>
      </div>
      <ProblemMessage error={create.error} />
      {created && <SecretOnce label="New secret key" secret={created.secretKey} onDone={() => setCreated(null)} />}
      <ConfirmDialog open={revoking !== null} title="Revoke this secret key?" confirmLabel="Revoke key" busy={revoke.isPending}
        onConfirm={() => revoking && revoke.mutate(revoking.id)} onCancel={() => setRevoking(null)}>
        <p>The key <code>{revoking?.hint ?? revoking?.id}</code> stops working at once. Every backend still using it gets 401.</p>
        <ProblemMessage error={revoke.error} />
      </ConfirmDialog>
    </section>
  );
}

/** The origins the environment's apps run on (the Server API's list), added and removed one at a time. */
export function AllowedOrigins({ environmentId }: { environmentId: string }) {
  const queryClient = useQueryClient();
  const api = serverApi(environmentId);
  const queryKey = ['allowed-origins', environmentId];
  const origins = useQuery({ queryKey, queryFn: ({ signal }) => api.getAllowedOrigins(undefined, { signal }) });
  const escapeHatch = useQuery({ queryKey: ['escape-hatch-origins', environmentId], queryFn: ({ signal }) => api.listEscapeHatchOrigins(undefined, { signal }) });
  const [typed, setTyped] = useState('');
  const [removing, setRemoving] = useState<string | null>(null);
  const [done, setDone] = useState('');
  const save = useMutation({
    mutationFn: (next: string[]) => api.setAllowedOrigins({ origins: next }),
    onSuccess: (answer) => queryClient.setQueryData(queryKey, answer),
  });
  const add = useMutation({
    mutationFn: (origin: string) => api.setAllowedOrigins({ origins: [...(origins.data?.origins ?? []), origin] }),
    onSuccess: (answer, origin) => { queryClient.setQueryData(queryKey, answer); setTyped(''); setDone(`${origin} is allowed.`); },
  });
  const onAdd = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setDone('');
    if (typed.trim()) add.mutate(typed.trim());
  };
  const addError = add.error instanceof GatehouseError ? add.error.errors.map((field) => field.message).join('; ') : '';
  const list = origins.data?.origins;
  return (
    <section aria-labelledby="allowed-origins">
      <h2 id="allowed-origins">Allowed origins</h2>
      <p className="muted">The origins your apps run on: they may call the client plane with cookies, and redirects may lead to them.</p>
      {origins.isPending && <Loading what="allowed origins" />}
      <ProblemMessage error={origins.error} />
      {list?.length === 0 && <Empty>No origin is allowed yet.</Empty>}
      {list && list.length > 0 && (
        <ul className="settings-list" aria-label="Allowed origins">
          {list.map((origin) => (
            <li key={origin}>
              <code>{origin}</code>
              <button type="button" onClick={() => { save.reset(); setDone(''); setRemoving(origin); }}>Remove<span className="visually-hidden"> {origin}</span></button>
            </li>
          ))}
        </ul>
      )}
      <form className="settings-inline" onSubmit={onAdd} noValidate>
        <label htmlFor="new-origin">Origin</label>
        <input id="new-origin" value={typed} onChange={(event) => setTyped(event.target.value)} placeholder="https://app.example.com"
          aria-describedby={addError ? 'new-origin-error' : 'new-origin-help'} aria-invalid={addError ? true : undefined} />
        <button type="submit" disabled={add.isPending || !list}>Add origin</button>
      </form>
      <p id="new-origin-help" className="help">A full origin: scheme://host[:port], without a path.</p>
      {addError && <p id="new-origin-error" className="field-error">{addError}</p>}
      <ProblemMessage error={add.error} />
      <p role="status">{done}</p>
      {escapeHatch.data && escapeHatch.data.origins.length > 0 && (
        <p className="muted">Also accepted for cookie-authenticated changes (the frontend host itself): {escapeHatch.data.origins.map((o) => <code key={o}>{o} </code>)}</p>
      )}
      <ConfirmDialog open={removing !== null} title="Remove this origin?" confirmLabel="Remove origin" busy={save.isPending}
        onConfirm={() => removing && save.mutate((list ?? []).filter((o) => o !== removing), {
          onSuccess: () => { setDone(`${removing} is no longer allowed.`); setRemoving(null); },
        })}
        onCancel={() => setRemoving(null)}>
        <p>Apps on <code>{removing}</code> can no longer call Gatehouse with cookies, and redirects there are refused.</p>
        <ProblemMessage error={save.error} />
      </ConfirmDialog>
    </section>
  );
}

/** The environment's signing keys with their status; rotate, and revoke a retired key, each behind a confirmation. */
export function SigningKeys({ environmentId }: { environmentId: string }) {
  const queryClient = useQueryClient();
  const queryKey = ['signing-keys', environmentId];
  const keys = useQuery({ queryKey, queryFn: ({ signal }) => adminApi.listSigningKeys({ id: environmentId }, { signal }) });
  const [asking, setAsking] = useState<{ action: 'rotate' } | { action: 'revoke'; keyId: string } | null>(null);
  const [done, setDone] = useState('');
  const change = useMutation({
    mutationFn: (what: NonNullable<typeof asking>) => (what.action === 'rotate'
      ? adminApi.rotateSigningKey({ id: environmentId })
      : adminApi.revokeSigningKey({ id: environmentId, keyId: what.keyId })),
    onSuccess: (answer, what) => {
      queryClient.setQueryData(queryKey, answer);
      setDone(what.action === 'rotate' ? 'Rotated: a new key signs from now on; the old one stays published until its tokens expire.' : `The key ${what.keyId} is revoked and left the JWKS.`);
      setAsking(null);
    },
  });
  const open = (what: NonNullable<typeof asking>) => { change.reset(); setDone(''); setAsking(what); };
  return (
    <section aria-labelledby="signing-keys">
      <h2 id="signing-keys">Signing keys</h2>
      <p className="muted">The keys that sign session JWTs, published in the JWKS.</p>
      {keys.isPending && <Loading what="signing keys" />}
      <ProblemMessage error={keys.error} />
      {keys.data?.items.length === 0 && <Empty>No signing keys yet.</Empty>}
      {keys.data && keys.data.items.length > 0 && (
        <table>
          <caption className="visually-hidden">Signing keys</caption>
          <thead><tr><th scope="col">Key id</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Retired</th><th scope="col">Published until</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {keys.data.items.map((key) => (
              <tr key={key.id}>
                <td><code>{key.id}</code></td>
                <td><StatusBadge status={key.status} /></td>
                <td>{when(key.createdAt)}</td>
                <td>{when(key.retiredAt)}</td>
                <td>{when(key.publishedUntil)}</td>
                <td>{key.status === 'retired' && (
                  <button type="button" className="danger" onClick={() => open({ action: 'revoke', keyId: key.id })}>Revoke<span className="visually-hidden"> signing key {key.id}</span></button>
                )}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="actions">
        <button type="button" onClick={() => open({ action: 'rotate' })}>Rotate signing key</button>
        <p role="status">{done}</p>
      </div>
      <ConfirmDialog open={asking !== null} title={asking?.action === 'revoke' ? 'Revoke this signing key?' : 'Rotate the signing key?'}
        confirmLabel={asking?.action === 'revoke' ? 'Revoke key' : 'Rotate key'} busy={change.isPending}
        onConfirm={() => asking && change.mutate(asking)} onCancel={() => setAsking(null)}>
        {asking?.action === 'revoke'
          ? <p>The key <code>{asking.keyId}</code> leaves the JWKS at once: tokens it signed stop verifying.</p>
          : <p>A new key signs from now on. The current one retires and stays published until the tokens it signed expire.</p>}
        <ProblemMessage error={change.error} />
      </ConfirmDialog>
    </section>
  );
}

import { useMutation, useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import type { components } from '@gatehouse/sdk';
import { serverApi } from '../api/gatehouse.js';
import { ConfirmDialog } from '../ui/confirm.js';
import { CopyField } from '../ui/copy-field.js';
import { SecretOnce, when } from '../ui/settings-secret.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';
import { GroupRolesEditor } from './group-roles.js';

type Directory = components['schemas']['ScimDirectory'];
type WithToken = components['schemas']['ScimDirectoryWithToken'];

const TOKEN_WARNING = 'It is shown only this once; Gatehouse keeps only its hash. Enter it in your identity provider as the SCIM bearer token, '
  + 'with the SCIM base URL. Lost, it can only be replaced (Rotate token).';

/** The SCIM base URL an identity provider provisions to: the service's origin (the one the dashboard is served from) and the directory's path. */
export const scimBaseUrl = (directoryId: string) => `${window.location.origin}/scim/v2/${directoryId}`;

/** The organization's SCIM directories: create one (its token shown once), the base URL to give the IdP, token rotation and deletion behind confirmations. */
export function OrganizationDirectories({ organizationId, environmentId }: { organizationId: string; environmentId: string }) {
  const queryKey = ['organization-directories', environmentId, organizationId];
  const queryClient = useQueryClient();
  const directories = useQuery({ queryKey, queryFn: ({ signal }) => serverApi(environmentId).listScimDirectories({ organizationId }, { signal }) });
  const [token, setToken] = useState<{ directory: WithToken; rotated: boolean } | null>(null);
  const [confirming, setConfirming] = useState<{ directory: Directory; action: 'rotate' | 'delete' } | null>(null);
  const [done, setDone] = useState('');
  const refresh = () => queryClient.invalidateQueries({ queryKey });
  return (
    <section aria-labelledby="scim-directories">
      <h3 id="scim-directories" className="section-title">SCIM directories</h3>
      <p className="muted">
        An identity provider (Okta, Microsoft Entra ID, …) provisions users and groups into this organization over SCIM 2.0:
        give it the directory&apos;s SCIM base URL and bearer token. It provisions only addresses at this organization&apos;s
        verified domains: verify them first.
      </p>
      <CreateDirectory organizationId={organizationId} environmentId={environmentId}
        onCreated={async (directory) => { setDone(''); setToken({ directory, rotated: false }); await refresh(); }} />
      {token && (
        <div className="directory-token">
          <SecretOnce label={`SCIM bearer token of ${token.directory.name}`} secret={token.directory.token} warning={TOKEN_WARNING}
            onDone={() => setToken(null)} />
          <CopyField label={`SCIM base URL of ${token.directory.name}`} value={scimBaseUrl(token.directory.id)} />
        </div>
      )}
      {directories.isPending && <Loading what="directories" />}
      <ProblemMessage error={directories.error} />
      <p role="status" className="form-status">{done}</p>
      {directories.data && directories.data.items.length === 0 && <Empty>This organization has no SCIM directories.</Empty>}
      {directories.data && directories.data.items.length > 0 && (
        <ul className="enterprise-list" aria-busy={directories.isFetching}>
          {directories.data.items.map((directory) => (
            <DirectoryItem key={directory.id} directory={directory} environmentId={environmentId} listKey={queryKey}
              onAsk={(action) => { setDone(''); setConfirming({ directory, action }); }} />
          ))}
        </ul>
      )}
      <ConfirmDirectoryAction confirming={confirming} environmentId={environmentId}
        onClose={async (outcome) => {
          setConfirming(null);
          if (outcome?.rotated) setToken({ directory: outcome.rotated, rotated: true });
          if (outcome?.deleted) {
            if (token?.directory.id === outcome.deleted.id) setToken(null);
            setDone(`The directory ${outcome.deleted.name} was deleted: its token no longer works. The users it provisioned stay.`);
          }
          if (outcome) await refresh();
        }} />
    </section>
  );
}

function CreateDirectory({ organizationId, environmentId, onCreated }: { organizationId: string; environmentId: string; onCreated: (directory: WithToken) => Promise<void> }) {
  const create = useMutation({
    mutationFn: (name: string) => serverApi(environmentId).createScimDirectory({ organizationId, name }),
    onSuccess: onCreated,
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    create.mutate(String(new FormData(form).get('name')).trim(), { onSuccess: () => form.reset() });
  };
  return (
    <>
      <form onSubmit={onSubmit} className="inline-form" aria-labelledby="create-directory">
        <h4 id="create-directory" className="form-title">Create a SCIM directory</h4>
        <div className="field">
          <label htmlFor="create-directory-name">Directory name</label>
          <input id="create-directory-name" name="name" required maxLength={256} autoComplete="off" aria-describedby="create-directory-hint" />
          <span id="create-directory-hint" className="hint">The identity provider it is for, such as Okta.</span>
        </div>
        <button type="submit" className="primary" disabled={create.isPending}>{create.isPending ? 'Creating…' : 'Create directory'}</button>
      </form>
      <ProblemMessage error={create.error} />
    </>
  );
}

function DirectoryItem({ directory, environmentId, listKey, onAsk }: {
  directory: Directory; environmentId: string; listKey: QueryKey; onAsk: (action: 'rotate' | 'delete') => void;
}) {
  const headingId = useId();
  return (
    <li>
      <article aria-labelledby={headingId}>
        <h4 id={headingId} className="item-title">{directory.name}</h4>
        <CopyField label={`SCIM base URL of ${directory.name}`} value={scimBaseUrl(directory.id)} />
        <dl className="fields">
          <dt>Directory id</dt><dd><code>{directory.id}</code></dd>
          <dt>Created</dt><dd>{when(directory.createdAt)}</dd>
        </dl>
        <h5 className="form-title">Group roles</h5>
        <GroupRolesEditor owner={directory.name} groupRoles={directory.groupRoles} environmentId={environmentId} organizationId={directory.organizationId}
          listKey={listKey} save={(groupRoles) => serverApi(environmentId).updateScimDirectory({ organizationId: directory.organizationId, directoryId: directory.id, groupRoles })} />
        <div className="actions">
          <button type="button" onClick={() => onAsk('rotate')}>Rotate token of {directory.name}</button>
          <button type="button" className="danger" onClick={() => onAsk('delete')}>Delete {directory.name}</button>
        </div>
      </article>
    </li>
  );
}

function ConfirmDirectoryAction({ confirming, environmentId, onClose }: {
  confirming: { directory: Directory; action: 'rotate' | 'delete' } | null; environmentId: string;
  onClose: (outcome?: { rotated?: WithToken; deleted?: Directory }) => Promise<void>;
}) {
  const act = useMutation({
    mutationFn: async ({ directory, action }: { directory: Directory; action: 'rotate' | 'delete' }) => {
      const ids = { organizationId: directory.organizationId, directoryId: directory.id };
      if (action === 'rotate') return { rotated: await serverApi(environmentId).rotateScimDirectoryToken(ids) };
      await serverApi(environmentId).deleteScimDirectory(ids);
      return { deleted: directory };
    },
    onSuccess: onClose,
  });
  const rotating = confirming?.action === 'rotate';
  return (
    <ConfirmDialog open={confirming !== null} title={rotating ? 'Rotate this directory\'s token?' : 'Delete this SCIM directory?'}
      confirmLabel={rotating ? 'Rotate token' : 'Delete directory'} busy={act.isPending}
      onConfirm={() => confirming && act.mutate(confirming)} onCancel={() => { act.reset(); void onClose(); }}>
      <p>
        {rotating
          ? `The token of ${confirming?.directory.name} stops working at once; the new one is shown once, to enter in the identity provider.`
          : `${confirming?.directory.name ?? ''} will be deleted and its token stops working. The users it provisioned stay, with their memberships.`}
      </p>
      <ProblemMessage error={act.error} />
    </ConfirmDialog>
  );
}

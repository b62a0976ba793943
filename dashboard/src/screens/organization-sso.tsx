import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import type { components } from '@gatehouse/sdk';
import { serverApi } from '../api/gatehouse.js';
import { ConfirmDialog } from '../ui/confirm.js';
import { CopyField } from '../ui/copy-field.js';
import { when } from '../ui/settings-secret.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';
import { GroupRolesEditor } from './group-roles.js';
import { connectionsKey, CreateSsoConnection } from './organization-sso-create.js';

type Connection = components['schemas']['SsoConnection'];
type Changes = { enabled?: boolean; enforced?: boolean };

const TYPE_WORDS = { saml: 'SAML', oidc: 'OpenID Connect' } as const;

/** The organization's SSO connections: create one (SAML from IdP metadata, or OpenID Connect), the values to enter at the IdP, enable and enforce, delete behind a confirmation. */
export function OrganizationSso({ organizationId, environmentId }: { organizationId: string; environmentId: string }) {
  const queryKey = connectionsKey(environmentId, organizationId);
  const connections = useQuery({ queryKey, queryFn: ({ signal }) => serverApi(environmentId).listSsoConnections({ organizationId }, { signal }) });
  const [deleting, setDeleting] = useState<Connection | null>(null);
  const [done, setDone] = useState('');
  return (
    <section aria-labelledby="sso-connections">
      <h3 id="sso-connections" className="section-title">SSO connections</h3>
      <p className="muted">
        Members sign in through the organization&apos;s identity provider, by SAML 2.0 or OpenID Connect, when their email is at one of its
        verified domains. Enforced, a connection refuses those users a password.
      </p>
      <CreateSsoConnection organizationId={organizationId} environmentId={environmentId} onCreated={(created) => setDone(
        `${created.name} was created. Enter the values shown under it at the identity provider.`,
      )} />
      <p role="status" className="form-status">{done}</p>
      {connections.isPending && <Loading what="SSO connections" />}
      <ProblemMessage error={connections.error} />
      {connections.data && connections.data.items.length === 0 && <Empty>This organization has no SSO connections.</Empty>}
      {connections.data && connections.data.items.length > 0 && (
        <ul className="enterprise-list" aria-busy={connections.isFetching}>
          {connections.data.items.map((connection) => (
            <ConnectionItem key={connection.id} connection={connection} environmentId={environmentId} onDelete={() => { setDone(''); setDeleting(connection); }} />
          ))}
        </ul>
      )}
      <DeleteConnection connection={deleting} environmentId={environmentId}
        onClose={(deleted) => { setDeleting(null); if (deleted) setDone(`The connection ${deleted.name} was deleted. Its users stay, with their memberships.`); }} />
    </section>
  );
}

function ConnectionItem({ connection, environmentId, onDelete }: { connection: Connection; environmentId: string; onDelete: () => void }) {
  const headingId = useId();
  const queryClient = useQueryClient();
  const [said, setSaid] = useState('');
  const { name } = connection;
  const change = useMutation({
    mutationFn: (changes: Changes) => serverApi(environmentId).updateSsoConnection({ organizationId: connection.organizationId, connectionId: connection.id, ...changes }),
    onSuccess: async (updated, changes) => {
      if (changes.enabled !== undefined) setSaid(updated.enabled ? `${name} is enabled.` : `${name} is disabled: nobody signs in through it.`);
      if (changes.enforced !== undefined) setSaid(updated.enforced ? `${name} is enforced: passwords are refused for its domains' users.` : `${name} is no longer enforced.`);
      await queryClient.invalidateQueries({ queryKey: connectionsKey(environmentId, connection.organizationId) });
    },
  });
  const mutate = (changes: Changes) => { setSaid(''); change.mutate(changes); };
  return (
    <li>
      <article aria-labelledby={headingId}>
        <h4 id={headingId} className="item-title">
          {name}
          <span className="badge">{TYPE_WORDS[connection.type]}</span>
          <span className={`badge ${connection.enabled ? 'badge-active' : 'badge-disabled'}`}>{connection.enabled ? 'Enabled' : 'Disabled'}</span>
          {connection.enforced && <span className="badge badge-invitation-pending">Enforced</span>}
        </h4>
        {connection.type === 'saml' ? <SamlCopyFields connection={connection} /> : <OidcCopyFields connection={connection} />}
        <dl className="fields">
          {connection.type === 'saml' ? <SamlFields connection={connection} /> : <OidcFields connection={connection} />}
          <dt>Groups attribute</dt><dd><code>{connection.groupsAttribute}</code></dd>
          <dt>Connection id</dt><dd><code>{connection.id}</code></dd>
          <dt>Created</dt><dd>{when(connection.createdAt)}</dd>
        </dl>
        <h5 className="form-title">Group roles</h5>
        <GroupRolesEditor owner={name} groupRoles={connection.groupRoles} environmentId={environmentId} organizationId={connection.organizationId}
          listKey={connectionsKey(environmentId, connection.organizationId)}
          save={(groupRoles) => serverApi(environmentId).updateSsoConnection({ organizationId: connection.organizationId, connectionId: connection.id, groupRoles })} />
        <div className="actions">
          <button type="button" onClick={() => mutate({ enabled: !connection.enabled })} disabled={change.isPending}>
            {connection.enabled ? `Disable ${name}` : `Enable ${name}`}
          </button>
          <button type="button" onClick={() => mutate({ enforced: !connection.enforced })} disabled={change.isPending}>
            {connection.enforced ? `Stop enforcing ${name}` : `Enforce ${name}`}
          </button>
          <button type="button" className="danger" onClick={onDelete}>Delete {name}</button>
        </div>
        <p role="status" className="row-status">{said}</p>
        <ProblemMessage error={change.error} />
      </article>
    </li>
  );
}

/** What the IdP's administrator enters for a SAML connection. */
function SamlCopyFields({ connection }: { connection: Connection }) {
  return (
    <>
      <p>Enter these at the identity provider (or give it the metadata URL):</p>
      {connection.acsUrl && <CopyField label={`ACS URL of ${connection.name}`} value={connection.acsUrl} hint="Assertion Consumer Service URL (HTTP-POST binding); also called Single sign-on URL or Reply URL." />}
      {connection.spEntityId && <CopyField label={`SP entity ID of ${connection.name}`} value={connection.spEntityId} hint="Also called Audience URI or Identifier." />}
      {connection.metadataUrl && <CopyField label={`SP metadata URL of ${connection.name}`} value={connection.metadataUrl} />}
    </>
  );
}

/** What Gatehouse knows of a SAML IdP, read from its metadata. */
function SamlFields({ connection }: { connection: Connection }) {
  return (
    <>
      <dt>IdP entity ID</dt><dd>{connection.idpEntityId ? <code className="wrap">{connection.idpEntityId}</code> : '—'}</dd>
      <dt>IdP sign-in URL</dt><dd>{connection.idpSsoUrl ? <code className="wrap">{connection.idpSsoUrl}</code> : '—'}</dd>
      <dt>IdP metadata URL</dt><dd>{connection.idpMetadataUrl ? <code className="wrap">{connection.idpMetadataUrl}</code> : '—'}</dd>
      <dt>IdP signing certificates</dt><dd>{connection.idpCertificateCount ?? 0}</dd>
    </>
  );
}

/** What the IdP's administrator registers for an OpenID Connect connection. */
function OidcCopyFields({ connection }: { connection: Connection }) {
  return connection.redirectUri
    ? <CopyField label={`Redirect URI of ${connection.name}`} value={connection.redirectUri} hint="Register it at the identity provider as the client's redirect (callback) URI." />
    : null;
}

/** The client Gatehouse uses at an OpenID Connect IdP (never its secret). */
function OidcFields({ connection }: { connection: Connection }) {
  return (
    <>
      <dt>Issuer</dt><dd>{connection.issuer ? <code className="wrap">{connection.issuer}</code> : '—'}</dd>
      <dt>Client ID</dt><dd>{connection.clientId ? <code className="wrap">{connection.clientId}</code> : '—'}</dd>
      <dt>Client secret</dt><dd className="muted">Stored sealed; never shown.</dd>
      <dt>Scopes</dt><dd>{connection.scopes?.join(' ') ?? '—'}</dd>
    </>
  );
}

function DeleteConnection({ connection, environmentId, onClose }: { connection: Connection | null; environmentId: string; onClose: (deleted?: Connection) => void }) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: async (target: Connection) => {
      await serverApi(environmentId).deleteSsoConnection({ organizationId: target.organizationId, connectionId: target.id });
      return target;
    },
    onSuccess: async (deleted) => {
      onClose(deleted);
      await queryClient.invalidateQueries({ queryKey: connectionsKey(environmentId, deleted.organizationId) });
    },
  });
  return (
    <ConfirmDialog open={connection !== null} title="Delete this SSO connection?" confirmLabel="Delete connection" busy={remove.isPending}
      onConfirm={() => connection && remove.mutate(connection)} onCancel={() => { remove.reset(); onClose(); }}>
      <p>Nobody will sign in through {connection?.name} any more{connection?.enforced ? ', and its domains\' users may use passwords again' : ''}. The users it signed in stay.</p>
      <ProblemMessage error={remove.error} />
    </ConfirmDialog>
  );
}

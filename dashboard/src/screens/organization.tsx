import { useMutation, useQuery, useQueryClient, type UseQueryResult } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import type { components } from '@gatehouse/sdk';
import { serverApi } from '../api/gatehouse.js';
import { ConfirmDialog } from '../ui/confirm.js';
import { Page } from '../ui/page.js';
import { Empty, Loaded, Loading, ProblemMessage } from '../ui/states.js';
import { OrganizationEnterprise } from './organization-enterprise.js';
import { OrganizationInvitations } from './organization-invitations.js';
import { OrganizationMembers } from './organization-members.js';
import { organizationRolesQuery, type OrganizationRoles } from './organization-roles.js';

type Organization = components['schemas']['Organization'];

const route = getRouteApi('/signed-in/environments/$environmentId/organizations/$organizationId');

/** One organization: profile (rename, delete), metadata, roles, members, invitations and enterprise sign-in (domains, SCIM, SSO). */
export function OrganizationScreen() {
  const { environmentId, organizationId } = route.useParams();
  const organization = useQuery({
    queryKey: ['organization', environmentId, organizationId],
    queryFn: ({ signal }) => serverApi(environmentId).getOrganization({ organizationId }, { signal }),
  });
  return (
    <>
      <p><Link to="/environments/$environmentId/organizations" params={{ environmentId }}>← All organizations</Link></p>
      <Loaded query={organization} what="the organization" title="Organization">
        {(data) => <OrganizationDetail organization={data} environmentId={environmentId} />}
      </Loaded>
    </>
  );
}

function OrganizationDetail({ organization, environmentId }: { organization: Organization; environmentId: string }) {
  const roles = useQuery(organizationRolesQuery(environmentId, organization.id));
  return (
    <Page title={organization.name}>
      <nav aria-label="On this page" className="settings-toc">
        <ul>
          <li><a href="#profile">Profile</a></li>
          <li><a href="#members">Members</a></li>
          <li><a href="#roles">Roles</a></li>
          <li><a href="#organization-invitations">Invitations</a></li>
          <li><a href="#enterprise-sign-in">Enterprise sign-in</a></li>
        </ul>
      </nav>
      <section aria-labelledby="profile">
        <h2 id="profile">Profile</h2>
        <dl className="fields">
          <dt>Name</dt><dd>{organization.name}</dd>
          <dt>Slug</dt><dd>{organization.slug ?? '—'}</dd>
          <dt>Role set</dt><dd>{roles.data?.name ?? (organization.roleSetId ? <code>{organization.roleSetId}</code> : 'Default')}</dd>
          <dt>Organization id</dt><dd><code>{organization.id}</code></dd>
          <dt>Created</dt><dd>{new Date(organization.createdAt).toLocaleString()}</dd>
        </dl>
        <EditOrganization organization={organization} environmentId={environmentId} />
        <DeleteOrganization organization={organization} environmentId={environmentId} />
      </section>
      <section aria-labelledby="metadata">
        <h2 id="metadata">Metadata</h2>
        {(['publicMetadata', 'privateMetadata'] as const).map((bag) => (
          <div key={bag}>
            <h3>{bag.replace('Metadata', '')} metadata</h3>
            <pre tabIndex={0} aria-label={`${bag.replace('Metadata', '')} metadata`}>{JSON.stringify(organization[bag], null, 2)}</pre>
          </div>
        ))}
      </section>
      <OrganizationMembers organizationId={organization.id} environmentId={environmentId} />
      <Roles roles={roles} />
      <OrganizationInvitations organizationId={organization.id} environmentId={environmentId} />
      <OrganizationEnterprise organizationId={organization.id} environmentId={environmentId} />
    </Page>
  );
}

function EditOrganization({ organization, environmentId }: { organization: Organization; environmentId: string }) {
  const queryClient = useQueryClient();
  const [saved, setSaved] = useState('');
  const update = useMutation({
    mutationFn: (changes: { name?: string; slug?: string | null }) => serverApi(environmentId).updateOrganization({ organizationId: organization.id, ...changes }),
    onSuccess: async (updated) => {
      setSaved('Changes saved.');
      queryClient.setQueryData(['organization', environmentId, organization.id], updated);
      await queryClient.invalidateQueries({ queryKey: ['organizations', environmentId] });
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const name = String(data.get('name')).trim();
    const slug = String(data.get('slug')).trim() || null;
    const changes = { ...(name !== organization.name && { name }), ...(slug !== organization.slug && { slug }) };
    setSaved('');
    if (Object.keys(changes).length === 0) setSaved('Nothing to save: the name and slug are unchanged.');
    else update.mutate(changes);
  };
  return (
    <form onSubmit={onSubmit} className="inline-form" aria-labelledby="edit-organization" key={`${organization.name}|${organization.slug ?? ''}`}>
      <h3 id="edit-organization" className="form-title">Edit</h3>
      <div className="field">
        <label htmlFor="edit-organization-name">Name</label>
        <input id="edit-organization-name" name="name" required maxLength={256} defaultValue={organization.name} autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor="edit-organization-slug">Slug</label>
        <input id="edit-organization-slug" name="slug" maxLength={64} defaultValue={organization.slug ?? ''} aria-describedby="edit-organization-slug-hint" autoComplete="off" />
        <span id="edit-organization-slug-hint" className="hint">Empty removes the slug.</span>
      </div>
      <button type="submit" disabled={update.isPending}>{update.isPending ? 'Saving…' : 'Save changes'}</button>
      <p role="status" className="form-status">{saved}</p>
      <ProblemMessage error={update.error} />
    </form>
  );
}

function DeleteOrganization({ organization, environmentId }: { organization: Organization; environmentId: string }) {
  const [asking, setAsking] = useState(false);
  const queryClient = useQueryClient();
  const navigate = route.useNavigate();
  const remove = useMutation({
    mutationFn: () => serverApi(environmentId).deleteOrganization({ organizationId: organization.id }),
    onSuccess: async () => {
      setAsking(false);
      queryClient.removeQueries({ queryKey: ['organization', environmentId, organization.id] });
      await queryClient.invalidateQueries({ queryKey: ['organizations', environmentId] });
      await navigate({ to: '/environments/$environmentId/organizations', params: { environmentId }, search: {} });
    },
  });
  return (
    <div className="actions">
      <button type="button" className="danger" onClick={() => { remove.reset(); setAsking(true); }}>Delete organization</button>
      <ConfirmDialog open={asking} title="Delete this organization?" confirmLabel="Delete organization" busy={remove.isPending}
        onConfirm={() => remove.mutate()} onCancel={() => setAsking(false)}>
        <p>{organization.name} and every membership in it will be deleted. This cannot be undone.</p>
        <ProblemMessage error={remove.error} />
      </ConfirmDialog>
    </div>
  );
}

const PERMISSION_WORDS: Record<string, string> = {
  'organization:update': 'Rename the organization',
  'organization:delete': 'Delete the organization',
  'members:manage': 'Manage members',
  'invitations:manage': 'Manage invitations',
};

function Roles({ roles }: { roles: UseQueryResult<OrganizationRoles> }) {
  return (
    <section aria-labelledby="roles">
      <h2 id="roles">Roles</h2>
      {roles.isPending && <Loading what="roles" />}
      <ProblemMessage error={roles.error} />
      {roles.data && roles.data.roles.length === 0 && <Empty>This role set has no roles.</Empty>}
      {roles.data && roles.data.roles.length > 0 && (
        <table aria-labelledby="roles">
          <thead><tr><th scope="col">Role</th><th scope="col">Key</th><th scope="col">Permissions (what members with it may do themselves)</th></tr></thead>
          <tbody>
            {roles.data.roles.map((role) => (
              <tr key={role.key}>
                <td>{role.name}</td>
                <td><code>{role.key}</code></td>
                <td>
                  {role.permissions.length === 0 ? <span className="muted">None</span> : (
                    <ul className="plain">{role.permissions.map((permission) => <li key={permission}>{PERMISSION_WORDS[permission] ?? permission} (<code>{permission}</code>)</li>)}</ul>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import type { FormEvent } from 'react';
import { serverApi } from '../api/gatehouse.js';
import { Page } from '../ui/page.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';

const route = getRouteApi('/signed-in/environments/$environmentId/organizations');
const PAGE_SIZE = 25;

/** Organizations of the environment: search by name, one page at a time by the server's cursor (the URL keeps both), and create one. */
export function OrganizationsScreen() {
  const { environmentId } = route.useParams();
  const { name, cursor } = route.useSearch();
  const navigate = route.useNavigate();
  const organizations = useQuery({
    queryKey: ['organizations', environmentId, name ?? '', cursor ?? ''],
    queryFn: ({ signal }) => serverApi(environmentId).listOrganizations({ name, cursor, limit: PAGE_SIZE }, { signal }),
    placeholderData: keepPreviousData,
  });
  const onSearch = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const typed = String(new FormData(event.currentTarget).get('name')).trim();
    void navigate({ search: { name: typed || undefined, cursor: undefined } });
  };
  const page = organizations.data;
  return (
    <Page title="Organizations">
      <CreateOrganization environmentId={environmentId} />
      <h2 id="organizations-list">All organizations</h2>
      <form role="search" aria-label="Organizations" onSubmit={onSearch} className="search">
        <label htmlFor="organization-search">Search by name</label>
        <input id="organization-search" name="name" type="search" defaultValue={name ?? ''} key={name ?? ''} />
        <button type="submit">Search</button>
      </form>
      {organizations.isPending && <Loading what="organizations" />}
      <ProblemMessage error={organizations.error} />
      {page && page.items.length === 0 && (
        <Empty>{name ? `No organization's name contains “${name}”.` : 'This environment has no organizations yet.'}</Empty>
      )}
      {page && page.items.length > 0 && (
        <table aria-labelledby="organizations-list">
          <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Created</th></tr></thead>
          <tbody aria-busy={organizations.isFetching}>
            {page.items.map((organization) => (
              <tr key={organization.id}>
                <td>
                  <Link to="/environments/$environmentId/organizations/$organizationId" params={{ environmentId, organizationId: organization.id }}>
                    {organization.name}
                  </Link>
                </td>
                <td>{organization.slug ?? '—'}</td>
                <td>{new Date(organization.createdAt).toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav aria-label="Pages" className="pager">
        {cursor && <Link from="/environments/$environmentId/organizations" search={{ name, cursor: undefined }}>First page</Link>}
        {page?.hasMore && page.nextCursor && <Link from="/environments/$environmentId/organizations" search={{ name, cursor: page.nextCursor }}>Next page</Link>}
      </nav>
    </Page>
  );
}

/** A new organization (name, optional slug); the dashboard then opens it. */
function CreateOrganization({ environmentId }: { environmentId: string }) {
  const queryClient = useQueryClient();
  const navigate = route.useNavigate();
  const create = useMutation({
    mutationFn: (body: { name: string; slug?: string }) => serverApi(environmentId).createOrganization(body),
    onSuccess: async (organization) => {
      queryClient.setQueryData(['organization', environmentId, organization.id], organization);
      await queryClient.invalidateQueries({ queryKey: ['organizations', environmentId] });
      await navigate({ to: '/environments/$environmentId/organizations/$organizationId', params: { environmentId, organizationId: organization.id } });
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const slug = String(data.get('slug')).trim();
    create.mutate({ name: String(data.get('name')).trim(), ...(slug && { slug }) });
  };
  return (
    <section aria-labelledby="create-organization">
      <h2 id="create-organization">Create an organization</h2>
      <form onSubmit={onSubmit} className="inline-form">
        <div className="field">
          <label htmlFor="organization-name">Name</label>
          <input id="organization-name" name="name" required maxLength={256} autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor="organization-slug">Slug (optional)</label>
          <input id="organization-slug" name="slug" maxLength={64} aria-describedby="organization-slug-hint" autoComplete="off" />
          <span id="organization-slug-hint" className="hint">Lower-case letters, digits and inner hyphens; unique in the environment.</span>
        </div>
        <button type="submit" className="primary" disabled={create.isPending}>{create.isPending ? 'Creating…' : 'Create organization'}</button>
      </form>
      <ProblemMessage error={create.error} />
    </section>
  );
}

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import type { FormEvent } from 'react';
import { serverApi } from '../api/gatehouse.js';
import { Page } from '../ui/page.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';
import { StatusBadge } from '../ui/status.js';

const route = getRouteApi('/signed-in/environments/$environmentId/users');
const PAGE_SIZE = 25;

/** Users of the environment: search by email, one page at a time by the server's cursor (the URL keeps both). */
export function UsersScreen() {
  const { environmentId } = route.useParams();
  const { email, cursor } = route.useSearch();
  const navigate = route.useNavigate();
  const users = useQuery({
    queryKey: ['users', environmentId, email ?? '', cursor ?? ''],
    queryFn: ({ signal }) => serverApi(environmentId).listUsers({ emailSearch: email, cursor, limit: PAGE_SIZE }, { signal }),
    placeholderData: keepPreviousData,
  });
  const onSearch = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const typed = String(new FormData(event.currentTarget).get('email')).trim();
    void navigate({ search: { email: typed || undefined, cursor: undefined } });
  };
  const page = users.data;
  return (
    <Page title="Users">
      <p><Link to="/environments/$environmentId/users/new" params={{ environmentId }} className="button-link">Create user</Link></p>
      <form role="search" onSubmit={onSearch} className="search">
        <label htmlFor="email-search">Search by email</label>
        <input id="email-search" name="email" type="search" defaultValue={email ?? ''} key={email ?? ''} />
        <button type="submit">Search</button>
      </form>
      {users.isPending && <Loading what="users" />}
      <ProblemMessage error={users.error} />
      {page && page.items.length === 0 && <Empty>{email ? `No user's email contains “${email}”.` : 'This environment has no users yet.'}</Empty>}
      {page && page.items.length > 0 && (
        <table>
          <caption className="visually-hidden">{email ? `Users whose email contains “${email}”` : 'Users'}</caption>
          <thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
          <tbody aria-busy={users.isFetching}>
            {page.items.map((user) => (
              <tr key={user.id}>
                <td><Link to="/environments/$environmentId/users/$userId" params={{ environmentId, userId: user.id }}>{user.email ?? '(no email)'}</Link></td>
                <td>{user.name ?? ''}</td>
                <td><StatusBadge status={user.status} /></td>
                <td>{new Date(user.createdAt).toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav aria-label="Pages" className="pager">
        {cursor && <Link from="/environments/$environmentId/users" search={{ email, cursor: undefined }}>First page</Link>}
        {page?.hasMore && page.nextCursor && <Link from="/environments/$environmentId/users" search={{ email, cursor: page.nextCursor }}>Next page</Link>}
      </nav>
    </Page>
  );
}

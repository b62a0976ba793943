import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { Page } from '../ui/page.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';
import { StatusBadge } from '../ui/status.js';
import { describeSearch, searchProblem, usersPage, UsersSearchForm } from './users-search.js';

const route = getRouteApi('/signed-in/environments/$environmentId/users');
const PAGE_SIZE = 25;

/** Users of the environment: search by email, name or metadata, one page at a time by the server's cursor (the URL keeps both). */
export function UsersScreen() {
  const { environmentId } = route.useParams();
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const problem = searchProblem(search);
  const users = useQuery({
    queryKey: ['users', environmentId, search],
    queryFn: ({ signal }) => usersPage(environmentId, search, PAGE_SIZE, signal),
    placeholderData: keepPreviousData,
    enabled: !problem,
  });
  const page = problem ? undefined : users.data;
  const described = describeSearch(search);
  const { cursor, ...withoutCursor } = search;
  return (
    <Page title="Users">
      <p><Link to="/environments/$environmentId/users/new" params={{ environmentId }} className="button-link">Create user</Link></p>
      <UsersSearchForm search={search} onSearch={(next) => void navigate({ search: next })} />
      {problem && <p role="alert" className="problem">{problem}</p>}
      {!problem && users.isPending && <Loading what="users" />}
      <ProblemMessage error={problem ? null : users.error} />
      {page && page.items.length === 0 && <Empty>{described ? `No user ${described}.` : 'This environment has no users yet.'}</Empty>}
      {page && page.items.length > 0 && (
        <table>
          <caption className="visually-hidden">{described ? `Users ${described}` : 'Users'}</caption>
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
        {cursor && <Link from="/environments/$environmentId/users" search={withoutCursor}>First page</Link>}
        {page?.hasMore && page.nextCursor && <Link from="/environments/$environmentId/users" search={{ ...withoutCursor, cursor: page.nextCursor }}>Next page</Link>}
      </nav>
    </Page>
  );
}

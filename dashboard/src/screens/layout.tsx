import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, Outlet, useNavigate, useParams } from '@tanstack/react-router';
import { operatorSession } from '../api/gatehouse.js';
import { environmentsQuery } from '../queries.js';
import { ProblemMessage } from '../ui/states.js';

const signedIn = getRouteApi('/signed-in');

/** The frame of every signed-in screen: skip link, header with the navigation, the operator and sign-out. */
export function Layout() {
  const { operator } = signedIn.useRouteContext();
  const { environmentId } = useParams({ strict: false });
  const environments = useQuery(environmentsQuery);
  const current = environments.data?.find((environment) => environment.id === environmentId);
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const signOut = useMutation({
    mutationFn: operatorSession.signOut,
    onSuccess: async () => {
      queryClient.clear();
      await navigate({ to: '/sign-in' });
    },
  });
  return (
    <>
      <a className="skip" href="#main">Skip to content</a>
      <header className="top">
        <p className="brand">Gatehouse</p>
        <nav aria-label="Main">
          <ul>
            <li><Link to="/environments" activeOptions={{ exact: true }}>Environments</Link></li>
            {environmentId && (
              <>
                <li><Link to="/environments/$environmentId/users" params={{ environmentId }}>Users</Link></li>
                <li><Link to="/environments/$environmentId/organizations" params={{ environmentId }}>Organizations</Link></li>
                <li><Link to="/environments/$environmentId/invitations" params={{ environmentId }}>Invitations</Link></li>
                <li><Link to="/environments/$environmentId/audit-log" params={{ environmentId }}>Audit log</Link></li>
                <li><Link to="/environments/$environmentId/webhooks" params={{ environmentId }}>Webhooks</Link></li>
                <li><Link to="/environments/$environmentId/outbox" params={{ environmentId }}>Mail outbox</Link></li>
                <li><Link to="/environments/$environmentId/settings" params={{ environmentId }}>Settings</Link></li>
              </>
            )}
          </ul>
        </nav>
        {current && <p className="current-env">Environment: <strong>{current.name}</strong></p>}
        <div className="operator">
          <span>{operator.email}</span>
          <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>Sign out</button>
        </div>
      </header>
      <main id="main">
        <ProblemMessage error={signOut.error} />
        <Outlet />
      </main>
    </>
  );
}

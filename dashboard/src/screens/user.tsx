import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { serverApi, type User } from '../api/gatehouse.js';
import { ConfirmDialog } from '../ui/confirm.js';
import { Page } from '../ui/page.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';
import { StatusBadge } from '../ui/status.js';

const route = getRouteApi('/signed-in/environments/$environmentId/users/$userId');

/** One user: profile, the three metadata bags, sessions, and ban/unban behind a confirmation. */
export function UserScreen() {
  const { environmentId, userId } = route.useParams();
  const api = serverApi(environmentId);
  const user = useQuery({ queryKey: ['user', environmentId, userId], queryFn: ({ signal }) => api.getUser({ userId }, { signal }) });
  return (
    <>
      <p><Link to="/environments/$environmentId/users" params={{ environmentId }}>← All users</Link></p>
      {user.isPending && <Loading what="the user" />}
      {user.error && <Page title="User"><ProblemMessage error={user.error} /></Page>}
      {user.data && <UserDetail user={user.data} environmentId={environmentId} />}
    </>
  );
}

function UserDetail({ user, environmentId }: { user: User; environmentId: string }) {
  return (
    <Page title={user.email ?? user.name ?? user.id}>
      <section aria-labelledby="profile">
        <h2 id="profile">Profile</h2>
        <dl className="fields">
          <dt>Status</dt><dd><StatusBadge status={user.status} /></dd>
          <dt>Email</dt><dd>{user.email ?? '—'}{user.email && (user.emailVerifiedAt ? ' (verified)' : ' (not verified)')}</dd>
          <dt>Name</dt><dd>{user.name ?? '—'}</dd>
          <dt>Locale</dt><dd>{user.locale ?? '—'}</dd>
          <dt>User id</dt><dd><code>{user.id}</code></dd>
          <dt>Created</dt><dd>{new Date(user.createdAt).toLocaleString()}</dd>
        </dl>
        <BanAction user={user} environmentId={environmentId} />
      </section>
      <section aria-labelledby="metadata">
        <h2 id="metadata">Metadata</h2>
        {(['publicMetadata', 'privateMetadata', 'unsafeMetadata'] as const).map((bag) => (
          <div key={bag}>
            <h3>{bag.replace('Metadata', '')} metadata</h3>
            <pre tabIndex={0} aria-label={`${bag.replace('Metadata', '')} metadata`}>{JSON.stringify(user[bag], null, 2)}</pre>
          </div>
        ))}
      </section>
      <Sessions environmentId={environmentId} userId={user.id} />
    </Page>
  );
}

function BanAction({ user, environmentId }: { user: User; environmentId: string }) {
  const [asking, setAsking] = useState(false);
  const [done, setDone] = useState('');
  const queryClient = useQueryClient();
  const banned = user.status === 'banned';
  const change = useMutation({
    mutationFn: () => (banned ? serverApi(environmentId).unbanUser({ userId: user.id }) : serverApi(environmentId).banUser({ userId: user.id })),
    onSuccess: async (updated) => {
      setAsking(false);
      setDone(updated.status === 'banned' ? `${updated.email ?? 'The user'} is banned; their sessions were revoked.` : `${updated.email ?? 'The user'} is no longer banned.`);
      queryClient.setQueryData(['user', environmentId, user.id], updated);
      await queryClient.invalidateQueries({ queryKey: ['users', environmentId] });
      await queryClient.invalidateQueries({ queryKey: ['sessions', environmentId, user.id] });
    },
  });
  if (user.status === 'deleted') return <p>This user was deleted.</p>;
  const action = banned ? 'Unban user' : 'Ban user';
  return (
    <div className="actions">
      <button type="button" className={banned ? '' : 'danger'} onClick={() => { change.reset(); setDone(''); setAsking(true); }}>{action}</button>
      <p role="status">{done}</p>
      <ConfirmDialog open={asking} title={banned ? 'Unban this user?' : 'Ban this user?'} confirmLabel={action} busy={change.isPending}
        onConfirm={() => change.mutate()} onCancel={() => setAsking(false)}>
        <p>{banned ? `${user.email ?? 'The user'} will be able to sign in again.` : `${user.email ?? 'The user'} will be signed out everywhere and unable to sign in until unbanned.`}</p>
        <ProblemMessage error={change.error} />
      </ConfirmDialog>
    </div>
  );
}

function Sessions({ environmentId, userId }: { environmentId: string; userId: string }) {
  const sessions = useQuery({
    queryKey: ['sessions', environmentId, userId],
    queryFn: ({ signal }) => serverApi(environmentId).listUserSessions({ userId }, { signal }),
  });
  return (
    <section aria-labelledby="sessions">
      <h2 id="sessions">Sessions</h2>
      {sessions.isPending && <Loading what="sessions" />}
      <ProblemMessage error={sessions.error} />
      {sessions.data?.items.length === 0 && <Empty>No sessions.</Empty>}
      {sessions.data && sessions.data.items.length > 0 && (
        <table>
          <thead><tr><th scope="col">Started</th><th scope="col">Last active</th><th scope="col">Status</th><th scope="col">Device</th><th scope="col">Expires</th></tr></thead>
          <tbody>
            {sessions.data.items.map((session) => (
              <tr key={session.id}>
                <td>{new Date(session.createdAt).toLocaleString()}</td>
                <td>{new Date(session.lastActiveAt).toLocaleString()}</td>
                <td>{session.status}{session.actor && ' (impersonated)'}</td>
                <td>{[session.ipAddress, session.userAgent].filter(Boolean).join(' · ') || '—'}</td>
                <td>{new Date(session.expiresAt).toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

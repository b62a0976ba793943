import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { serverApi, type User } from '../api/gatehouse.js';
import { ConfirmDialog } from '../ui/confirm.js';
import { Page } from '../ui/page.js';
import { Loaded, ProblemMessage } from '../ui/states.js';
import { StatusBadge } from '../ui/status.js';
import { Impersonate } from './user-impersonate.js';
import { MetadataEditor } from './user-metadata.js';
import { EmailAddresses, Factors, Identities, Organizations, Sessions, UserAuditEvents } from './user-sections.js';

const route = getRouteApi('/signed-in/environments/$environmentId/users/$userId');

/**
 * One user: profile, the three metadata bags (editable, with their budget), sessions, identities, email
 * addresses, factors, organizations and audit events; ban, unban, delete and impersonate.
 */
export function UserScreen() {
  const { environmentId, userId } = route.useParams();
  const api = serverApi(environmentId);
  const user = useQuery({ queryKey: ['user', environmentId, userId], queryFn: ({ signal }) => api.getUser({ userId }, { signal }) });
  return (
    <>
      <p><Link to="/environments/$environmentId/users" params={{ environmentId }}>← All users</Link></p>
      <Loaded query={user} what="the user" title="User">{(data) => <UserDetail user={data} environmentId={environmentId} />}</Loaded>
    </>
  );
}

function UserDetail({ user, environmentId }: { user: User; environmentId: string }) {
  const deleted = user.status === 'deleted';
  const props = { environmentId, userId: user.id, deleted };
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
          {user.deletedAt && <><dt>Deleted</dt><dd>{new Date(user.deletedAt).toLocaleString()}</dd></>}
        </dl>
        <div className="actions">
          <BanAction user={user} environmentId={environmentId} />
          <DeleteAction user={user} environmentId={environmentId} />
        </div>
      </section>
      <MetadataEditor user={user} environmentId={environmentId} />
      <Impersonate user={user} environmentId={environmentId} />
      <Sessions {...props} />
      <Identities {...props} />
      <EmailAddresses {...props} />
      <Factors {...props} />
      <Organizations {...props} />
      <UserAuditEvents {...props} />
    </Page>
  );
}

/** Deletes the user for good (the Server API answers 403 user_deleted to a repeat); the screen then shows them as deleted. */
function DeleteAction({ user, environmentId }: { user: User; environmentId: string }) {
  const [asking, setAsking] = useState(false);
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: async () => {
      await serverApi(environmentId).deleteUser({ userId: user.id });
      return serverApi(environmentId).getUser({ userId: user.id });
    },
    onSuccess: async (updated) => {
      setAsking(false);
      queryClient.setQueryData(['user', environmentId, user.id], updated);
      await queryClient.invalidateQueries({ queryKey: ['users', environmentId] });
      await queryClient.invalidateQueries({ queryKey: ['sessions', environmentId, user.id] });
      await queryClient.invalidateQueries({ queryKey: ['user-audit', environmentId, user.id] });
    },
  });
  if (user.status === 'deleted') return null;
  return (
    <>
      <button type="button" className="danger" onClick={() => { remove.reset(); setAsking(true); }}>Delete user</button>
      <ConfirmDialog open={asking} title="Delete this user?" confirmLabel="Delete user" busy={remove.isPending}
        onConfirm={() => remove.mutate()} onCancel={() => setAsking(false)}>
        <p>{user.email ?? 'The user'} is deleted: signed out everywhere and unable to sign in again. This cannot be undone.</p>
        <ProblemMessage error={remove.error} />
      </ConfirmDialog>
    </>
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
  if (user.status === 'deleted') return <p role="status">This user was deleted.</p>;
  const action = banned ? 'Unban user' : 'Ban user';
  return (
    <>
      <button type="button" className={banned ? '' : 'danger'} onClick={() => { change.reset(); setDone(''); setAsking(true); }}>{action}</button>
      <p role="status">{done}</p>
      <ConfirmDialog open={asking} title={banned ? 'Unban this user?' : 'Ban this user?'} confirmLabel={action} busy={change.isPending}
        onConfirm={() => change.mutate()} onCancel={() => setAsking(false)}>
        <p>{banned ? `${user.email ?? 'The user'} will be able to sign in again.` : `${user.email ?? 'The user'} will be signed out everywhere and unable to sign in until unbanned.`}</p>
        <ProblemMessage error={change.error} />
      </ConfirmDialog>
    </>
  );
}

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { serverApi, type Session } from '../api/gatehouse.js';
import { ConfirmDialog } from '../ui/confirm.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';

interface Props { environmentId: string; userId: string; deleted: boolean }

const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** A destructive action on the user: its button, a confirmation, the outcome announced. */
function ConfirmedAction({ label, title, body, done, run, disabled }: {
  label: string; title: string; body: string; done: string; run: () => Promise<unknown>; disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [finished, setFinished] = useState('');
  const action = useMutation({ mutationFn: run, onSuccess: () => { setAsking(false); setFinished(done); } });
  return (
    <>
      <button type="button" className="danger" disabled={disabled} onClick={() => { action.reset(); setFinished(''); setAsking(true); }}>{label}</button>
      <span role="status">{finished}</span>
      <ConfirmDialog open={asking} title={title} confirmLabel={label} busy={action.isPending} onConfirm={() => action.mutate()} onCancel={() => setAsking(false)}>
        <p>{body}</p>
        <ProblemMessage error={action.error} />
      </ConfirmDialog>
    </>
  );
}

/** The user's sessions, each revocable, and all of them at once; both confirmed. */
export function Sessions({ environmentId, userId, deleted }: Props) {
  const queryClient = useQueryClient();
  const key = ['sessions', environmentId, userId];
  const sessions = useQuery({ queryKey: key, queryFn: ({ signal }) => serverApi(environmentId).listUserSessions({ userId }, { signal }) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: key });
  const live = sessions.data?.items.filter((session) => session.status === 'active') ?? [];
  return (
    <section aria-labelledby="sessions">
      <h2 id="sessions">Sessions</h2>
      {sessions.isPending && <Loading what="sessions" />}
      <ProblemMessage error={sessions.error} />
      {sessions.data?.items.length === 0 && <Empty>No sessions.</Empty>}
      {sessions.data && sessions.data.items.length > 0 && (
        <table>
          <caption className="visually-hidden">Sessions</caption>
          <thead><tr><th scope="col">Started</th><th scope="col">Last active</th><th scope="col">Status</th><th scope="col">Device</th><th scope="col">Expires</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {sessions.data.items.map((session) => (
              <tr key={session.id}>
                <td>{when(session.createdAt)}</td>
                <td>{when(session.lastActiveAt)}</td>
                <td>{session.status}{session.actor && ` (impersonated by ${session.actor.type === 'operator' ? 'an operator' : 'a user'})`}</td>
                <td>{[session.ipAddress, session.userAgent].filter(Boolean).join(' · ') || '—'}</td>
                <td>{when(session.expiresAt)}</td>
                <td>{session.status === 'active' && !deleted && <RevokeSession environmentId={environmentId} userId={userId} session={session} onDone={refresh} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {sessions.data && !deleted && (
        <div className="actions">
          <ConfirmedAction label="Revoke all sessions" disabled={live.length === 0} title="Revoke all of this user's sessions?"
            body={`All ${live.length} active session${live.length === 1 ? '' : 's'} end at once; the user is signed out everywhere.`}
            done="All sessions were revoked."
            run={async () => { await serverApi(environmentId).revokeUserSessions({ userId }); await refresh(); }} />
        </div>
      )}
    </section>
  );
}

function RevokeSession({ environmentId, userId, session, onDone }: { environmentId: string; userId: string; session: Session; onDone: () => Promise<unknown> }) {
  const [asking, setAsking] = useState(false);
  const revoke = useMutation({
    mutationFn: () => serverApi(environmentId).revokeUserSession({ userId, sessionId: session.id }),
    onSuccess: async () => { setAsking(false); await onDone(); },
  });
  const started = when(session.createdAt);
  return (
    <>
      <button type="button" onClick={() => { revoke.reset(); setAsking(true); }} aria-label={`Revoke the session started ${started}`}>Revoke</button>
      <ConfirmDialog open={asking} title="Revoke this session?" confirmLabel="Revoke session" busy={revoke.isPending} onConfirm={() => revoke.mutate()} onCancel={() => setAsking(false)}>
        <p>The session started {started} ends now; its device is signed out.</p>
        <ProblemMessage error={revoke.error} />
      </ConfirmDialog>
    </>
  );
}

/** Accounts at external providers the user signs in with. */
export function Identities({ environmentId, userId }: Props) {
  const identities = useQuery({ queryKey: ['identities', environmentId, userId], queryFn: ({ signal }) => serverApi(environmentId).listUserIdentities({ userId }, { signal }) });
  return (
    <section aria-labelledby="identities">
      <h2 id="identities">Identities</h2>
      {identities.isPending && <Loading what="identities" />}
      <ProblemMessage error={identities.error} />
      {identities.data?.items.length === 0 && <Empty>No external identities: the user signs in without a provider.</Empty>}
      {identities.data && identities.data.items.length > 0 && (
        <table>
          <caption className="visually-hidden">Identities</caption>
          <thead><tr><th scope="col">Provider</th><th scope="col">Subject</th><th scope="col">Email</th><th scope="col">Linked</th><th scope="col">Last sign-in</th></tr></thead>
          <tbody>
            {identities.data.items.map((identity) => (
              <tr key={identity.id}>
                <td>{identity.provider}</td><td><code>{identity.subject}</code></td>
                <td>{identity.email ?? '—'}{identity.email && (identity.emailVerified ? ' (verified)' : ' (not verified)')}</td>
                <td>{when(identity.createdAt)}</td><td>{when(identity.lastSignInAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function EmailAddresses({ environmentId, userId }: Props) {
  const addresses = useQuery({ queryKey: ['email-addresses', environmentId, userId], queryFn: ({ signal }) => serverApi(environmentId).listUserEmailAddresses({ userId }, { signal }) });
  return (
    <section aria-labelledby="email-addresses">
      <h2 id="email-addresses">Email addresses</h2>
      {addresses.isPending && <Loading what="email addresses" />}
      <ProblemMessage error={addresses.error} />
      {addresses.data?.items.length === 0 && <Empty>No email addresses.</Empty>}
      {addresses.data && addresses.data.items.length > 0 && (
        <ul className="user-list">
          {addresses.data.items.map((address) => (
            <li key={address.id}>{address.email} · {address.verified ? 'verified' : 'not verified'}{address.primary && ' · primary'}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Second factors and passkeys; "Reset factors" removes every second factor and the backup codes. */
export function Factors({ environmentId, userId, deleted }: Props) {
  const queryClient = useQueryClient();
  const key = ['factors', environmentId, userId];
  const factors = useQuery({ queryKey: key, queryFn: ({ signal }) => serverApi(environmentId).getUserFactors({ userId }, { signal }) });
  const passkeys = useQuery({ queryKey: ['passkeys', environmentId, userId], queryFn: ({ signal }) => serverApi(environmentId).getUserPasskeys({ userId }, { signal }) });
  const enrolled = factors.data?.factors ?? [];
  return (
    <section aria-labelledby="factors">
      <h2 id="factors">Factors</h2>
      <h3>Second factors</h3>
      {factors.isPending && <Loading what="second factors" />}
      <ProblemMessage error={factors.error} />
      {factors.data && enrolled.length === 0 && <Empty>No second factor enrolled.</Empty>}
      {enrolled.length > 0 && (
        <>
          <ul className="user-list">
            {enrolled.map((factor) => <li key={factor.id}>{factor.name} ({factor.type.toUpperCase()}) · added {when(factor.createdAt)} · last used {when(factor.lastUsedAt)}</li>)}
          </ul>
          <p>{factors.data?.backupCodesRemaining} backup codes left.</p>
        </>
      )}
      {factors.data && !deleted && (
        <div className="actions">
          <ConfirmedAction label="Reset factors" disabled={enrolled.length === 0} title="Reset this user's second factors?"
            body="Every second factor and the backup codes are removed; the user signs in with their password alone until they enrol again."
            done="The second factors were reset."
            run={async () => { await serverApi(environmentId).resetUserFactors({ userId }); await queryClient.invalidateQueries({ queryKey: key }); }} />
        </div>
      )}
      <h3>Passkeys</h3>
      {passkeys.isPending && <Loading what="passkeys" />}
      <ProblemMessage error={passkeys.error} />
      {passkeys.data?.items.length === 0 && <Empty>No passkeys.</Empty>}
      {passkeys.data && passkeys.data.items.length > 0 && (
        <ul className="user-list">
          {passkeys.data.items.map((passkey) => (
            <li key={passkey.id}>{passkey.name} · {passkey.deviceType === 'multiDevice' ? 'synced' : 'single device'} · added {when(passkey.createdAt)} · last used {when(passkey.lastUsedAt)}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function Organizations({ environmentId, userId }: Props) {
  const memberships = useQuery({ queryKey: ['user-organizations', environmentId, userId], queryFn: ({ signal }) => serverApi(environmentId).listUserOrganizations({ userId, limit: 100 }, { signal }) });
  return (
    <section aria-labelledby="organizations">
      <h2 id="organizations">Organizations</h2>
      {memberships.isPending && <Loading what="organizations" />}
      <ProblemMessage error={memberships.error} />
      {memberships.data?.items.length === 0 && <Empty>Not a member of any organization.</Empty>}
      {memberships.data && memberships.data.items.length > 0 && (
        <table>
          <caption className="visually-hidden">Organizations</caption>
          <thead><tr><th scope="col">Organization</th><th scope="col">Role</th><th scope="col">Joined</th></tr></thead>
          <tbody>
            {memberships.data.items.map((membership) => (
              <tr key={membership.organizationId}>
                <td><Link to="/environments/$environmentId/organizations/$organizationId" params={{ environmentId, organizationId: membership.organizationId }}>{membership.organization.name}</Link></td>
                <td>{membership.roleName ?? membership.role}</td>
                <td>{when(membership.joinedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {memberships.data?.hasMore && <p className="muted">Showing the first 100 memberships.</p>}
    </section>
  );
}

const AUDIT_SHOWN = 50;

/** Events with the user as actor or as a target, newest first, each linking to its detail in the audit log. */
export function UserAuditEvents({ environmentId, userId }: Props) {
  const events = useQuery({
    queryKey: ['user-audit', environmentId, userId],
    queryFn: async ({ signal }) => {
      // The newest of each kind cover the newest overall: two newest-first pages, merged.
      const newest = (query: { actorId?: string; targetType?: string; targetId?: string }) =>
        serverApi(environmentId).searchAuditEvents({ ...query, order: 'desc', limit: AUDIT_SHOWN }, { signal });
      const [asActor, asTarget] = await Promise.all([newest({ actorId: userId }), newest({ targetType: 'user', targetId: userId })]);
      const byId = new Map([...asActor.items, ...asTarget.items].map((event) => [event.id, event]));
      const items = [...byId.values()].sort((a, b) => b.sequence - a.sequence).slice(0, AUDIT_SHOWN);
      return { items, more: asActor.hasMore || asTarget.hasMore || byId.size > AUDIT_SHOWN };
    },
  });
  const shown = events.data?.items ?? [];
  return (
    <section aria-labelledby="user-audit">
      <h2 id="user-audit">Audit events</h2>
      {events.isPending && <Loading what="audit events" />}
      <ProblemMessage error={events.error} />
      {events.data?.items.length === 0 && <Empty>No audit events name this user.</Empty>}
      {shown.length > 0 && (
        <table>
          <caption className="visually-hidden">Audit events of this user, newest first</caption>
          <thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Actor</th><th scope="col">Result</th></tr></thead>
          <tbody>
            {shown.map((event) => (
              <tr key={event.id}>
                <td>{when(event.occurredAt)}</td>
                <td><Link to="/environments/$environmentId/audit-log/$eventId" params={{ environmentId, eventId: event.id }}>{event.action}</Link></td>
                <td>{event.actor.id === userId ? 'this user' : event.actor.type}{event.actor.impersonatorId && ' (impersonated)'}</td>
                <td>{event.result}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {events.data?.more && (
        <p className="muted">
          Showing the {shown.length} newest.{' '}
          <Link to="/environments/$environmentId/audit-log" params={{ environmentId }}>Open the audit log</Link> for the rest.
        </p>
      )}
    </section>
  );
}

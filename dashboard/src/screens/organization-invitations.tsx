import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { components } from '@gatehouse/sdk';
import { serverApi } from '../api/gatehouse.js';
import { ConfirmDialog } from '../ui/confirm.js';
import { InvitationStatusBadge } from '../ui/invitations-status.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';
import { organizationRolesQuery } from './organization-roles.js';

type Invitation = components['schemas']['OrganizationInvitation'];
type Created = components['schemas']['CreatedOrganizationInvitation'];
const PAGE_SIZE = 25;

/** The organization's pending invitations: invite an email with a role (the token shown once), revoke behind a confirmation. */
export function OrganizationInvitations({ organizationId, environmentId }: { organizationId: string; environmentId: string }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const [revoking, setRevoking] = useState<Invitation | null>(null);
  const [revoked, setRevoked] = useState('');
  const invitations = useQuery({
    queryKey: ['organization-invitations', environmentId, organizationId, cursor ?? ''],
    queryFn: ({ signal }) => serverApi(environmentId).listOrganizationInvitations({ organizationId, cursor, limit: PAGE_SIZE }, { signal }),
    placeholderData: keepPreviousData,
  });
  const page = invitations.data;
  return (
    <section aria-labelledby="organization-invitations">
      <h2 id="organization-invitations">Invitations</h2>
      <Invite organizationId={organizationId} environmentId={environmentId} />
      <h3 id="pending-invitations">Pending invitations</h3>
      {invitations.isPending && <Loading what="invitations" />}
      <ProblemMessage error={invitations.error} />
      <p role="status" className="form-status">{revoked}</p>
      {page && page.items.length === 0 && <Empty>No pending invitations.</Empty>}
      {page && page.items.length > 0 && (
        <table aria-labelledby="pending-invitations">
          <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
          <tbody aria-busy={invitations.isFetching}>
            {page.items.map((invitation) => (
              <tr key={invitation.id}>
                <td>{invitation.email}</td>
                <td>{invitation.role}</td>
                <td><InvitationStatusBadge status={invitation.status} /></td>
                <td>{new Date(invitation.expiresAt).toLocaleString()}</td>
                <td>
                  <button type="button" className="danger" onClick={() => { setRevoked(''); setRevoking(invitation); }}
                    aria-label={`Revoke the invitation of ${invitation.email}`}>Revoke</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="pager">
        {cursors.length > 0 && <button type="button" onClick={() => setCursors([])}>First invitations</button>}
        {page?.hasMore && page.nextCursor && <button type="button" onClick={() => setCursors([...cursors, page.nextCursor!])}>Next invitations</button>}
      </div>
      <RevokeInvitation invitation={revoking} environmentId={environmentId}
        onClose={(done) => { setRevoking(null); if (done) setRevoked(`The invitation of ${done.email} was revoked.`); }} />
    </section>
  );
}

function Invite({ organizationId, environmentId }: { organizationId: string; environmentId: string }) {
  const queryClient = useQueryClient();
  const roles = useQuery(organizationRolesQuery(environmentId, organizationId));
  const [created, setCreated] = useState<Created | null>(null);
  const invite = useMutation({
    mutationFn: (body: { email: string; role: string }) => serverApi(environmentId).createOrganizationInvitation({ organizationId, ...body }),
    onSuccess: async (invitation) => {
      setCreated(invitation);
      await queryClient.invalidateQueries({ queryKey: ['organization-invitations', environmentId, organizationId] });
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    setCreated(null);
    invite.mutate({ email: String(data.get('email')).trim(), role: String(data.get('role')) }, { onSuccess: () => form.reset() });
  };
  const defaultRole = roles.data?.roles.some((role) => role.key === 'member') ? 'member' : roles.data?.roles.at(-1)?.key;
  return (
    <>
      <form onSubmit={onSubmit} className="inline-form" aria-labelledby="invite-member">
        <h3 id="invite-member" className="form-title">Invite by email</h3>
        <div className="field">
          <label htmlFor="invite-member-email">Email</label>
          <input id="invite-member-email" name="email" type="email" required autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor="invite-member-role">Role</label>
          <select id="invite-member-role" name="role" required defaultValue={defaultRole} key={defaultRole ?? ''}>
            {roles.data?.roles.map((role) => <option key={role.key} value={role.key}>{role.name}</option>)}
          </select>
        </div>
        <button type="submit" className="primary" disabled={invite.isPending || !roles.data}>{invite.isPending ? 'Sending…' : 'Send invitation'}</button>
      </form>
      <div role="status" className="form-status">
        {created && (created.emailDelivery === 'dispatched'
          ? <p>Invitation mailed to {created.email}.</p>
          : (
            <>
              <p>Invitation created for {created.email}, but not mailed: the environment has no invitation accept URL and hosted pages are off. Give them this token; it is shown only now:</p>
              <p><code className="token">{created.token}</code></p>
            </>
          ))}
      </div>
      <ProblemMessage error={invite.error} />
    </>
  );
}

function RevokeInvitation({ invitation, environmentId, onClose }: { invitation: Invitation | null; environmentId: string; onClose: (done?: Invitation) => void }) {
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: (target: Invitation) => serverApi(environmentId).revokeOrganizationInvitation({ organizationId: target.organizationId, invitationId: target.id }),
    onSuccess: async (done) => {
      onClose(done);
      await queryClient.invalidateQueries({ queryKey: ['organization-invitations', environmentId, done.organizationId] });
    },
  });
  return (
    <ConfirmDialog open={invitation !== null} title="Revoke this invitation?" confirmLabel="Revoke invitation" busy={revoke.isPending}
      onConfirm={() => invitation && revoke.mutate(invitation)} onCancel={() => { revoke.reset(); onClose(); }}>
      <p>The invitation of {invitation?.email} will stop working. You can invite them again later.</p>
      <ProblemMessage error={revoke.error} />
    </ConfirmDialog>
  );
}

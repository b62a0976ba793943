import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import type { components } from '@gatehouse/sdk';
import { serverApi } from '../api/gatehouse.js';
import { InvitationStatusBadge } from '../ui/invitations-status.js';
import { ConfirmDialog } from '../ui/confirm.js';
import { Page } from '../ui/page.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';

type Invitation = components['schemas']['InvitationSummary'];
type Status = Invitation['status'];

const STATUSES = ['pending', 'accepted', 'revoked', 'expired'] as const;
export type InvitationStatusFilter = typeof STATUSES[number];
/** The status filter as the URL keeps it (lower case), or undefined for any status. */
export const invitationStatus = (value: unknown): InvitationStatusFilter | undefined =>
  STATUSES.find((status) => status === value);

const route = getRouteApi('/signed-in/environments/$environmentId/invitations');
const PAGE_SIZE = 25;

/** Environment invitations: filter by status and email, page by the server's cursor (the URL keeps all three); invite, resend, revoke. */
export function InvitationsScreen() {
  const { environmentId } = route.useParams();
  const { status, search, cursor } = route.useSearch();
  const navigate = route.useNavigate();
  const [revoking, setRevoking] = useState<Invitation | null>(null);
  const invitations = useQuery({
    queryKey: ['invitations', environmentId, status ?? '', search ?? '', cursor ?? ''],
    queryFn: ({ signal }) => serverApi(environmentId).listInvitations({
      status: status ? [status.toUpperCase() as Status] : undefined, search, cursor, limit: PAGE_SIZE,
    }, { signal }),
    placeholderData: keepPreviousData,
  });
  const onFilter = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const typed = String(form.get('search')).trim();
    void navigate({ search: { search: typed || undefined, status: invitationStatus(form.get('status')), cursor: undefined } });
  };
  const page = invitations.data;
  const filtered = Boolean(status || search);
  return (
    <Page title="Invitations">
      <CreateInvitation environmentId={environmentId} />
      <h2 id="invitations-list">All invitations</h2>
      <form role="search" aria-label="Filter invitations" onSubmit={onFilter} className="search" key={`${status ?? ''}|${search ?? ''}`}>
        <label htmlFor="invitation-search">Search by email</label>
        <input id="invitation-search" name="search" type="search" defaultValue={search ?? ''} />
        <label htmlFor="invitation-status">Status</label>
        <select id="invitation-status" name="status" defaultValue={status ?? ''}>
          <option value="">Any status</option>
          {STATUSES.map((value) => <option key={value} value={value}>{value[0].toUpperCase() + value.slice(1)}</option>)}
        </select>
        <button type="submit">Search</button>
      </form>
      {invitations.isPending && <Loading what="invitations" />}
      <ProblemMessage error={invitations.error} />
      {page && page.items.length === 0 && (
        <Empty>{filtered ? 'No invitation matches these filters.' : 'This environment has sent no invitations yet.'}</Empty>
      )}
      {page && page.items.length > 0 && (
        <table aria-labelledby="invitations-list">
          <thead><tr><th scope="col">Email</th><th scope="col">Status</th><th scope="col">Sent</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
          <tbody aria-busy={invitations.isFetching}>
            {page.items.map((invitation) => (
              <InvitationRow key={invitation.id} invitation={invitation} environmentId={environmentId} onRevoke={() => setRevoking(invitation)} />
            ))}
          </tbody>
        </table>
      )}
      <RevokeInvitation invitation={revoking} environmentId={environmentId} onClose={() => setRevoking(null)} />
      <nav aria-label="Pages" className="pager">
        {cursor && <Link from="/environments/$environmentId/invitations" search={{ status, search, cursor: undefined }}>First page</Link>}
        {page?.hasMore && page.nextCursor && <Link from="/environments/$environmentId/invitations" search={{ status, search, cursor: page.nextCursor }}>Next page</Link>}
      </nav>
    </Page>
  );
}

function CreateInvitation({ environmentId }: { environmentId: string }) {
  const queryClient = useQueryClient();
  const [sent, setSent] = useState('');
  const create = useMutation({
    mutationFn: (input: { email: string; redirectUrl?: string }) =>
      serverApi(environmentId).createInvitation({ ...input, publicMetadata: {}, privateMetadata: {} }),
    onSuccess: async (invitation) => {
      setSent(`Invitation sent to ${invitation.email}.`);
      await queryClient.invalidateQueries({ queryKey: ['invitations', environmentId] });
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const redirectUrl = String(data.get('redirectUrl')).trim();
    setSent('');
    create.mutate({ email: String(data.get('email')).trim(), ...(redirectUrl && { redirectUrl }) }, { onSuccess: () => form.reset() });
  };
  return (
    <section aria-labelledby="invite">
      <h2 id="invite">Invite someone</h2>
      <form onSubmit={onSubmit} className="inline-form">
        <div className="field">
          <label htmlFor="invite-email">Email</label>
          <input id="invite-email" name="email" type="email" required autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor="invite-redirect">Redirect URL (optional)</label>
          <input id="invite-redirect" name="redirectUrl" type="url" aria-describedby="invite-redirect-hint" />
          <span id="invite-redirect-hint" className="hint">Where the sign-up page sends them after; on an allowed origin.</span>
        </div>
        <button type="submit" className="primary" disabled={create.isPending}>{create.isPending ? 'Sending…' : 'Send invitation'}</button>
      </form>
      <p role="status">{sent}</p>
      <ProblemMessage error={create.error} />
    </section>
  );
}

/** The one confirmation of revoking an invitation, for whichever row asked. */
function RevokeInvitation({ invitation, environmentId, onClose }: { invitation: Invitation | null; environmentId: string; onClose: () => void }) {
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: (id: string) => serverApi(environmentId).revokeInvitation({ invitationId: id }),
    onSuccess: async () => { onClose(); await queryClient.invalidateQueries({ queryKey: ['invitations', environmentId] }); },
  });
  return (
    <ConfirmDialog open={invitation !== null} title="Revoke this invitation?" confirmLabel="Revoke invitation" busy={revoke.isPending}
      onConfirm={() => invitation && revoke.mutate(invitation.id)} onCancel={() => { revoke.reset(); onClose(); }}>
      <p>The link mailed to {invitation?.email} will stop working. You can invite them again later.</p>
      <ProblemMessage error={revoke.error} />
    </ConfirmDialog>
  );
}

function InvitationRow({ invitation, environmentId, onRevoke }: { invitation: Invitation; environmentId: string; onRevoke: () => void }) {
  const queryClient = useQueryClient();
  const [done, setDone] = useState('');
  const resend = useMutation({
    mutationFn: () => serverApi(environmentId).resendInvitation({ invitationId: invitation.id }),
    onSuccess: async () => {
      setDone(`Mailed again to ${invitation.email}; the earlier link no longer works.`);
      await queryClient.invalidateQueries({ queryKey: ['invitations', environmentId] });
    },
  });
  const pending = invitation.status === 'PENDING';
  return (
    <tr>
      <td>{invitation.email}</td>
      <td><InvitationStatusBadge status={invitation.status} /></td>
      <td>{new Date(invitation.createdAt).toLocaleString()}</td>
      <td>{new Date(invitation.expiresAt).toLocaleString()}</td>
      <td>
        {pending ? (
          <div className="row-actions">
            <button type="button" onClick={() => { setDone(''); resend.mutate(); }} disabled={resend.isPending} aria-label={`Resend to ${invitation.email}`}>
              {resend.isPending ? 'Sending…' : 'Resend'}
            </button>
            <button type="button" className="danger" onClick={onRevoke} aria-label={`Revoke the invitation of ${invitation.email}`}>Revoke</button>
          </div>
        ) : <span className="muted">—</span>}
        <p role="status" className="row-status">{done}</p>
        <ProblemMessage error={resend.error} />
      </td>
    </tr>
  );
}

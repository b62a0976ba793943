import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import type { components } from '@gatehouse/sdk';
import { GatehouseError, serverApi } from '../api/gatehouse.js';
import { ConfirmDialog } from '../ui/confirm.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';
import { organizationRolesQuery, type OrganizationRoles } from './organization-roles.js';

type Member = components['schemas']['OrganizationMember'];
const PAGE_SIZE = 25;

/** A problem the dashboard states itself (no user has the email), shown like the server's. */
class NoSuchUser extends Error {}

/** The organization's members, a page at a time: add by email with a role, change a role, remove behind a confirmation. */
export function OrganizationMembers({ organizationId, environmentId }: { organizationId: string; environmentId: string }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const [removing, setRemoving] = useState<{ member: Member; label: string } | null>(null);
  const [removed, setRemoved] = useState('');
  const roles = useQuery(organizationRolesQuery(environmentId, organizationId));
  const members = useQuery({
    queryKey: ['organization-members', environmentId, organizationId, cursor ?? ''],
    queryFn: ({ signal }) => serverApi(environmentId).listOrganizationMembers({ organizationId, cursor, limit: PAGE_SIZE }, { signal }),
    placeholderData: keepPreviousData,
  });
  const page = members.data;
  return (
    <section aria-labelledby="members">
      <h2 id="members">Members</h2>
      <AddMember organizationId={organizationId} environmentId={environmentId} roles={roles.data} />
      {members.isPending && <Loading what="members" />}
      <ProblemMessage error={members.error} />
      <p role="status" className="form-status">{removed}</p>
      {page && page.items.length === 0 && <Empty>This organization has no members yet.</Empty>}
      {page && page.items.length > 0 && (
        <table aria-labelledby="members">
          <thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col">Joined</th><th scope="col">Actions</th></tr></thead>
          <tbody aria-busy={members.isFetching}>
            {page.items.map((member) => (
              <MemberRow key={member.userId} member={member} environmentId={environmentId} roles={roles.data}
                onRemove={(label) => { setRemoved(''); setRemoving({ member, label }); }} />
            ))}
          </tbody>
        </table>
      )}
      <div className="pager">
        {cursors.length > 0 && <button type="button" onClick={() => setCursors([])}>First members</button>}
        {page?.hasMore && page.nextCursor && <button type="button" onClick={() => setCursors([...cursors, page.nextCursor!])}>Next members</button>}
      </div>
      <RemoveMember removing={removing} organizationId={organizationId} environmentId={environmentId}
        onClose={(label) => { setRemoving(null); if (label) setRemoved(`${label} was removed from the organization.`); }} />
    </section>
  );
}

export function RoleOptions({ roles }: { roles: OrganizationRoles | undefined }) {
  return <>{roles?.roles.map((role) => <option key={role.key} value={role.key}>{role.name}</option>)}</>;
}

function AddMember({ organizationId, environmentId, roles }: { organizationId: string; environmentId: string; roles: OrganizationRoles | undefined }) {
  const queryClient = useQueryClient();
  const [added, setAdded] = useState('');
  const add = useMutation({
    mutationFn: async ({ email, role }: { email: string; role: string }) => {
      const api = serverApi(environmentId);
      const found = await api.listUsers({ emailSearch: email, limit: 100 });
      const user = found.items.find((candidate) => candidate.email?.toLowerCase() === email.toLowerCase());
      if (!user) throw new NoSuchUser(`No user of this environment has the email ${email}.`);
      await api.addOrganizationMember({ organizationId, userId: user.id, role });
      return user.email ?? email;
    },
    onSuccess: async (email) => {
      setAdded(`${email} was added.`);
      await queryClient.invalidateQueries({ queryKey: ['organization-members', environmentId, organizationId] });
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    setAdded('');
    add.mutate({ email: String(data.get('email')).trim(), role: String(data.get('role')) }, { onSuccess: () => form.reset() });
  };
  const defaultRole = roles?.roles.some((role) => role.key === 'member') ? 'member' : roles?.roles.at(-1)?.key;
  return (
    <>
      <form onSubmit={onSubmit} className="inline-form" aria-labelledby="add-member">
        <h3 id="add-member" className="form-title">Add a member</h3>
        <div className="field">
          <label htmlFor="add-member-email">Email</label>
          <input id="add-member-email" name="email" type="email" required autoComplete="off" aria-describedby="add-member-hint" />
          <span id="add-member-hint" className="hint">An existing user of this environment.</span>
        </div>
        <div className="field">
          <label htmlFor="add-member-role">Role</label>
          <select id="add-member-role" name="role" required defaultValue={defaultRole} key={defaultRole ?? ''}><RoleOptions roles={roles} /></select>
        </div>
        <button type="submit" className="primary" disabled={add.isPending || !roles}>{add.isPending ? 'Adding…' : 'Add member'}</button>
      </form>
      <p role="status" className="form-status">{added}</p>
      {add.error instanceof NoSuchUser
        ? <div role="alert" className="problem"><p>{add.error.message}</p></div>
        : <ProblemMessage error={add.error} />}
    </>
  );
}

function MemberRow({ member, environmentId, roles, onRemove }: {
  member: Member; environmentId: string; roles: OrganizationRoles | undefined; onRemove: (label: string) => void;
}) {
  const queryClient = useQueryClient();
  const [changed, setChanged] = useState('');
  const user = useQuery({
    queryKey: ['user', environmentId, member.userId],
    queryFn: ({ signal }) => serverApi(environmentId).getUser({ userId: member.userId }, { signal }),
    retry: (failures, error) => failures < 2 && !(error instanceof GatehouseError),
  });
  const label = user.data?.email ?? user.data?.name ?? member.userId;
  const change = useMutation({
    mutationFn: (role: string) => serverApi(environmentId).updateOrganizationMember({ organizationId: member.organizationId, userId: member.userId, role }),
    onSuccess: async (updated) => {
      setChanged(`${label} is now ${updated.roleName ?? updated.role}.`);
      await queryClient.invalidateQueries({ queryKey: ['organization-members', environmentId, member.organizationId] });
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setChanged('');
    change.mutate(String(new FormData(event.currentTarget).get('role')));
  };
  const selectId = `role-${member.userId}`;
  return (
    <tr>
      <td>
        <Link to="/environments/$environmentId/users/$userId" params={{ environmentId, userId: member.userId }}>{label}</Link>
        {user.data?.email && user.data.name && <span className="muted"> {user.data.name}</span>}
      </td>
      <td>
        <form onSubmit={onSubmit} className="row-actions" key={member.role}>
          <label htmlFor={selectId} className="visually-hidden">Role of {label}</label>
          <select id={selectId} name="role" defaultValue={member.role}>
            {roles ? <RoleOptions roles={roles} /> : <option value={member.role}>{member.roleName ?? member.role}</option>}
          </select>
          <button type="submit" disabled={change.isPending} aria-label={`Change role of ${label}`}>{change.isPending ? 'Saving…' : 'Change role'}</button>
        </form>
        <p role="status" className="row-status">{changed}</p>
        <ProblemMessage error={change.error} />
      </td>
      <td>{new Date(member.joinedAt).toLocaleString()}</td>
      <td><button type="button" className="danger" onClick={() => onRemove(label)} aria-label={`Remove ${label}`}>Remove</button></td>
    </tr>
  );
}

function RemoveMember({ removing, organizationId, environmentId, onClose }: {
  removing: { member: Member; label: string } | null; organizationId: string; environmentId: string; onClose: (removedLabel?: string) => void;
}) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: async (target: { member: Member; label: string }) => {
      await serverApi(environmentId).removeOrganizationMember({ organizationId, userId: target.member.userId });
      return target.label;
    },
    onSuccess: async (label) => {
      onClose(label);
      await queryClient.invalidateQueries({ queryKey: ['organization-members', environmentId, organizationId] });
    },
  });
  return (
    <ConfirmDialog open={removing !== null} title="Remove this member?" confirmLabel="Remove member" busy={remove.isPending}
      onConfirm={() => removing && remove.mutate(removing)} onCancel={() => { remove.reset(); onClose(); }}>
      <p>{removing?.label} will no longer be a member of this organization. Their account is kept.</p>
      <ProblemMessage error={remove.error} />
    </ConfirmDialog>
  );
}

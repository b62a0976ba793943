import { useMutation, useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { ProblemMessage } from '../ui/states.js';
import { RoleOptions } from './organization-members.js';
import { organizationRolesQuery } from './organization-roles.js';

type GroupRoles = Record<string, string>;

/**
 * Which organization role an identity provider's group gives its members, for an SSO connection or a SCIM
 * directory (`owner`): the mapping with a Remove per group, and a form that maps one more. The whole mapping
 * is saved each time, as the API takes it; the change is said once the list shows it.
 */
export function GroupRolesEditor({ owner, groupRoles, environmentId, organizationId, listKey, save }: {
  owner: string; groupRoles: GroupRoles; environmentId: string; organizationId: string;
  /** The query whose refetch shows the saved mapping. */
  listKey: QueryKey;
  save: (groupRoles: GroupRoles) => Promise<unknown>;
}) {
  const id = useId();
  const queryClient = useQueryClient();
  const roles = useQuery(organizationRolesQuery(environmentId, organizationId));
  const [said, setSaid] = useState('');
  const change = useMutation({
    mutationFn: ({ next }: { next: GroupRoles; message: string }) => save(next),
    onSuccess: async (_saved, { message }) => {
      await queryClient.invalidateQueries({ queryKey: listKey });
      setSaid(message);
    },
  });
  const roleName = (key: string) => roles.data?.roles.find((role) => role.key === key)?.name ?? key;
  // In the order of the groups' names: the stored mapping keeps no order of its own.
  const mapped = Object.entries(groupRoles).sort(([a], [b]) => a.localeCompare(b));
  const remove = (group: string) => {
    setSaid('');
    change.mutate({ next: Object.fromEntries(mapped.filter(([other]) => other !== group)), message: `${group} no longer gives a role in ${owner}.` });
  };
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const group = String(data.get('group')).trim();
    const role = String(data.get('role'));
    setSaid('');
    change.mutate({ next: { ...groupRoles, [group]: role }, message: `Members of ${group} get the role ${roleName(role)} in ${owner}.` }, { onSuccess: () => form.reset() });
  };
  return (
    <div className="group-roles">
      <p className="muted">
        {mapped.length === 0 ? 'No group gives a role: new members get the default role.' : 'A member of several groups gets the highest of their roles.'}
      </p>
      {mapped.length > 0 && (
        <ul aria-label={`Group roles of ${owner}`}>
          {mapped.map(([group, role]) => (
            <li key={group}>
              <code>{group}</code> → {roleName(role)}{' '}
              <button type="button" onClick={() => remove(group)} disabled={change.isPending}>Remove {group} from {owner}</button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={onSubmit} className="row-actions">
        <label htmlFor={`${id}-group`}>IdP group for {owner}</label>
        <input id={`${id}-group`} name="group" required maxLength={256} autoComplete="off" />
        <label htmlFor={`${id}-role`}>Role it gives in {owner}</label>
        <select id={`${id}-role`} name="role" required><RoleOptions roles={roles.data} /></select>
        <button type="submit" disabled={change.isPending || !roles.data}>{change.isPending ? 'Saving…' : `Map group in ${owner}`}</button>
      </form>
      <p role="status" className="row-status">{said}</p>
      <ProblemMessage error={change.error ?? roles.error} />
    </div>
  );
}

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import type { FormEvent } from 'react';
import { serverApi } from '../api/gatehouse.js';
import { Page } from '../ui/page.js';
import { ProblemMessage } from '../ui/states.js';

const route = getRouteApi('/signed-in/environments/$environmentId/users/new');

/** A new user of the environment (Server API createUser): email, name and an optional password; then the new user's screen. */
export function UserCreateScreen() {
  const { environmentId } = route.useParams();
  const navigate = route.useNavigate();
  const queryClient = useQueryClient();
  const create = useMutation({
    mutationFn: (body: { email?: string; firstName?: string; lastName?: string; password?: string }) => serverApi(environmentId).createUser(body),
    onSuccess: async (user) => {
      queryClient.setQueryData(['user', environmentId, user.id], user);
      await queryClient.invalidateQueries({ queryKey: ['users', environmentId] });
      await navigate({ to: '/environments/$environmentId/users/$userId', params: { environmentId, userId: user.id } });
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const field = (name: string) => String(form.get(name) ?? '').trim() || undefined;
    const password = String(form.get('password') ?? '');
    create.mutate({ email: field('email'), firstName: field('firstName'), lastName: field('lastName'), ...(password !== '' && { password }) });
  };
  return (
    <>
      <p><Link to="/environments/$environmentId/users" params={{ environmentId }}>← All users</Link></p>
      <Page title="Create user">
        <form onSubmit={onSubmit} className="stack user-create" noValidate>
          <label htmlFor="new-email">Email</label>
          <input id="new-email" name="email" type="email" autoComplete="off" />
          <label htmlFor="new-first-name">First name</label>
          <input id="new-first-name" name="firstName" autoComplete="off" />
          <label htmlFor="new-last-name">Last name</label>
          <input id="new-last-name" name="lastName" autoComplete="off" />
          <label htmlFor="new-password">Password (optional)</label>
          <input id="new-password" name="password" type="password" autoComplete="new-password" aria-describedby="new-password-help" />
          <p id="new-password-help" className="muted">Leave empty for a user who signs in another way (a code, a provider, a reset link). The environment's password policy applies.</p>
          <ProblemMessage error={create.error} />
          <button type="submit" className="primary" disabled={create.isPending}>{create.isPending ? 'Creating…' : 'Create user'}</button>
        </form>
      </Page>
    </>
  );
}

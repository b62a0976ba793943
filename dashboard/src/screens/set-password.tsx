import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import type { FormEvent } from 'react';
import { operatorSession } from '../api/gatehouse.js';
import { Page } from '../ui/page.js';
import { ProblemMessage } from '../ui/states.js';

const route = getRouteApi('/set-password');

/** The one-time link `operators create` prints without --password: the new operator chooses a password, then signs in. */
export function SetPasswordScreen() {
  const { token } = route.useSearch();
  const setPassword = useMutation({ mutationFn: (password: string) => operatorSession.setPassword(token ?? '', password) });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setPassword.mutate(String(new FormData(event.currentTarget).get('password')));
  };
  if (setPassword.isSuccess) {
    return (
      <main id="main" className="narrow">
        <Page title="Password set">
          <p role="status">Your password is set. <Link to="/sign-in" search={{}}>Sign in</Link> with your email and the new password.</p>
        </Page>
      </main>
    );
  }
  return (
    <main id="main" className="narrow">
      <Page title="Choose your password" focusHeading={false}>
        <form onSubmit={onSubmit} className="stack">
          <ProblemMessage error={token ? setPassword.error : new Error('This link has no token: copy the whole link the CLI printed.')} />
          <label htmlFor="password">New password</label>
          <input id="password" name="password" type="password" autoComplete="new-password" required autoFocus />
          <button type="submit" className="primary" disabled={!token || setPassword.isPending}>Set password</button>
        </form>
      </Page>
    </main>
  );
}

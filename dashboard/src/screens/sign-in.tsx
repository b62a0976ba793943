import { useMutation, useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { operatorSession, type Operator } from '../api/gatehouse.js';
import { operatorQuery } from '../queries.js';
import { Page } from '../ui/page.js';
import { ProblemMessage } from '../ui/states.js';

const route = getRouteApi('/sign-in');

/** Where to go after signing in: the screen asked for, if it is one of the dashboard's own. */
function destination(redirect: string | undefined) {
  return redirect && redirect.startsWith('/') && !redirect.startsWith('//') ? redirect : '/environments';
}

/** Email and password, then the second-factor step when the operator has one, labelled as on the hosted pages. */
export function SignInScreen() {
  const { redirect } = route.useSearch();
  const navigate = route.useNavigate();
  const queryClient = useQueryClient();
  const [challenge, setChallenge] = useState<string | null>(null);
  const signedIn = async (operator: Operator) => {
    queryClient.setQueryData(operatorQuery.queryKey, operator);
    // The path came from the guard's redirect (this app's own location), so it is a screen of this router.
    await navigate({ href: destination(redirect) });
  };
  const signIn = useMutation({
    mutationFn: ({ email, password }: { email: string; password: string }) => operatorSession.signIn(email, password),
    onSuccess: (answer) => ('mfaRequired' in answer ? setChallenge(answer.challengeToken) : signedIn(answer.operator)),
  });
  const secondFactor = useMutation({
    mutationFn: (code: string) => operatorSession.secondFactor(challenge!, code),
    onSuccess: (answer) => signedIn(answer.operator),
  });
  const onSignIn = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    signIn.mutate({ email: String(form.get('email')), password: String(form.get('password')) });
  };
  const onCode = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    secondFactor.mutate(String(new FormData(event.currentTarget).get('code')));
  };
  return (
    <main id="main" className="narrow">
      {challenge === null ? (
        <Page title="Sign in to the dashboard" focusHeading={false}>
          <form onSubmit={onSignIn} className="stack">
            <ProblemMessage error={signIn.error} />
            <label htmlFor="email">Email</label>
            <input id="email" name="email" type="email" autoComplete="username" required autoFocus />
            <label htmlFor="password">Password</label>
            <input id="password" name="password" type="password" autoComplete="current-password" required />
            <button type="submit" className="primary" disabled={signIn.isPending}>Sign in</button>
          </form>
        </Page>
      ) : (
        <Page title="Second factor">
          <form onSubmit={onCode} className="stack">
            <p>Enter the 6-digit code from your authenticator app, or one of your backup codes.</p>
            <ProblemMessage error={secondFactor.error} />
            <label htmlFor="code">Code</label>
            <input id="code" name="code" autoComplete="one-time-code" inputMode="text" required autoFocus />
            <button type="submit" className="primary" disabled={secondFactor.isPending}>Verify</button>
          </form>
        </Page>
      )}
    </main>
  );
}

'use client';
import { GatehouseError } from '@gatehouse/sdk';
import { useAuth, useGatehouseClient } from '@gatehouse/sdk/react';
import { useEffect, useState, type FormEvent } from 'react';

/** Only a path on this site: `redirect_url` comes from the address bar, so anything else could send the user away. */
function redirectTarget(): string {
  const target = new URLSearchParams(window.location.search).get('redirect_url') ?? '/dashboard';
  return target.startsWith('/') && !target.startsWith('//') ? target : '/dashboard';
}

export default function SignIn() {
  const client = useGatehouseClient();
  const { isSignedIn } = useAuth();
  const [error, setError] = useState<string | null>(null);

  // Signed in (now, or already in Gatehouse): the JWT cookie is written, so the server sees the session.
  useEffect(() => {
    if (isSignedIn) window.location.assign(redirectTarget());
  }, [isSignedIn]);

  async function signIn(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    try {
      const answer = await client.signIn({ email: String(form.get('email')), password: String(form.get('password')) });
      if ('mfaRequired' in answer) setError('This account has a second factor: answer it with client.verifySecondFactor.');
    } catch (err) {
      setError(err instanceof GatehouseError ? err.message : String(err));
    }
  }

  return (
    <form onSubmit={signIn}>
      <label>Email <input name="email" type="email" autoComplete="username" required /></label>
      <label>Password <input name="password" type="password" autoComplete="current-password" required /></label>
      <button type="submit">Sign in</button>
      {error && <p role="alert">{error}</p>}
    </form>
  );
}

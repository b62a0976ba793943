import { GatehouseError } from '@gatehouse/sdk';
import { useAuth, useGatehouseClient, useUser } from '@gatehouse/sdk/react';
import { useState, type FormEvent } from 'react';

function SignInForm() {
  const client = useGatehouseClient();
  const [error, setError] = useState<string | null>(null);

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

/** Calls the app's own backend with the session JWT, as every API call of the app would. */
function CallApi() {
  const { getToken } = useAuth();
  const [answer, setAnswer] = useState<string | null>(null);

  async function callApi() {
    const token = await getToken();
    const response = await fetch('/api/me', { headers: token ? { authorization: `Bearer ${token}` } : {} });
    setAnswer(`${response.status} ${await response.text()}`);
  }

  return (
    <>
      <button onClick={callApi}>Call /api/me</button>
      {answer && <pre data-testid="api-answer">{answer}</pre>}
    </>
  );
}

export function App() {
  const { isLoaded, isSignedIn, user } = useUser();
  const { signOut } = useAuth();
  if (!isLoaded) return <p>Loading…</p>;
  if (!isSignedIn) return <SignInForm />;
  return (
    <main>
      <p data-testid="signed-in-as">Signed in as {user!.email}</p>
      <CallApi />
      <button onClick={() => void signOut()}>Sign out</button>
    </main>
  );
}

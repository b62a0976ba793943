import { redirect } from 'next/navigation';
import { gatehouse } from '../../lib/gatehouse';

/** A protected page: the proxy already sent visitors without a session to /sign-in; auth() reads the session. */
export default async function Dashboard() {
  const session = await gatehouse.auth();
  if (!session) redirect('/sign-in?redirect_url=/dashboard');
  return (
    <main>
      <h1>Dashboard</h1>
      <p>Signed in as <span data-testid="user-id">{session.userId}</span> (session {session.sessionId}).</p>
    </main>
  );
}

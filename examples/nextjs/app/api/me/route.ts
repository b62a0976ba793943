import { unauthenticated } from '@gatehouse/sdk/next';
import { gatehouse } from '../../../lib/gatehouse';

/** A protected route handler: the session from the bearer token or the JWT cookie, else 401 problem+json. */
export async function GET() {
  const session = await gatehouse.auth();
  if (!session) return unauthenticated();
  return Response.json({ userId: session.userId, sessionId: session.sessionId, actorId: session.actorId });
}

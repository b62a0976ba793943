/**
 * Compile-time checks of the SDK's types, run by `npm run typecheck` (tsc): every line marked
 * @ts-expect-error must fail to compile, or tsc reports the marker itself as unused and CI fails.
 */
import { createClientPlane, createServerClient, createSessionVerifier, expressSession, fastifySession, sessionOf, type VerifiedSession } from '@gatehouse/sdk';
import express from 'express';
import Fastify from 'fastify';

const gatehouse = createServerClient({ baseUrl: 'http://localhost:3000', secretKey: 'sk_test' });
const app = createClientPlane({ frontendUrl: 'http://localhost:3000' });

export async function wrongNamesDoNotCompile() {
  // @ts-expect-error `emial` is not a field of createUser.
  await gatehouse.createUser({ emial: 'ada@example.com' });
  // @ts-expect-error getUser needs the user's id.
  await gatehouse.getUser({});
  const user = await gatehouse.getUser({ userId: '01900000-0000-7000-8000-000000000000' });
  // @ts-expect-error a user has no `emailAddress` (it is `email`).
  void user.emailAddress;
  const email: string | null = user.email;
  // @ts-expect-error the client plane has no Server API operation.
  await app.createUser({ email });
  // @ts-expect-error sign-in needs a password.
  await app.signIn({ email: 'ada@example.com' });
  // @ts-expect-error listUsers is paginated, getUser is not.
  gatehouse.paginate('getUser');
  for await (const listed of gatehouse.paginate('listUsers', { limit: 50 })) void listed.id;
  // A 202 answers its body (work accepted to run later), not undefined.
  const request = await app.createMyDataRequest({ type: 'export' });
  const status: string = request.status;
  void status;
}

export function verifierOptionsAndRequestsAreTyped() {
  // @ts-expect-error a verifier needs frontendUrl, or issuer with jwksUrl.
  createSessionVerifier({ issuer: 'https://auth.example.com' });
  const verifier = createSessionVerifier({ issuer: 'https://auth.example.com', jwksUrl: 'http://gatehouse.internal/.well-known/jwks.json', audience: 'api' });
  const api = express();
  api.get('/me', expressSession(verifier), (req, res) => {
    // Declaration merging: Express's Request has `gatehouse` (a session, or null with `optional`).
    const orgRole: string | null | undefined = req.gatehouse?.orgRole;
    // @ts-expect-error a session has no `organizationId` (it is `orgId`).
    void req.gatehouse?.organizationId;
    res.json({ orgRole });
  });
  const fastify = Fastify();
  fastify.addHook('onRequest', fastifySession(verifier));
  fastify.get('/me', async (request) => {
    const session: VerifiedSession | null = sessionOf(request);
    return { userId: session?.userId, orgSlug: session?.orgSlug };
  });
}

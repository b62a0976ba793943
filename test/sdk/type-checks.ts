/**
 * Compile-time checks of the SDK's types, run by `npm run typecheck` (tsc): every line marked
 * @ts-expect-error must fail to compile, or tsc reports the marker itself as unused and CI fails.
 */
import { createClientPlane, createServerClient } from '@gatehouse/sdk';

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

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { startScriptableProvider, type ScriptableProvider } from '../helpers/scriptable-provider.js';
import { APP_ORIGIN, expectProblem, givenScriptedEnvironment, scriptedSignIn, sessionCookieOf } from './support.js';

let t: TestApp;
let fake: ScriptableProvider;
beforeAll(async () => { [t, fake] = await Promise.all([startTestApp(), startScriptableProvider()]); });
afterAll(async () => { await t?.close(); await fake?.close(); });
beforeEach(() => fake.reset());

/** A passwordless user signed in through `acme` and, when asked, also through `second`; answers their cookie and identities. */
async function givenProviderUser(withSecond = false) {
  const env = await givenScriptedEnvironment(t, fake);
  fake.script.claims.sub = `sub-${randomUUID()}`;
  const cookie = sessionCookieOf(await scriptedSignIn(t, env));
  if (withSecond) {
    const put = await t.admin.put(`/environments/${env.id}/oauth-providers/second`, { type: 'oidc', name: 'Second', clientId: fake.clientId, clientSecret: fake.clientSecret, issuer: fake.issuer });
    expect(put.statusCode).toBe(201);
    sessionCookieOf(await scriptedSignIn(t, env, 'second'));
  }
  const me = (await t.client(env, { cookie }).get('/me')).json();
  const identities = (await t.client(env, { cookie }).get('/me/identities')).json().items as { id: string; provider: string }[];
  return { env, cookie, userId: me.id as string, identities };
}

const unlink = (env: TestEnv, cookie: string, id: string) => t.client(env, { cookie, origin: APP_ORIGIN }).delete(`/me/identities/${id}`);
const stored = (env: TestEnv) => t.db.selectFrom('user_identities').select(['id', 'provider_id']).where('environment_id', '=', env.id).orderBy('id').execute();

describe('GET /api/server/v1/users/{userId}/identities', () => {
  it("lists the user's identities in the order they were linked", async () => {
    const { env, userId, identities } = await givenProviderUser(true);
    const res = await t.server(env).get(`/users/${userId}/identities`);
    expect(res.statusCode).toBe(200);
    expect(res.json().items.map((i: { provider: string }) => i.provider)).toEqual(['acme', 'second']);
    expect(res.json().items).toEqual(identities);
  });

  it('answers an empty list for a user without identities, and 404 for an unknown or another environment\'s user', async () => {
    const { env, userId } = await givenProviderUser();
    const other = await t.given.environment();
    const plain = await t.given.user(other);
    expect((await t.server(other).get(`/users/${plain.id}/identities`)).json()).toEqual({ items: [] });
    expectProblem(await t.server(other).get(`/users/${userId}/identities`), 404, 'user_not_found');
    expectProblem(await t.server(env).get(`/users/${randomUUID()}/identities`), 404, 'user_not_found');
  });
});

describe('DELETE /_svc/me/identities/{identityId}', () => {
  it('unlinks one of two identities and records it; the last one then stays (409 last_sign_in_method)', async () => {
    const { env, cookie, userId, identities } = await givenProviderUser(true);
    const res = await unlink(env, cookie, identities[1].id);
    expect(res.statusCode).toBe(204);
    expect(await stored(env)).toEqual([{ id: identities[0].id, provider_id: 'acme' }]);
    const event = await t.db.selectFrom('audit_events').select(['actor_id', 'targets', 'metadata']).where('environment_id', '=', env.id)
      .where('action', '=', 'user.identity_unlinked').executeTakeFirstOrThrow();
    expect(event).toEqual({ actor_id: userId, targets: [{ type: 'user', id: userId }, { type: 'identity', id: identities[1].id }], metadata: { provider: 'second' } });
    expectProblem(await unlink(env, cookie, identities[0].id), 409, 'last_sign_in_method');
    expect(await stored(env)).toHaveLength(1);
  });

  it('unlinks the only identity of a user who has a password', async () => {
    const env = await givenScriptedEnvironment(t, fake);
    const user = await t.given.user(env, { email: 'person@example.com' });
    const cookie = sessionCookieOf(await scriptedSignIn(t, env));
    const [identity] = (await t.client(env, { cookie }).get('/me/identities')).json().items;
    expect((await unlink(env, cookie, identity.id)).statusCode).toBe(204);
    expect((await t.given.session(env, user)).userId).toBe(user.id);
  });

  it('lets exactly one of two concurrent unlinks through when together they would leave no way to sign in', async () => {
    const { env, cookie, identities } = await givenProviderUser(true);
    const results = await Promise.all(identities.map((i) => unlink(env, cookie, i.id)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([204, 409]);
    expect(await stored(env)).toHaveLength(1);
  });

  it("answers 404 for an unknown identity, another environment's, or another user's", async () => {
    const a = await givenProviderUser();
    const b = await givenProviderUser();
    expectProblem(await unlink(a.env, a.cookie, randomUUID()), 404, 'resource_not_found');
    expectProblem(await unlink(a.env, a.cookie, b.identities[0].id), 404, 'resource_not_found');
    const sameEnvOther = await t.given.user(a.env);
    const otherSession = await t.given.session(a.env, sameEnvOther);
    expectProblem(await t.client(a.env, { token: otherSession.token }).delete(`/me/identities/${a.identities[0].id}`), 404, 'resource_not_found');
    expect(await stored(a.env)).toHaveLength(1);
  });

  it('refuses an impersonated session (403): an operator cannot remove the user\'s ways to sign in', async () => {
    const { env, userId, identities } = await givenProviderUser(true);
    const actor = await t.given.user(env);
    const minted = await t.server(env).post(`/users/${userId}/impersonation-token`, { actorUserId: actor.id, reason: 'support' });
    const redeemed = await t.client(env).post('/auth/session/impersonate?_is_native=true', { token: minted.json().token });
    expectProblem(await t.client(env, { token: redeemed.json().sessionToken }).delete(`/me/identities/${identities[1].id}`), 403, 'forbidden');
    expect(await stored(env)).toHaveLength(2);
  });
});

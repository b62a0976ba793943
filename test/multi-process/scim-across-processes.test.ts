import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/given.js';
import { startServerPair, type ServerPair } from '../helpers/server-pair.js';

// Two real server processes on one PostgreSQL: a SCIM deactivation or delete through process A ends the user's
// sessions on the very next request to every other process. Needs TEST_DATABASE_URL (see revocation-across-processes).
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

describe.skipIf(!TEST_DATABASE_URL)('SCIM deprovisioning across server processes (needs TEST_DATABASE_URL)', () => {
  let pair: ServerPair;
  beforeAll(async () => { pair = await startServerPair(TEST_DATABASE_URL!); });
  afterAll(() => pair?.stop());

  /** The organization has verified the domain, as a domain check leaves it: a directory provisions only addresses there. */
  async function givenVerifiedDomain(environmentId: string, organizationId: string, domain: string) {
    const db = new pg.Client({ connectionString: pair.databaseUrl });
    await db.connect();
    try {
      await db.query(`insert into organization_domains (environment_id, id, organization_id, domain, verification_token, verified_at, created_at, updated_at)
        values ($1, $2, $3, $4, 'test', now(), now(), now())`, [environmentId, randomUUID(), organizationId, domain]);
    } finally {
      await db.end();
    }
  }

  async function directoryWithUser() {
    const env = await pair.environment();
    const user = await pair.user(env);
    const org = (await pair.serverApi(pair.a, env, 'POST', '/organizations', { name: 'Acme' })).json();
    await givenVerifiedDomain(env.id, org.id, user.email.split('@')[1]!);
    const dir = (await pair.serverApi(pair.a, env, 'POST', `/organizations/${org.id}/directories`, { name: 'Okta' })).json();
    const idp = (method: string, path: string, body?: unknown) =>
      pair.call(pair.a, { method, path: `/scim/v2/${dir.id}${path}`, headers: { authorization: `Bearer ${dir.token}` }, body });
    const linked = await idp('POST', '/Users', { userName: user.email, emails: [{ value: user.email, primary: true }], active: true });
    expect(linked.status, linked.body).toBe(201);
    // A session started on process B, known to every process.
    const signIn = await pair.client(pair.b, env, 'POST', '/auth/sign-in?_is_native=true', { email: user.email, password: PASSWORD });
    expect(signIn.status).toBe(200);
    const token: string = signIn.json().sessionToken;
    for (const server of pair.servers) expect((await pair.client(server, env, 'GET', '/me', undefined, token)).status).toBe(200);
    return { env, user, idp, token };
  }

  it('answers 401 on every other process at the very next request after a deactivation (active: false) through process A', async () => {
    const { env, user, idp, token } = await directoryWithUser();
    const off = await idp('PATCH', `/Users/${user.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: false } }] });
    expect(off.status, off.body).toBe(200);
    for (const server of pair.servers.slice(1)) {
      const next = await pair.client(server, env, 'GET', '/me', undefined, token);
      expect(next.status).toBe(401);
      expect(next.json().properties.code).toBe('unauthenticated');
    }
    const again = await pair.client(pair.b, env, 'POST', '/auth/sign-in?_is_native=true', { email: user.email, password: PASSWORD });
    expect(again.status).toBe(403);
  });

  it('answers 401 on every other process at the very next request after a SCIM DELETE through process A', async () => {
    const { env, user, idp, token } = await directoryWithUser();
    expect((await idp('DELETE', `/Users/${user.id}`)).status).toBe(204);
    for (const server of pair.servers.slice(1)) expect((await pair.client(server, env, 'GET', '/me', undefined, token)).status).toBe(401);
  });
});

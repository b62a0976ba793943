import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvironmentsService } from '../../src/environments/service.js';
import { systemCaller } from '../../src/platform/caller.js';
import { createSealer } from '../../src/platform/crypto/encryption.js';
import { createSessionTokensService } from '../../src/session-tokens/service.js';
import { createSessionsService } from '../../src/sessions/service.js';
import { startTestApp, TEST_ENCRYPTION_KEY, type TestApp, type TestEnv } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';

const APP_ORIGIN = 'https://app.example.com';

describe('session JWTs', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  async function environment(settings: Record<string, unknown> = {}): Promise<TestEnv> {
    const env = await t.given.environment(settings);
    await t.server(env).put('/allowed-origins', { origins: [APP_ORIGIN] });
    return env;
  }
  const issuerOf = (env: TestEnv) => `http://${env.frontendHost}`;

  async function signedIn(env: TestEnv, body: Record<string, unknown> = {}) {
    const user = await t.given.user(env, body);
    return { user, session: await t.given.session(env, user) };
  }
  const mint = (env: TestEnv, token: string, origin?: string) => t.client(env, { token, origin }).post('/sessions/current/token');
  const verify = (env: TestEnv, token: string) => t.server(env).post('/sessions/verify', { token });

  it('mints an ES256 JWT of the session with the contract claims, valid jwtLifetimeSeconds', async () => {
    const env = await environment();
    const { user, session } = await signedIn(env, { publicMetadata: { plan: 'pro' }, privateMetadata: { stripe: 'cus_secret' } });
    const res = await mint(env, session.token, APP_ORIGIN);
    expect(res.statusCode, res.body).toBe(200);
    const { token, expiresAt } = res.json();
    const header = decodeProtectedHeader(token);
    expect(header).toEqual({ alg: 'ES256', kid: expect.any(String), typ: 'JWT' });
    const claims = decodeJwt(token);
    const now = Math.floor(t.clock.now().getTime() / 1000);
    expect(claims).toEqual({
      iss: issuerOf(env), sub: user.id, sid: session.id, iat: now, nbf: now, exp: now + 60, jti: expect.any(String), azp: APP_ORIGIN,
      public_metadata: { plan: 'pro' }, amr: ['pwd'],
    });
    expect(expiresAt).toBe(new Date((now + 60) * 1000).toISOString());
    expect(token).not.toContain('cus_secret');
    expect(Buffer.from(token.split('.')[1]!, 'base64url').toString()).not.toContain('cus_secret');
  });

  it('leaves azp out for an origin that is not allowed, and public_metadata out when it is over 1 KiB', async () => {
    const env = await environment();
    const { session } = await signedIn(env, { publicMetadata: { big: 'x'.repeat(1100) } });
    const claims = decodeJwt((await mint(env, session.token)).json().token);
    expect(claims).not.toHaveProperty('azp');
    expect(claims).not.toHaveProperty('public_metadata');
  });

  it('follows session.jwtLifetimeSeconds', async () => {
    const env = await environment({ session: { jwtLifetimeSeconds: 300 } });
    const { session } = await signedIn(env);
    const claims = decodeJwt((await mint(env, session.token)).json().token);
    expect(claims.exp! - claims.iat!).toBe(300);
  });

  it('carries an RFC 8693 act claim naming the operator on an impersonated session', async () => {
    const env = await environment();
    const target = await t.given.user(env);
    const operator = await t.given.user(env);
    const minted = await t.server(env).post(`/users/${target.id}/impersonation-token`, { actorUserId: operator.id, reason: 'Ticket #3' });
    const redeemed = await t.client(env).post('/auth/session/impersonate?_is_native=true', { token: minted.json().token });
    const claims = decodeJwt((await mint(env, redeemed.json().sessionToken)).json().token);
    expect(claims).toMatchObject({ sub: target.id, act: { sub: operator.id } });
  });

  it('answers 401 and no token for a revoked session or a banned user', async () => {
    const env = await environment();
    const { user, session } = await signedIn(env);
    await t.client(env, { token: session.token }).post('/auth/sign-out');
    expectProblem(await mint(env, session.token), 401, 'unauthenticated');
    const other = await signedIn(env);
    await t.server(env).post(`/users/${other.user.id}/ban`);
    expectProblem(await mint(env, other.session.token), 401, 'unauthenticated');
    expect(user.id).toBeDefined();
  });

  it('documents the five lines a backend verifies a session with in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const description: string = doc.paths['/_svc/.well-known/jwks.json'].get.description;
    expect(description).toContain("import { createRemoteJWKSet, jwtVerify } from 'jose';");
    expect(description).toContain("jwtVerify(token, jwks, { issuer, algorithms: ['ES256'] })");
  });

  it('verifies with jose.createRemoteJWKSet against the running server, and the discovery document names the JWKS', async () => {
    // Served at 127.0.0.1:<port>, so a real HTTP client reaches the environment by its own host.
    const env = { ...(await environment()), frontendHost: `127.0.0.1:${port}` };
    expect((await t.admin.patch(`/environments/${env.id}`, { frontendHost: env.frontendHost })).statusCode).toBe(200);
    const issuer = () => issuerOf(env);
    const { user, session } = await signedIn(env);
    const { token } = (await mint(env, session.token)).json();
    const jwks = createRemoteJWKSet(new URL(`${issuer()}/_svc/.well-known/jwks.json`));
    const { payload } = await jwtVerify(token, jwks, { issuer: issuer(), algorithms: ['ES256'], currentDate: t.clock.now() });
    expect(payload.sub).toBe(user.id);

    const discovery = await fetch(`${issuer()}/_svc/.well-known/openid-configuration`);
    expect(discovery.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await discovery.json()).toMatchObject({
      issuer: issuer(), jwks_uri: `${issuer()}/_svc/.well-known/jwks.json`, id_token_signing_alg_values_supported: ['ES256'],
    });
    const set = await fetch(`${issuer()}/_svc/.well-known/jwks.json`);
    expect(set.headers.get('cache-control')).toBe('public, max-age=60');
    expect((await set.json()).keys).toEqual([{ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: decodeProtectedHeader(token).kid, alg: 'ES256', use: 'sig' }]);
  });

  describe('POST /api/server/v1/sessions/verify', () => {
    it('answers the claims of a valid token whose session is live', async () => {
      const env = await environment();
      const { user, session } = await signedIn(env);
      const { token } = (await mint(env, session.token)).json();
      const res = await verify(env, token);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ claims: decodeJwt(token), session: { id: session.id, userId: user.id } });
    });

    it('answers 401 token_expired after exp, and session_revoked once the session ended', async () => {
      const env = await environment();
      const { session } = await signedIn(env);
      const { token } = (await mint(env, session.token)).json();
      await t.client(env, { token: session.token }).post('/auth/sign-out');
      expectProblem(await verify(env, token), 401, 'session_revoked');
      t.clock.advance(61_000);
      expectProblem(await verify(env, token), 401, 'token_expired');
    });

    it("refuses alg none, a foreign key, a tampered payload and another environment's token with 401 token_invalid", async () => {
      const env = await environment();
      const { session } = await signedIn(env);
      const { token } = (await mint(env, session.token)).json();
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const claims = decodeJwt(token);
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
      const foreignKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      const foreign = await new SignJWT(claims).setProtectedHeader(decodeProtectedHeader(token) as { alg: string }).sign(foreignKey);
      const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: crypto.randomUUID() })).toString('base64url')}.${signature}`;
      const otherEnv = await environment();
      const otherToken = (await mint(otherEnv, (await signedIn(otherEnv)).session.token)).json().token;
      for (const bad of [none, foreign, tampered, otherToken, 'not.a.jwt']) expectProblem(await verify(env, bad), 401, 'token_invalid');
      // The same refusals from a local verifier with the published keys.
      const local = createLocalJWKSet((await t.client(env).get('/.well-known/jwks.json')).json());
      for (const bad of [none, foreign, tampered, otherToken]) {
        await expect(jwtVerify(bad, local, { issuer: issuerOf(env), algorithms: ['ES256'], currentDate: t.clock.now() })).rejects.toThrow();
      }
    });
  });

  describe('signing keys', () => {
    const keysOf = async (env: TestEnv) => (await t.client(env).get('/.well-known/jwks.json')).json().keys.map((k: { kid: string }) => k.kid);

    it('rotates: the new key signs at once, the old one verifies its tokens until they expire, then leaves the JWKS', async () => {
      const env = await environment();
      const { session } = await signedIn(env);
      const old = (await mint(env, session.token)).json().token;
      const oldKid = decodeProtectedHeader(old).kid;
      const rotated = await t.admin.post(`/environments/${env.id}/signing-keys/rotate`);
      expect(rotated.statusCode, rotated.body).toBe(200);
      const [active, retired] = rotated.json().items;
      expect(active).toMatchObject({ status: 'active' });
      expect(retired).toMatchObject({ id: oldKid, status: 'retired', retiredAt: t.clock.now().toISOString() });

      const fresh = (await mint(env, session.token)).json().token;
      expect(decodeProtectedHeader(fresh).kid).toBe(active.id);
      expect(await keysOf(env)).toEqual([active.id, oldKid]);
      expect((await verify(env, old)).statusCode).toBe(200);

      t.clock.advance(3661_000);
      expect(await keysOf(env)).toEqual([active.id]);
      expect((await t.admin.get(`/environments/${env.id}/signing-keys`)).json().items[1]).toMatchObject({ id: oldKid, status: 'expired' });
    });

    it('revokes: the key leaves the JWKS at once, its tokens stop verifying, and a revoked signing key is replaced', async () => {
      const env = await environment();
      const { session } = await signedIn(env);
      const token = (await mint(env, session.token)).json().token;
      const kid = decodeProtectedHeader(token).kid!;
      const res = await t.admin.delete(`/environments/${env.id}/signing-keys/${kid}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().items.map((k: { status: string }) => k.status)).toEqual(['active', 'revoked']);
      expect(await keysOf(env)).not.toContain(kid);
      expectProblem(await verify(env, token), 401, 'token_invalid');
      expect(decodeProtectedHeader((await mint(env, session.token)).json().token).kid).not.toBe(kid);
      const events = await t.db.selectFrom('audit_events').select('action').where('environment_id', '=', env.id).where('action', 'like', 'signing_key.%').execute();
      expect(events.map((e) => e.action)).toEqual(['signing_key.revoked']);
    });

    it('gives a new environment its signing key in the transaction that creates it', async () => {
      const env = await environment();
      const rows = await t.db.selectFrom('signing_keys').select(['id', 'retired_at', 'revoked_at']).where('environment_id', '=', env.id).execute();
      expect(rows).toEqual([{ id: expect.any(String), retired_at: null, revoked_at: null }]);
      expect(await keysOf(env)).toEqual([rows[0]!.id]);
    });

    it('recovers from a lost encryption key: with a new key, list and rotate work and the new signing key opens', async () => {
      const env = await environment();
      await t.client(env).get('/.well-known/jwks.json'); // the first key, sealed under the suite's key
      const newKey = createSealer(Buffer.alloc(32, 3));
      const environments = createEnvironmentsService({ db: t.db, clock: t.clock, defaultFrontendPort: 3000 });
      const replaced = createSessionTokensService({ db: t.db, clock: t.clock, sealer: newKey, environments, sessions: createSessionsService({ db: t.db, clock: t.clock }) });
      expect((await replaced.list(env.id)).items).toHaveLength(1);
      const { items } = await replaced.rotate(env.id, systemCaller('cli'));
      expect(items.map((k) => k.status)).toEqual(['active', 'retired']);
      expect((await replaced.jwks(env.id)).keys.map((k) => k.kid)).toEqual([items[0]!.id, items[1]!.id]);
    });

    it("keeps the private key sealed under the encryption key, and another environment's key id is 404", async () => {
      const env = await environment();
      await t.client(env).get('/.well-known/jwks.json');
      const [row] = await t.db.selectFrom('signing_keys').selectAll().where('environment_id', '=', env.id).execute();
      const sealed = Buffer.from(row!.private_key_sealed);
      expect(() => createPrivateKey({ key: sealed, format: 'der', type: 'pkcs8' })).toThrow();
      expect(createPrivateKey({ key: createSealer(TEST_ENCRYPTION_KEY).open(sealed), format: 'der', type: 'pkcs8' }).asymmetricKeyType).toBe('ec');
      expect(() => createSealer(Buffer.alloc(32, 1)).open(sealed)).toThrow();
      const other = await environment();
      expectProblem(await t.admin.delete(`/environments/${other.id}/signing-keys/${row!.id}`), 404, 'resource_not_found');
    });
  });
});

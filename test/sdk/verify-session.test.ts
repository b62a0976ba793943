import type { AddressInfo } from 'node:net';
import { createClientPlane, createServerClient, createSessionVerifier, expressSession, fastifySession, sessionOf, sessionTokenOf } from '@gatehouse/sdk';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { postEnvironmentOnOwnHost } from '../helpers/own-frontend-host.js';

/** A customer's backend on Gatehouse: its frontend URL and secret key, a signed-in user's session JWT. */
let t: TestApp;
let env: TestEnv;
let frontendUrl: string;
let userId: string;
let port: number;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  frontendUrl = `http://localhost:${port}`;
  const created = await postEnvironmentOnOwnHost(t, { name: 'verify', frontendHost: `localhost:${port}` });
  env = { ...created.json(), name: 'verify' };
  userId = (await t.given.user(env, { email: 'verified@example.com' })).id;
});
afterAll(() => t?.close());
// Session JWTs live 60 s and the verifiers here check them against real time: each test mints on a test clock
// that shows now, never the time of beforeAll, however long the file has run on a busy machine.
beforeEach(() => { t.clock.set(new Date()); });

async function signedInApp() {
  const app = createClientPlane({ frontendUrl, native: true });
  await app.signIn({ email: 'verified@example.com', password: PASSWORD });
  const { token } = await app.createSessionToken();
  return { app, token };
}

/** The middleware's 401: problem+json with the unauthenticated code, and a Bearer challenge. */
async function expectProblem401(res: Response) {
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.headers.get('www-authenticate')).toBe('Bearer');
  expect(await res.json()).toEqual({
    type: 'urn:gatehouse:problem:unauthenticated', title: 'Unauthorized', status: 401, detail: expect.stringContaining('__gatehouse_jwt'), properties: { code: 'unauthenticated' },
  });
}

describe('verifying sessions in a backend', () => {
  it('verifies a session JWT offline from a bearer header or the __gatehouse_jwt cookie, and refuses a tampered or missing one', async () => {
    const { token } = await signedInApp();
    const verifier = createSessionVerifier({ frontendUrl });
    const fromBearer = await verifier.verify(new Request('http://api.example.com/x', { headers: { authorization: `Bearer ${token}` } }));
    expect(fromBearer).toEqual({ userId, sessionId: expect.any(String), actorId: null, orgId: null, orgRole: null, orgSlug: null, claims: expect.objectContaining({ sub: userId }) });
    expect(await verifier.verify({ headers: { cookie: `theme=dark; __gatehouse_jwt=${token}` } })).toMatchObject({ userId });
    const [head, body, signature] = token.split('.');
    const forged = `${head}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), sub: 'someone-else' })).toString('base64url')}.${signature}`;
    expect(await verifier.verifyToken(forged)).toBeNull();
    expect(await verifier.verify({ headers: {} })).toBeNull();
  });

  it("never takes Gatehouse's opaque __session cookie or session token for a JWT: the JWT cookie or bearer beside it still counts", async () => {
    const { app, token } = await signedInApp();
    const opaque = app.sessionToken()!;
    const verifier = createSessionVerifier({ frontendUrl });
    expect(sessionTokenOf({ headers: { cookie: `__session=${opaque}` } })).toBeUndefined();
    expect(await verifier.verify({ headers: { cookie: `__session=${token}` } })).toBeNull();
    expect(await verifier.verify({ headers: { authorization: `Bearer ${opaque}`, cookie: `__session=${opaque}; __gatehouse_jwt=${token}` } })).toMatchObject({ userId });
    // Even a verifier told to read __session ignores the opaque value there rather than failing on it.
    expect(sessionTokenOf({ headers: { cookie: `__session=${opaque}` } }, '__session')).toBeUndefined();
    expect(await createSessionVerifier({ frontendUrl, cookieName: '__session' }).verify({ headers: { cookie: `__session=${opaque}` } })).toBeNull();
  });

  it('takes the issuer and the JWKS URL apart, and checks the audience when given', async () => {
    const { token } = await signedInApp();
    const apart = createSessionVerifier({ issuer: frontendUrl, jwksUrl: `${frontendUrl}/_svc/.well-known/jwks.json` });
    expect(await apart.verifyToken(token)).toMatchObject({ userId });
    expect(await createSessionVerifier({ issuer: 'https://elsewhere.example.com', jwksUrl: `${frontendUrl}/.well-known/jwks.json` }).verifyToken(token)).toBeNull();
    expect(await createSessionVerifier({ frontendUrl, audience: 'https://api.example.com' }).verifyToken(token)).toBeNull();
    expect(() => createSessionVerifier({ issuer: frontendUrl } as never)).toThrow(/frontendUrl.*issuer.*jwksUrl/);

    const created = await postEnvironmentOnOwnHost(t, { name: 'audienced', frontendHost: `127.0.0.1:${port}`, settings: { session: { jwtAudience: 'https://api.example.com' } } });
    const audienced: TestEnv = { ...created.json(), name: 'audienced' };
    const user = await t.given.user(audienced, { email: 'aud@example.com' });
    const minted = (await t.client(audienced, { token: (await t.given.session(audienced, user)).token }).post('/sessions/current/token')).json().token;
    const issuer = `http://127.0.0.1:${port}`;
    expect(await createSessionVerifier({ frontendUrl: issuer, audience: 'https://api.example.com' }).verifyToken(minted)).toMatchObject({ userId: user.id });
    expect(await createSessionVerifier({ frontendUrl: issuer, audience: 'https://other.example.com' }).verifyToken(minted)).toBeNull();
    const server = createServerClient({ baseUrl: issuer, secretKey: audienced.secretKey });
    expect(await createSessionVerifier({ frontendUrl: issuer, server, audience: 'https://api.example.com' }).verifyToken(minted)).toMatchObject({ userId: user.id });
    expect(await createSessionVerifier({ frontendUrl: issuer, server, audience: 'https://other.example.com' }).verifyToken(minted)).toBeNull();
  });

  it("exposes the session's active organization: orgId, orgRole and orgSlug", async () => {
    const { app } = await signedInApp();
    const org = (await t.server(env).post('/organizations', { name: 'Acme', slug: `acme-${Date.now()}` })).json();
    await t.server(env).post(`/organizations/${org.id}/members`, { userId, role: 'admin' });
    await app.setActiveOrganization({ organizationId: org.id });
    const { token } = await app.createSessionToken();
    expect(await createSessionVerifier({ frontendUrl }).verifyToken(token)).toMatchObject({ userId, orgId: org.id, orgRole: 'admin', orgSlug: org.slug });
  });

  it('signs in and verifies offline for a staging environment on its default-style staging.localhost host, with no hosts-file entry', async () => {
    const stagingUrl = `http://staging.localhost:${port}`;
    const created = await t.admin.post('/environments', { name: 'staging', frontendHost: `staging.localhost:${port}` });
    const staging: TestEnv = { ...created.json(), name: 'staging' };
    const user = await t.given.user(staging, { email: 'staged@example.com' });
    const app = createClientPlane({ frontendUrl: stagingUrl, native: true });
    await app.signIn({ email: 'staged@example.com', password: PASSWORD });
    const { token } = await app.createSessionToken();
    const verifier = createSessionVerifier({ frontendUrl: stagingUrl });
    expect(await verifier.verify({ headers: { authorization: `Bearer ${token}` } })).toMatchObject({ userId: user.id, claims: expect.objectContaining({ iss: stagingUrl }) });
  });

  it('refuses a revoked session at once when checking online, which the offline check cannot see until expiry', async () => {
    const { app, token } = await signedInApp();
    const online = createSessionVerifier({ frontendUrl, server: createServerClient({ baseUrl: frontendUrl, secretKey: env.secretKey }), cacheSeconds: 0 });
    const offline = createSessionVerifier({ frontendUrl });
    expect(await online.verifyToken(token)).toMatchObject({ userId });
    await app.signOut();
    expect(await online.verifyToken(token)).toBeNull();
    expect(await offline.verifyToken(token)).toMatchObject({ userId });
  });

  it('stops accepting a token signed by a revoked key once its JWKS window passes, fetching the JWKS again', async () => {
    const { token } = await signedInApp();
    const verifier = createSessionVerifier({ frontendUrl, jwksCacheSeconds: 1 });
    expect(await verifier.verifyToken(token)).toMatchObject({ userId });
    const { kid } = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString());
    expect((await t.admin.delete(`/environments/${env.id}/signing-keys/${kid}`)).statusCode).toBe(200);
    const windowEnds = Date.now() + 1000;
    while (Date.now() <= windowEnds) await new Promise((resolve) => setTimeout(resolve, windowEnds - Date.now() + 1));
    expect(await verifier.verifyToken(token)).toBeNull();
  });

  it('takes a cookie that is not valid percent-encoding as no session, never an exception', async () => {
    const verifier = createSessionVerifier({ frontendUrl });
    expect(await verifier.verify({ headers: { cookie: '__gatehouse_jwt=%' } })).toBeNull();
    expect(await verifier.verify({ headers: { cookie: 'a=1; __gatehouse_jwt=%E0%A4%A' } })).toBeNull();
  });

  it('guards an Express route: the session on req.gatehouse, 401 without one', async () => {
    const { token } = await signedInApp();
    const api = express();
    api.get('/me', expressSession(createSessionVerifier({ frontendUrl })), (req, res) => { res.json(req.gatehouse); });
    const server = api.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/me`;
      const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({ userId });
      await expectProblem401(await fetch(url));
      await expectProblem401(await fetch(url, { headers: { cookie: '__session=sess_opaque' } }));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('guards a Fastify route with an onRequest hook', async () => {
    const { token } = await signedInApp();
    const api = Fastify();
    api.addHook('onRequest', fastifySession(createSessionVerifier({ frontendUrl })));
    api.get('/me', async (request) => sessionOf(request));
    try {
      const ok = await api.inject({ url: '/me', headers: { cookie: `__gatehouse_jwt=${token}` } });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toMatchObject({ userId });
      const refused = await api.inject({ url: '/me', headers: { authorization: 'Bearer not-a-jwt' } });
      await expectProblem401(new Response(refused.body, { status: refused.statusCode, headers: refused.headers as Record<string, string> }));
    } finally {
      await api.close();
    }
  });
});

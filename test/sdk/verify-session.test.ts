import type { AddressInfo } from 'node:net';
import { createClientPlane, createServerClient, createSessionVerifier, expressSession, fastifySession, type VerifiedSession } from '@gatehouse/sdk';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';

/** A customer's backend on Gatehouse: its frontend URL and secret key, a signed-in user's session JWT. */
let t: TestApp;
let env: TestEnv;
let frontendUrl: string;
let userId: string;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as AddressInfo).port;
  frontendUrl = `http://localhost:${port}`;
  const created = await t.admin.post('/environments', { name: 'verify', frontendHost: `localhost:${port}` });
  env = { ...created.json(), name: 'verify' };
  userId = (await t.given.user(env, { email: 'verified@example.com' })).id;
});
afterAll(() => t?.close());

async function signedInApp() {
  const app = createClientPlane({ frontendUrl, native: true });
  await app.signIn({ email: 'verified@example.com', password: PASSWORD });
  const { token } = await app.createSessionToken();
  return { app, token };
}

describe('verifying sessions in a backend', () => {
  it('verifies a session JWT offline from a bearer header or the __session cookie, and refuses a tampered or missing one', async () => {
    const { token } = await signedInApp();
    const verifier = createSessionVerifier({ frontendUrl });
    const fromBearer = await verifier.verify(new Request('http://api.example.com/x', { headers: { authorization: `Bearer ${token}` } }));
    expect(fromBearer).toMatchObject({ userId, sessionId: expect.any(String), actorId: null });
    expect(await verifier.verify({ headers: { cookie: `theme=dark; __session=${token}` } })).toMatchObject({ userId });
    const [head, body, signature] = token.split('.');
    const forged = `${head}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), sub: 'someone-else' })).toString('base64url')}.${signature}`;
    expect(await verifier.verifyToken(forged)).toBeNull();
    expect(await verifier.verify({ headers: {} })).toBeNull();
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
    expect(await verifier.verify({ headers: { cookie: '__session=%' } })).toBeNull();
    expect(await verifier.verify({ headers: { cookie: 'a=1; __session=%E0%A4%A' } })).toBeNull();
  });

  it('guards an Express route: the session on req.gatehouse, 401 without one', async () => {
    const { token } = await signedInApp();
    const api = express();
    api.get('/me', expressSession(createSessionVerifier({ frontendUrl })), (req, res) => { res.json((req as unknown as { gatehouse: VerifiedSession }).gatehouse); });
    const server = api.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/me`;
      const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({ userId });
      const refused = await fetch(url);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ error: 'unauthenticated', message: 'Send a valid Gatehouse session token.' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('guards a Fastify route with an onRequest hook', async () => {
    const { token } = await signedInApp();
    const api = Fastify();
    api.addHook('onRequest', fastifySession(createSessionVerifier({ frontendUrl })));
    api.get('/me', async (request) => (request as unknown as { gatehouse: VerifiedSession }).gatehouse);
    try {
      const ok = await api.inject({ url: '/me', headers: { cookie: `__session=${token}` } });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toMatchObject({ userId });
      expect((await api.inject({ url: '/me', headers: { authorization: 'Bearer not-a-jwt' } })).statusCode).toBe(401);
    } finally {
      await api.close();
    }
  });
});

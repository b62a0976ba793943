import { randomBytes } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/given.js';
import type { ServerProcess } from '../helpers/processes.js';
import { startServerPair, type PairEnv, type ServerPair } from '../helpers/server-pair.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

describe.skipIf(!TEST_DATABASE_URL)('session JWTs with several server processes on one PostgreSQL (needs TEST_DATABASE_URL)', () => {
  let pair: ServerPair;
  beforeAll(async () => { pair = await startServerPair(TEST_DATABASE_URL!); });
  afterAll(() => pair?.stop());

  async function signedIn(server: ServerProcess, env: PairEnv) {
    const email = `u-${randomBytes(6).toString('hex')}@example.com`;
    expect((await pair.serverApi(pair.a, env, 'POST', '/users', { email, password: PASSWORD })).status).toBe(201);
    return (await pair.client(server, env, 'POST', '/auth/sign-in?_is_native=true', { email, password: PASSWORD })).json().sessionToken as string;
  }
  const mint = async (server: ServerProcess, env: PairEnv, session: string) =>
    (await pair.client(server, env, 'POST', '/sessions/current/token', undefined, session)).json().token as string;
  const jwksOf = async (server: ServerProcess, env: PairEnv) => (await pair.client(server, env, 'GET', '/.well-known/jwks.json')).json();

  it("verifies each process's tokens against every process's JWKS, and all see a rotation made by one", async () => {
    const env: PairEnv = (await pair.admin(pair.a, 'POST', '/environments', { name: `jwt-${randomBytes(4).toString('hex')}` })).json();
    // Every process asks for the first key at once: one key is made.
    const sessions = await Promise.all(pair.servers.map((server) => signedIn(server, env)));
    const tokens = await Promise.all(pair.servers.map((server, i) => mint(server, env, sessions[i])));
    expect(new Set(tokens.map((token) => decodeProtectedHeader(token).kid)).size).toBe(1);
    const issuer = `http://${env.frontendHost}`;
    for (const server of pair.servers) {
      const keys = createLocalJWKSet(await jwksOf(server, env));
      for (const token of tokens) await expect(jwtVerify(token, keys, { issuer, algorithms: ['ES256'] })).resolves.toBeDefined();
      for (const token of tokens) expect((await pair.serverApi(server, env, 'POST', '/sessions/verify', { token })).status).toBe(200);
    }

    const rotated = (await pair.admin(pair.a, 'POST', `/environments/${env.id}/signing-keys/rotate`)).json().items;
    for (const server of pair.servers.slice(1)) {
      const afterRotation = await mint(server, env, await signedIn(server, env));
      expect(decodeProtectedHeader(afterRotation).kid).toBe(rotated[0].id);
      expect((await jwksOf(server, env)).keys.map((k: { kid: string }) => k.kid)).toEqual([rotated[0].id, rotated[1].id]);
      expect((await pair.serverApi(pair.a, env, 'POST', '/sessions/verify', { token: afterRotation })).status).toBe(200);
      expect((await pair.serverApi(server, env, 'POST', '/sessions/verify', { token: tokens[0] })).status).toBe(200);
    }
  });
});

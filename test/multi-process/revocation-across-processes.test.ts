import { readdirSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/given.js';
import { eventually } from '../helpers/eventually.js';
import type { ServerProcess } from '../helpers/processes.js';
import { startServerPair, type PairEnv as Env, type ServerPair } from '../helpers/server-pair.js';

// Two real server processes share one PostgreSQL database; PGlite is one process's file, so this file
// only runs with TEST_DATABASE_URL. The pair gets (and drops) a database of its own on that server, so it
// needs a role allowed to CREATE DATABASE, and starts from an empty database.
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

describe.skipIf(!TEST_DATABASE_URL)('several server processes on one PostgreSQL (needs TEST_DATABASE_URL)', () => {
  let pair: ServerPair;
  let a: ServerProcess;
  let b: ServerProcess;
  /** Every process but A, the one that makes the changes. */
  let others: ServerProcess[];

  beforeAll(async () => {
    // The processes start together on purpose: all migrate and bootstrap the same empty database at once.
    pair = await startServerPair(TEST_DATABASE_URL!);
    ({ a, b } = pair);
    others = pair.servers.slice(1);
  });
  afterAll(() => pair?.stop());

  const call = (...args: Parameters<ServerPair['call']>) => pair.call(...args);
  const admin = (...args: Parameters<ServerPair['admin']>) => pair.admin(...args);
  const serverApi = (...args: Parameters<ServerPair['serverApi']>) => pair.serverApi(...args);
  const client = (server: ServerProcess, env: Env, method: string, path: string, token?: string, body?: unknown) =>
    pair.client(server, env, method, path, body, token);

  async function signIn(server: ServerProcess, env: Env, email: string): Promise<string> {
    const res = await client(server, env, 'POST', '/auth/sign-in?_is_native=true', undefined, { email, password: PASSWORD });
    expect(res.status).toBe(200);
    return res.json().sessionToken;
  }

  it('migrates an empty database once and creates exactly one "development" environment when the processes start together', async () => {
    const printed = pair.servers.filter((s) => s.stderr().includes('Created the first environment, "development"'));
    expect(printed).toHaveLength(1);
    const direct = new pg.Client({ connectionString: pair.databaseUrl });
    await direct.connect();
    try {
      const environments = await direct.query<{ name: string }>('select name from environments');
      expect(environments.rows.map((r) => r.name)).toEqual(['development']);
      const migrations = await direct.query<{ n: number }>('select count(*)::int as n from schema_migrations');
      expect(migrations.rows[0]!.n).toBe(readdirSync(new URL('../../migrations/', import.meta.url)).filter((f) => f.endsWith('.sql')).length);
    } finally {
      await direct.end();
    }
  });

  it('answers 401 on every other process at the very next request after all sessions are revoked through process A', async () => {
    const env = await pair.environment();
    const ada = await pair.user(env);
    const token = await signIn(b, env, ada.email);
    for (const server of pair.servers) {
      const me = await client(server, env, 'GET', '/me', token);
      expect(me.status).toBe(200);
      expect(me.json().id).toBe(ada.id);
    }

    expect((await serverApi(a, env, 'DELETE', `/users/${ada.id}/sessions`)).status).toBe(204);

    for (const server of others) {
      const next = await client(server, env, 'GET', '/me', token);
      expect(next.status).toBe(401);
      expect(next.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(next.json().properties.code).toBe('unauthenticated');
    }
    expect((await client(a, env, 'GET', '/me', token)).status).toBe(401);
  });

  it('ends a session started on process B at once on every other process when it signs out through process A', async () => {
    const env = await pair.environment();
    const grace = await pair.user(env);
    const token = await signIn(b, env, grace.email);
    const other = await signIn(b, env, grace.email);

    expect((await client(a, env, 'POST', '/auth/sign-out', token)).status).toBe(204);

    for (const server of others) {
      expect((await client(server, env, 'GET', '/me', token)).status).toBe(401);
      expect((await client(server, env, 'GET', '/me', other)).status).toBe(200);
    }
  });

  it('refuses a user banned through process A on every other process: the session answers 401 and sign-in 403 user_banned', async () => {
    const env = await pair.environment();
    const alan = await pair.user(env);
    const token = await signIn(b, env, alan.email);

    expect((await serverApi(a, env, 'POST', `/users/${alan.id}/ban`)).status).toBe(200);

    for (const server of others) {
      expect((await client(server, env, 'GET', '/me', token)).status).toBe(401);
      const refused = await client(server, env, 'POST', '/auth/sign-in?_is_native=true', undefined, { email: alan.email, password: PASSWORD });
      expect(refused.status).toBe(403);
      expect(refused.json().properties.code).toBe('user_banned');
    }
  });
  it('refuses a secret key on every other process once it hears the revocation through process A, though they had it cached, and from then on', async () => {
    const env = await pair.environment();
    const second = await admin(a, 'POST', `/environments/${env.id}/secret-keys`);
    expect(second.status).toBe(201);
    const { id: keyId, secretKey } = second.json();
    const withSecond = { ...env, secretKey };
    for (const server of others) {
      for (let i = 0; i < 3; i++) expect((await serverApi(server, withSecond, 'GET', '/allowed-origins')).status).toBe(200);
    }

    expect((await admin(a, 'DELETE', `/secret-keys/${keyId}`)).status).toBe(204);

    // Every process is signalled at the revocation's commit, and A answers once it heard its own signal; another
    // process may still be reading its own signal when the next request arrives (docs/operations.md, "Caches"), so
    // the test waits for the refusal, which then holds.
    for (const server of others) {
      await expect.poll(async () => (await serverApi(server, withSecond, 'GET', '/allowed-origins')).status).toBe(401);
      const next = await serverApi(server, withSecond, 'GET', '/allowed-origins');
      expect(next.status).toBe(401);
      expect(next.json().properties.code).toBe('unauthenticated');
      expect((await serverApi(server, env, 'GET', '/allowed-origins')).status).toBe(200);
    }
  });

  it('applies allowed origins changed through process A to CORS on every other process at once', async () => {
    const env = await pair.environment();
    const origin = 'https://app.example.com';
    const preflight = (server: ServerProcess) => call(server, {
      method: 'OPTIONS', path: '/_svc/auth/sign-in', host: env.frontendHost,
      headers: { origin, 'access-control-request-method': 'POST' },
    });
    // Refused: 403 origin_not_allowed, whose Access-Control-Allow-Origin is a sentence that grants nothing.
    const refused = async (server: ServerProcess) => {
      const res = await preflight(server);
      expect(res.status).toBe(403);
      expect(res.headers['access-control-allow-origin']).not.toBe(origin);
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    };
    const allowed = async (server: ServerProcess) => {
      const res = await preflight(server);
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
    };
    const onEveryOther = (check: (server: ServerProcess) => Promise<void>) =>
      Promise.all(others.map((server) => eventually(() => check(server), { interval: 5 })));
    for (const server of others) await refused(server);

    // Each process evicts its copy when PostgreSQL delivers A's notification, a moment after A's commit and
    // answer: its next requests see the change as soon as it arrives, without waiting for the cache's time limit.
    expect((await serverApi(a, env, 'PUT', '/allowed-origins', { origins: [origin] })).status).toBe(200);
    await onEveryOther(allowed);

    expect((await serverApi(a, env, 'PUT', '/allowed-origins', { origins: [] })).status).toBe(200);
    await onEveryOther(refused);
  });
});

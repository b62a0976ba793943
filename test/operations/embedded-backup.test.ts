import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, spawnServer, type ServerProcess } from '../helpers/processes.js';
import { answered, planes, runToEnd, signedInUser, signIn, startOrRefuse, type DrillEnv } from './support.js';

// The embedded database's backup of docs/operations.md ("Backup and restore"): the data directory of a
// stopped server, archived with tar and unpacked elsewhere, is the whole service.
describe('an embedded data directory archived while its server is stopped, unpacked elsewhere', () => {
  const servers: ServerProcess[] = [];
  let parent: string;
  let env: DrillEnv;
  let user: Awaited<ReturnType<typeof signedInUser>>;
  let jwksBefore: JSONWebKeySet;

  const adminTokenOf = async (dataDir: string) => (await readFile(join(dataDir, 'admin.token'), 'utf8')).trim();
  async function unpack(archive: string, name: string) {
    const dir = join(parent, name);
    await mkdir(dir);
    expect(await runToEnd('tar', ['-xzf', join(parent, archive), '-C', dir])).toMatchObject({ code: 0 });
    return dir;
  }

  beforeAll(async () => {
    parent = await mkdtemp(join(tmpdir(), 'gatehouse-embedded-drill-'));
    const dataDir = join(parent, 'data');
    const source = await spawnServer({ env: { GATEHOUSE_DATA_DIR: dataDir } });
    servers.push(source);
    const api = planes(source, await adminTokenOf(dataDir));
    env = answered(await api.admin('POST', '/environments', { name: 'drill', settings: { session: { jwtLifetimeSeconds: 3600 } } }), 201);
    user = await signedInUser(api, env);
    jwksBefore = answered(await api.client(env, 'GET', '/.well-known/jwks.json'), 200);
    expect(await source.stop()).toEqual({ code: 0, signal: null });
    expect(await runToEnd('tar', ['-czf', join(parent, 'backup.tgz'), '-C', dataDir, '.'])).toMatchObject({ code: 0 });
    expect(await runToEnd('tar', ['-czf', join(parent, 'without-key.tgz'), '--exclude=./encryption.key', '-C', dataDir, '.'])).toMatchObject({ code: 0 });
    await rm(dataDir, { recursive: true }); // the disaster
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    if (parent) await rm(parent, { recursive: true, force: true });
  });

  it('starts from the copy: the user signs in, the session and its JWT hold, and the same key signs', async () => {
    const dataDir = await unpack('backup.tgz', 'restored');
    const server = await spawnServer({ env: { GATEHOUSE_DATA_DIR: dataDir } });
    servers.push(server);
    const api = planes(server, await adminTokenOf(dataDir));

    expect(await signIn(api, env, user.email)).toBe(user.id);
    expect(answered(await api.client(env, 'GET', '/me', undefined, user.sessionToken), 200).id).toBe(user.id);
    const jwks = answered<JSONWebKeySet>(await api.client(env, 'GET', '/.well-known/jwks.json'), 200);
    expect(jwks).toEqual(jwksBefore);
    const { token } = answered(await api.client(env, 'POST', '/sessions/current/token', undefined, user.sessionToken), 200);
    expect(decodeProtectedHeader(token).kid).toBe(decodeProtectedHeader(user.jwt).kid);
    for (const t of [user.jwt, token]) {
      const { payload } = await jwtVerify(t, createLocalJWKSet(jwks), { issuer: `http://${env.frontendHost}`, algorithms: ['ES256'] });
      expect(payload.sub).toBe(user.id);
    }
  });

  it('refuses to start from a copy without its encryption.key, naming the key file that does not open its secrets', async () => {
    const dataDir = await unpack('without-key.tgz', 'keyless');
    const started = await startOrRefuse({ GATEHOUSE_DATA_DIR: dataDir, PORT: String(await freePort()) });
    expect(started).toMatchObject({ served: false, code: 2 });
    const keyFile = join(dataDir, 'encryption.key');
    expect(started.stderr).toContain(`Generated the encryption key of the embedded database's secrets (signing keys) in ${keyFile}`);
    expect(started.stderr).toMatch(new RegExp(`\\nThe encryption key in ${keyFile.replace(/[.]/g, '\\.')} does not open the secrets sealed in this database `
      + `\\(signing key ${decodeProtectedHeader(user.jwt).kid} of environment ${env.id}\\): they were sealed under another key\\. `));
    expect(started.stdout).not.toContain('Gatehouse ready');
  });
});

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest, spawnServer } from '../helpers/processes.js';

const run = promisify(execFile);

describe('the gatehouse operator CLI', () => {
  let dataDir: string;
  beforeAll(async () => { dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-cli-')); });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  /** Runs the CLI with --json (the output scripts parse) unless `flags` says otherwise. */
  const runWith = (extraEnv: Record<string, string>, flags = ['--json']) => async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run('node', ['bin/gatehouse.js', ...flags, ...args], {
        env: { ...process.env, GATEHOUSE_DATA_DIR: dataDir, DATABASE_URL: '', PORT: '4321', ...extraEnv },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
  const gatehouse = Object.assign(runWith({}), { withEnv: runWith });
  /** The CLI as a person runs it: tables, no --json. */
  const human = runWith({}, []);

  it('applies every migration once with migrate, and says the database is up to date the second time', async () => {
    const fresh = await mkdtemp(join(tmpdir(), 'gatehouse-migrate-'));
    try {
      // From source: the compiled CLI (bin/gatehouse.js once `npm run build` ran) starts a new data directory
      // from the build's migrated template, where there is nothing left to apply (test/platform/embedded-template.test.ts).
      const migrate = () => run('node', ['--import', 'tsx', 'src/cli.ts', 'migrate'], { env: { ...process.env, GATEHOUSE_DATA_DIR: fresh, DATABASE_URL: '' } });
      const first = await migrate();
      expect(first.stderr).toMatch(/Applied migrations: 0001_environments\.sql, 0002_users\.sql/);
      expect(first.stderr).toContain('Database is up to date.');
      const second = await migrate();
      expect(second.stderr).not.toContain('Applied migrations');
      // A busy machine can take over a second to open the database, and then the CLI says so first ("Opening ...").
      const withoutProgress = second.stderr.split('\n').filter((line) => line !== '' && !line.endsWith('...'));
      expect(withoutProgress).toEqual(['Database is up to date.']);
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  });

  it('creates an environment and prints JSON with its id, secret key and frontend host', async () => {
    const res = await gatehouse('env', 'create', '--name', 'Staging EU', '--frontend-host', 'staging.example.test');
    expect(res.code).toBe(0);
    const env = JSON.parse(res.stdout);
    expect(env).toMatchObject({ name: 'Staging EU', frontendHost: 'staging.example.test' });
    expect(env.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(env.secretKey).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);

    const list = await gatehouse('env', 'list');
    expect(list.code).toBe(0);
    const listed = JSON.parse(list.stdout);
    expect(listed.map((e: { id: string }) => e.id)).toContain(env.id);
    expect(list.stdout).not.toContain('sk_');
  });

  it('lists, rotates and revokes signing keys, sealing them under the data directory key it generates with mode 0600', async () => {
    const env = JSON.parse((await gatehouse('env', 'create', '--name', 'signing-test')).stdout);
    const listed = await gatehouse('signing-keys', 'list', env.id);
    expect(listed.code, listed.stderr).toBe(0);
    const [first] = JSON.parse(listed.stdout).items;
    expect(first).toMatchObject({ status: 'active', publicJwk: { kty: 'EC', crv: 'P-256', alg: 'ES256' } });
    expect((await stat(join(dataDir, 'encryption.key'))).mode & 0o777).toBe(0o600);

    const rotated = JSON.parse((await gatehouse('signing-keys', 'rotate', env.id)).stdout).items;
    expect(rotated.map((k: { id: string; status: string }) => [k.id === first.id, k.status])).toEqual([[false, 'active'], [true, 'retired']]);
    const revoked = JSON.parse((await gatehouse('signing-keys', 'revoke', env.id, first.id)).stdout).items;
    expect(revoked.find((k: { id: string }) => k.id === first.id).status).toBe('revoked');
    const missing = await gatehouse('signing-keys', 'revoke', env.id);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("error: missing required argument 'keyId'");
  });

  it('sets, lists and deletes external sign-in providers, taking the secret from GATEHOUSE_OAUTH_CLIENT_SECRET and never printing it', async () => {
    const env = JSON.parse((await gatehouse('env', 'create', '--name', 'oauth-test')).stdout);
    const secret = 'cli-client-secret-0123456789';
    const set = await gatehouse.withEnv({ GATEHOUSE_OAUTH_CLIENT_SECRET: secret })('oauth-providers', 'set', env.id, 'google', '{"type":"google","name":"Google","clientId":"gid"}');
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ id: 'google', type: 'google', clientId: 'gid', enabled: true, scopes: ['openid', 'email', 'profile'] });
    const list = await gatehouse('oauth-providers', 'list', env.id);
    expect(JSON.parse(list.stdout).items.map((p: { id: string }) => p.id)).toEqual(['google']);
    expect(set.stdout + list.stdout).not.toContain(secret);

    const noSecret = await gatehouse('oauth-providers', 'set', env.id, 'corp', '{"type":"oidc","name":"Corp","clientId":"c","issuer":"https://sso.example.com"}');
    expect(noSecret.code).toBe(1);
    expect(noSecret.stderr).toContain('/body/clientSecret');
    const badJson = await gatehouse('oauth-providers', 'set', env.id, 'corp', '{"type":"facebook","name":"x","clientId":"c"}');
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain('Invalid provider: /type');

    const deleted = await gatehouse('oauth-providers', 'delete', env.id, 'google');
    expect(deleted.code).toBe(0);
    expect(deleted.stderr).toContain('Deleted provider google.');
    expect(JSON.parse((await gatehouse('oauth-providers', 'list', env.id)).stdout).items).toEqual([]);
    expect((await gatehouse('oauth-providers', 'delete', env.id, 'google')).code).toBe(1);
  });

  it('deep-merges settings, and refuses invalid settings with the reason and exit code 1', async () => {
    const env = JSON.parse((await gatehouse('env', 'create', '--name', 'settings-test')).stdout);
    const ok = await gatehouse('env', 'settings', env.id, '{"lockout":{"maxFailedAttempts":5}}');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).settings.lockout).toEqual({ maxFailedAttempts: 5, coolDownSeconds: 3600, ipMaxFailures: 100, ipWindowSeconds: 900 });

    const bad = await gatehouse('env', 'settings', env.id, '{"passwordPolicy":{"minLength":4}}');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('/settings/passwordPolicy/minLength');
  });

  it('prints a new environment and a new key as JSON even without --json, as the contract fixes (their secret key is shown only then)', async () => {
    const created = await human('env', 'create', '--name', 'human-json');
    expect(created.code).toBe(0);
    const env = JSON.parse(created.stdout);
    expect(env).toMatchObject({ name: 'human-json', secretKey: expect.stringMatching(/^sk_/) });
    const key = JSON.parse((await human('keys', 'create', env.id)).stdout);
    expect(key.secretKey).toMatch(/^sk_/);
  });

  it('issues and revokes secret keys', async () => {
    const env = JSON.parse((await gatehouse('env', 'create', '--name', 'keys-test')).stdout);
    const created = await gatehouse('keys', 'create', env.id);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key.secretKey).toMatch(/^sk_/);
    const revoked = await gatehouse('keys', 'revoke', key.id);
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toContain(`Revoked key ${key.id}`);
    const again = await gatehouse('keys', 'revoke', '01900000-0000-7000-8000-000000000000');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('No secret key with this id.');
  });

  it('creates and lists organization role sets, refusing one without an owner with exit code 1 and a malformed one with 2', async () => {
    const env = JSON.parse((await gatehouse('env', 'create', '--name', 'roles-test')).stdout);
    const created = await gatehouse('role-sets', 'create', env.id, '--name', 'Billing teams', '--roles', 'owner:Owner, billing:Billing,viewer');
    expect(created.code).toBe(0);
    const set = JSON.parse(created.stdout);
    expect(set).toMatchObject({ name: 'Billing teams', roles: [{ key: 'owner', name: 'Owner' }, { key: 'billing', name: 'Billing' }, { key: 'viewer', name: 'viewer' }] });
    expect(JSON.parse((await gatehouse('role-sets', 'list', env.id)).stdout)).toEqual({ items: [set] });
    const refused = await gatehouse('role-sets', 'create', env.id, '--name', 'x', '--roles', 'admin:Admin');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('must have an "owner" role');
    const malformed = await gatehouse('role-sets', 'create', env.id, '--name', 'x', '--roles', 'Owner:Boss');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('Invalid role set');
  });

  it('exits 2 for an unknown command, suggesting the command meant', async () => {
    const res = await gatehouse('env', 'lsit');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("error: unknown command 'lsit'");
    expect(res.stderr).toContain('(Did you mean list?)');
    const group = await gatehouse('usres', 'list');
    expect(group.code).toBe(2);
    expect(group.stderr).toContain('(Did you mean users?)');
  });

  it('acts through the running server on its embedded database: reads the development mail, lists and creates environments', async () => {
    const liveDir = await mkdtemp(join(tmpdir(), 'gatehouse-live-'));
    const server = await spawnServer({ env: { GATEHOUSE_DATA_DIR: liveDir } });
    try {
      expect(server.stderr()).toContain(`Admin API (/api/admin/v1): on, with the token in ${join(liveDir, 'admin.token')}`);
      expect((await stat(join(liveDir, 'admin.token'))).mode & 0o777).toBe(0o600);
      const signUp = await httpRequest(server.port, { method: 'POST', path: '/_svc/auth/sign-up', host: `localhost:${server.port}`, body: { email: 'new@example.com', password: 'correct horse battery staple' } });
      expect(signUp.status).toBe(201);
      const live = gatehouse.withEnv({ GATEHOUSE_DATA_DIR: liveDir });
      const envs = await live('env', 'list');
      expect(envs.code, envs.stderr).toBe(0);
      const [development] = JSON.parse(envs.stdout);
      expect(development).toMatchObject({ name: 'development', frontendHost: `localhost:${server.port}` });
      const outbox = await live('outbox', development.id, '--to', 'new@example.com');
      expect(outbox.code, outbox.stderr).toBe(0);
      expect(JSON.parse(outbox.stdout)[0].text).toMatch(/\b\d{6}\b/);
      const created = await live('env', 'create', '--name', 'staging');
      expect(JSON.parse(created.stdout)).toMatchObject({ name: 'staging', secretKey: expect.stringMatching(/^sk_/) });
      const missing = await live('keys', 'revoke', '01900000-0000-7000-8000-000000000000');
      expect(missing.code).toBe(1);

      // Users, organizations and allowed origins go through the Server API, with a key issued for the command.
      const ada = JSON.parse((await live('users', 'create', development.id, '--email', 'ada@example.com', '--first-name', 'Ada')).stdout);
      expect(ada).toMatchObject({ email: 'ada@example.com', firstName: 'Ada', status: 'active' });
      const { secretKey } = JSON.parse((await live('keys', 'create', development.id)).stdout);
      const org = (await httpRequest(server.port, { method: 'POST', path: '/api/server/v1/organizations', headers: { authorization: `Bearer ${secretKey}` }, body: { name: 'Acme', createdBy: ada.id } })).json();
      expect(JSON.parse((await live('organizations', 'list', development.id)).stdout).items.map((o: { id: string }) => o.id)).toEqual([org.id]);
      expect(JSON.parse((await live('organizations', 'get', development.id, org.id)).stdout)).toMatchObject({ id: org.id, name: 'Acme' });
      expect(JSON.parse((await live('organizations', 'members', development.id, org.id)).stdout).items).toEqual([expect.objectContaining({ userId: ada.id, role: 'owner' })]);
      const bob = JSON.parse((await live('users', 'create', development.id, '--email', 'bob@example.com')).stdout);
      expect(JSON.parse((await live('users', 'ban', development.id, bob.id)).stdout).status).toBe('banned');
      expect(JSON.parse((await live('users', 'list', development.id, '--status', 'banned')).stdout).items.map((u: { id: string }) => u.id)).toEqual([bob.id]);
      await live('allowed-origins', 'add', development.id, 'http://localhost:5173', 'https://app.example.com');
      const removed = await live('allowed-origins', 'remove', development.id, 'https://app.example.com');
      expect(JSON.parse(removed.stdout)).toEqual({ origins: ['http://localhost:5173'] });
      expect(JSON.parse((await live('allowed-origins', 'list', development.id)).stdout)).toEqual({ origins: ['http://localhost:5173'] });
      await server.stop();
      // A stopped server no longer announces itself: the CLI opens the database again.
      expect(existsSync(join(liveDir, 'server.json'))).toBe(false);
      expect((await live('env', 'list')).code).toBe(0);
    } finally {
      await server.stop();
      await rm(liveDir, { recursive: true, force: true });
    }
  });

  it('answers --help per command, --version with the package version, and exits 0', async () => {
    const users = await human('users', '--help');
    expect(users.code).toBe(0);
    expect(users.stdout).toContain('Usage: gatehouse users [options] [command]');
    expect(users.stdout).toMatch(/ban <envId> <userId>\s+ban a user and revoke their sessions/);
    const create = await human('users', 'create', '--help');
    expect(create.stdout).toContain('Usage: gatehouse users create [options] <envId>');
    expect(create.stdout).toContain('--email <email>');
    const version = await human('--version');
    expect(version).toMatchObject({ code: 0, stdout: `${JSON.parse(await readFile('package.json', 'utf8')).version}\n` });
  });

  it('creates, lists, shows, bans and unbans users over the database, as a table by default and JSON with --json', async () => {
    const env = JSON.parse((await gatehouse('env', 'create', '--name', 'users-test')).stdout);
    const created = await gatehouse.withEnv({ GATEHOUSE_USER_PASSWORD: 'a long passphrase' })('users', 'create', env.id, '--email', 'grace@example.com', '--first-name', 'Grace', '--last-name', 'Hopper');
    expect(created.code, created.stderr).toBe(0);
    const grace = JSON.parse(created.stdout);
    expect(grace).toMatchObject({ email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', status: 'active' });
    expect(created.stdout).not.toContain('a long passphrase');

    const table = await human('users', 'list', env.id);
    expect(table.code).toBe(0);
    const [header, row, ...rest] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+EMAIL\s+NAME\s+STATUS\s+CREATEDAT$/);
    expect(row).toMatch(new RegExp(`^${grace.id}\\s+grace@example\\.com\\s.*\\bactive\\s+\\d{4}-`));
    expect(rest).toEqual([]);
    expect((await human('users', 'get', env.id, grace.id)).stdout).toMatch(/^email:\s+grace@example\.com$/m);

    expect(JSON.parse((await gatehouse('users', 'ban', env.id, grace.id)).stdout).status).toBe('banned');
    expect(JSON.parse((await gatehouse('users', 'unban', env.id, grace.id)).stdout).status).toBe('active');
    const nobody = await gatehouse('users', 'get', env.id, '01900000-0000-7000-8000-000000000000');
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toMatch(/No user/);
    expect((await gatehouse('users', 'list', env.id, '--status', 'gone')).code).toBe(2);
    const invalid = await gatehouse('users', 'create', env.id, '--email', 'not-an-email');
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('Invalid user: /email must match format "email"');
    expect((await human('organizations', 'list', env.id)).stdout).toBe('(none)\n');
  });

  it('adds, lists and removes allowed origins over the database', async () => {
    const env = JSON.parse((await gatehouse('env', 'create', '--name', 'origins-test')).stdout);
    expect(JSON.parse((await gatehouse('allowed-origins', 'add', env.id, 'http://localhost:5173')).stdout)).toEqual({ origins: ['http://localhost:5173'] });
    const table = await human('allowed-origins', 'list', env.id);
    expect(table.stdout).toBe('ORIGIN\nhttp://localhost:5173\n');
    expect(JSON.parse((await gatehouse('allowed-origins', 'remove', env.id, 'http://localhost:5173')).stdout)).toEqual({ origins: [] });
    const bad = await gatehouse('allowed-origins', 'add', env.id, 'not a url');
    expect(bad.code).toBe(1);
  });

  it('refuses to open an embedded data directory that a live process holds', async () => {
    await writeFile(join(dataDir, 'gatehouse.pid'), String(process.pid));
    try {
      const res = await gatehouse('env', 'list');
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`Another Gatehouse process (pid ${process.pid}) is using`);
    } finally {
      await rm(join(dataDir, 'gatehouse.pid'), { force: true });
    }
  });
});

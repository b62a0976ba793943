import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseEnv, directUrlOf } from '../helpers/database-urls.js';
import { eventually } from '../helpers/eventually.js';
import { freePort, spawnServer, type ServerProcess } from '../helpers/processes.js';
import { authorizeAt, startScriptableProvider, type ScriptableProvider } from '../helpers/scriptable-provider.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { answered, LANDING, planes, runToEnd, signedInUser, signIn, startOrRefuse, type DrillEnv, type Planes } from './support.js';

// The restore drill of docs/operations.md ("Backup and restore"): a database populated through the APIs is
// dumped with pg_dump while its server serves, restored with pg_restore into a new database, and served
// again. PostgreSQL only: the embedded database's drill is embedded-backup.test.ts.
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
const ADMIN_TOKEN = 'backup-drill-admin-token-0123456789';
const KEY = randomBytes(32).toString('base64');

interface Feed { items: { sequence: number; id: string }[] }

describe.skipIf(!TEST_DATABASE_URL)('a PostgreSQL backup restored with pg_dump and pg_restore into a new database (needs TEST_DATABASE_URL)', () => {
  const prefix = `gatehouse_drill_${randomBytes(4).toString('hex')}`;
  const urlOf = (name: string) => Object.assign(new URL(TEST_DATABASE_URL!), { pathname: `/${prefix}_${name}` }).toString();
  const made: string[] = [];
  const servers: ServerProcess[] = [];
  let maintenance: pg.Client;
  let provider: ScriptableProvider;
  let receiver: WebhookReceiver;
  let dir: string;
  let dump: string;

  // Made before the dump, on the source database.
  let env: DrillEnv;
  let user: Awaited<ReturnType<typeof signedInUser>>;
  let webhookSecret: string;
  let jwksBefore: JSONWebKeySet;
  let feedBefore: Feed['items'];
  let sequencesBefore: unknown[];
  let restoredJobs: { id: string; seq: number }[];
  let appendedBefore: { body: object; event: { id: string; sequence: number } };
  let restored: Planes;

  async function newDatabase(name: string) {
    await maintenance.query(`create database ${prefix}_${name} template template0`);
    made.push(`${prefix}_${name}`);
    return urlOf(name);
  }
  async function query<T extends pg.QueryResultRow>(url: string, text: string) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try { return (await client.query<T>(text)).rows; } finally { await client.end(); }
  }
  const identitySequences = (url: string) => query(url, `select sequencename, last_value from pg_sequences where schemaname = 'public' order by 1`);
  const serverEnv = (url: string, key = KEY) => ({
    DATABASE_URL: url, GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN, GATEHOUSE_ENCRYPTION_KEY: key, GATEHOUSE_WEBHOOK_PRIVATE_TARGETS: 'allow',
  });
  async function serve(url: string, key = KEY) {
    const server = await spawnServer({ env: serverEnv(url, key) });
    servers.push(server);
    return server;
  }
  /** pg_restore of the dump into a new database, as docs/operations.md gives it. */
  async function restoreInto(name: string) {
    const url = await newDatabase(name);
    const restore = await runToEnd('pg_restore', ['--no-owner', '--no-privileges', '--single-transaction', `--dbname=${directUrlOf(url)}`, dump]);
    expect(restore.stderr).toBe('');
    expect(restore.code).toBe(0);
    return url;
  }
  const feed = async (api: Planes) => answered<Feed>(await api.server(env, 'GET', '/audit-events/feed?afterSequence=0&limit=100'), 200).items;
  const deliveries = async (api: Planes, endpointId: string) =>
    answered(await api.server(env, 'GET', `/webhook-endpoints/${endpointId}/deliveries?limit=100`), 200).items as { status: string }[];

  async function populate(api: Planes) {
    env = answered(await api.admin('POST', '/environments', { name: `drill-${prefix}`, settings: { session: { jwtLifetimeSeconds: 3600 } } }), 201);
    answered(await api.server(env, 'PUT', '/allowed-origins', { origins: ['https://app.example.com'] }), 200);
    answered(await api.admin('PUT', `/environments/${env.id}/oauth-providers/acme`, {
      type: 'oidc', name: 'Acme', clientId: provider.clientId, clientSecret: provider.clientSecret, issuer: provider.issuer,
    }), 201);
    const endpoint = answered(await api.server(env, 'POST', '/webhook-endpoints', { url: `${receiver.url}/drill`, eventTypes: ['user.created'] }), 201);
    webhookSecret = endpoint.secret;
    user = await signedInUser(api, env);
    for (let i = 0; i < 3; i++) {
      const body = {
        action: 'document.shared', result: 'success', schemaVersion: 1, occurredAt: new Date().toISOString(),
        actor: { type: 'user', id: user.id }, targets: [{ type: 'document', id: `doc_${i}` }], metadata: { i },
      };
      appendedBefore = { body, event: answered(await api.server(env, 'POST', '/audit-events', body, { 'idempotency-key': `drill-${i}` }), 201) };
    }
    // Settled before the dump, so what the receiver gets after the restore is new.
    await eventually(async () => expect(await deliveries(api, endpoint.id)).toEqual([expect.objectContaining({ status: 'succeeded' })]), { interval: 50 });
    jwksBefore = answered(await api.client(env, 'GET', '/.well-known/jwks.json'), 200);
    feedBefore = await feed(api);
  }

  beforeAll(async () => {
    maintenance = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await maintenance.connect();
    [provider, receiver, dir] = await Promise.all([startScriptableProvider(), startWebhookReceiver(), mkdtemp(join(tmpdir(), 'gatehouse-drill-'))]);
    dump = join(dir, 'gatehouse.dump');
    const sourceUrl = await newDatabase('source');
    const source = await serve(sourceUrl);
    await populate(planes(source, ADMIN_TOKEN));
    sequencesBefore = await identitySequences(sourceUrl);
    // The dump is taken while the source serves: pg_dump reads one snapshot.
    const dumped = await runToEnd('pg_dump', ['--format=custom', `--file=${dump}`, directUrlOf(sourceUrl)]);
    expect(dumped).toMatchObject({ code: 0, stderr: '' });
    await source.stop();

    const restoredUrl = await restoreInto('restored');
    restoredJobs = await query(restoredUrl, 'select id, seq::int from jobs');
    expect(await identitySequences(restoredUrl)).toEqual(sequencesBefore);
    restored = planes(await serve(restoredUrl), ADMIN_TOKEN);
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all([provider?.close(), receiver?.stop(), dir && rm(dir, { recursive: true, force: true })]);
    for (const name of made) await maintenance.query(`drop database if exists ${name} with (force)`);
    await maintenance?.end();
  });

  it('signs the user in with their password', async () => {
    expect(await signIn(restored, env, user.email)).toBe(user.id);
  });

  it('keeps the session of before the backup: its token is signed in, and its JWT verifies with the same key', async () => {
    expect(answered(await restored.client(env, 'GET', '/me', undefined, user.sessionToken), 200).id).toBe(user.id);
    const jwks = answered<JSONWebKeySet>(await restored.client(env, 'GET', '/.well-known/jwks.json'), 200);
    expect(jwks).toEqual(jwksBefore);
    const { payload } = await jwtVerify(user.jwt, createLocalJWKSet(jwks), { issuer: `http://${env.frontendHost}`, algorithms: ['ES256'] });
    expect(payload.sub).toBe(user.id);
    expect(answered(await restored.server(env, 'POST', '/sessions/verify', { token: user.jwt }), 200)).toMatchObject({ claims: { sub: user.id }, session: { userId: user.id } });
  });

  it("signs new session JWTs with the restored key (its sealed private half opens), which the backup's JWKS verifies", async () => {
    const { token } = answered(await restored.client(env, 'POST', '/sessions/current/token', undefined, user.sessionToken), 200);
    expect(decodeProtectedHeader(token).kid).toBe(decodeProtectedHeader(user.jwt).kid);
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwksBefore), { issuer: `http://${env.frontendHost}`, algorithms: ['ES256'] });
    expect(payload.sub).toBe(user.id);
  });

  it("opens the provider's sealed client secret: an external sign-in completes, the provider having checked the secret", async () => {
    provider.script.claims.sub = `sub-${randomBytes(6).toString('hex')}`;
    const start = await restored.client(env, 'GET', `/auth/oauth2/acme/authorize?redirect_url=${encodeURIComponent(LANDING)}`);
    expect(start.status).toBe(302);
    const cookie = (start.headers['set-cookie'] ?? []).find((c) => c.startsWith('__oauth_browser='))!.split(';')[0]!;
    const back = await authorizeAt(new URL(start.headers.location!));
    const callback = await restored.call(`${back.pathname}${back.search}`, env.frontendHost, { cookie });
    expect(callback.status).toBe(303);
    expect(callback.headers.location).toBe(LANDING);
    expect((callback.headers['set-cookie'] ?? []).some((c) => c.startsWith('__session=sess_'))).toBe(true);
  });

  it("opens the webhook endpoint's sealed secret: a change after the restore is delivered signed with it", async () => {
    const created = answered<{ id: string }>(await restored.server(env, 'POST', '/users', { email: `after-${randomBytes(4).toString('hex')}@example.com` }), 201);
    const about = async () => (await receiver.received()).filter((r) => JSON.parse(r.body).data.id === created.id);
    await eventually(async () => expect(await about()).toHaveLength(1), { interval: 50 });
    const [delivery] = await about();
    const event = new Webhook(webhookSecret).verify(delivery!.body, delivery!.headers as Record<string, string>);
    expect(event).toMatchObject({ type: 'user.created', data: { id: created.id } });
  });

  it('reads the same audit log, whose sequence goes on from its last number without a gap', async () => {
    const appended = answered(await restored.server(env, 'POST', '/audit-events', {
      action: 'document.restored', result: 'success', schemaVersion: 1, occurredAt: new Date().toISOString(), actor: { type: 'service' }, targets: [], metadata: {},
    }, { 'idempotency-key': 'drill-after-restore' }), 201);
    const after = await feed(restored);
    expect(after.slice(0, feedBefore.length)).toEqual(feedBefore);
    expect(after.map((e) => e.sequence)).toEqual(after.map((_, i) => i + 1));
    expect(appended.sequence).toBeGreaterThan(feedBefore.at(-1)!.sequence);
    expect(after.at(-1)).toEqual(appended);
  });

  it('keeps the audit log append-only: the restored trigger refuses to change an event', async () => {
    const change = query(urlOf('restored'), `update audit_events set action = 'document.forged' where sequence = 1`);
    await expect(change).rejects.toMatchObject({ code: '42501', message: 'audit events are append-only: UPDATE refused' });
  });

  it('answers an idempotency key of before the backup with its stored event', async () => {
    const replay = await restored.server(env, 'POST', '/audit-events', appendedBefore.body, { 'idempotency-key': 'drill-2' });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(appendedBefore.event);
  });

  it('carries the identity sequences over, so jobs queued after the restore number after the restored ones', async () => {
    answered(await restored.server(env, 'POST', '/users', { email: `seq-${randomBytes(4).toString('hex')}@example.com` }), 201);
    const jobs = await query<{ id: string; seq: number }>(urlOf('restored'), 'select id, seq::int from jobs');
    const restoredIds = new Set(restoredJobs.map((j) => j.id));
    const newer = jobs.filter((j) => !restoredIds.has(j.id));
    expect(restoredJobs.length).toBeGreaterThan(0);
    expect(newer.length).toBeGreaterThan(0);
    expect(Math.min(...newer.map((j) => j.seq))).toBeGreaterThan(Math.max(...restoredJobs.map((j) => Number(j.seq))));
    expect(new Set(jobs.map((j) => j.seq)).size).toBe(jobs.length);
  });

  it('refuses to start with another encryption key, saying which key does not open and what to do', async () => {
    const url = await restoreInto('other_key');
    const started = await startOrRefuse({ ...serverEnv(url, randomBytes(32).toString('base64')), PORT: String(await freePort()) });
    expect(started).toMatchObject({ served: false, code: 2 });
    expect(started.stderr).toBe(`GATEHOUSE_ENCRYPTION_KEY does not open the secrets sealed in this database (signing key ${decodeProtectedHeader(user.jwt).kid} of `
      + `environment ${env.id}): they were sealed under another key. A restored backup needs the key of the database it was taken from. If that `
      + `key is lost, rotate each environment's signing key (npx gatehouse signing-keys rotate ${env.id}, with this key) and start again; `
      + 'see docs/operations.md, "The encryption key and signing keys".\n');
    expect(started.stdout).not.toContain('Gatehouse ready');
  });

  it("starts with a new key once a lost key's signing keys are rotated with the CLI, and signs with the new ones", async () => {
    const url = await restoreInto('lost_key');
    const newKey = randomBytes(32).toString('base64');
    const cli = (...args: string[]) => runToEnd(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--json', ...args], { ...databaseEnv(url), GATEHOUSE_ENCRYPTION_KEY: newKey });
    const listed = await cli('env', 'list');
    expect(listed.code).toBe(0);
    const ids = (JSON.parse(listed.stdout) as { id: string }[]).map((e) => e.id);
    expect(ids).toContain(env.id);
    for (const id of ids) expect((await cli('signing-keys', 'rotate', id)).code).toBe(0);

    const api = planes(await serve(url, newKey), ADMIN_TOKEN);
    const { token } = answered(await api.client(env, 'POST', '/sessions/current/token', undefined, user.sessionToken), 200);
    expect(decodeProtectedHeader(token).kid).not.toBe(decodeProtectedHeader(user.jwt).kid);
    const jwks = createLocalJWKSet(answered(await api.client(env, 'GET', '/.well-known/jwks.json'), 200));
    for (const t of [token, user.jwt]) await expect(jwtVerify(t, jwks, { issuer: `http://${env.frontendHost}`, algorithms: ['ES256'] })).resolves.toBeDefined();
    expect(await signIn(api, env, user.email)).toBe(user.id);
  });
});

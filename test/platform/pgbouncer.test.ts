import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/platform/db/database.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { publishInvalidation } from '../../src/platform/db/notifications.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { directUrlOf, underPgBouncer } from '../helpers/database-urls.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { pgbouncerBinary, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import { freePort, httpRequest, serverEntry, spawnServer } from '../helpers/processes.js';
import { PAIR_ADMIN_TOKEN, PAIR_ENCRYPTION_KEY } from '../helpers/server-pair.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
/** The suite's database straight on PostgreSQL, whether or not the suite itself runs through its PgBouncer. */
const DIRECT_URL = TEST_DATABASE_URL && directUrlOf(TEST_DATABASE_URL);

async function connected(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}
const backendOf = async (client: pg.Client) => (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
const databaseName = (url: string) => new URL(url).pathname.slice(1);

describe.runIf(underPgBouncer())('the suite under TEST_PGBOUNCER=1', () => {
  it("reaches PostgreSQL through PgBouncer in transaction mode: a connection to TEST_DATABASE_URL is one of the pooler's clients", async () => {
    const client = await connected(TEST_DATABASE_URL!);
    const admin = await connected(process.env.TEST_PGBOUNCER_ADMIN_URL!);
    try {
      await backendOf(client);
      const localPort = (client as unknown as { connection: { stream: { localPort: number } } }).connection.stream.localPort;
      const clients = (await admin.query('show clients')).rows as { database: string; port: number }[];
      expect(clients).toContainEqual(expect.objectContaining({ database: databaseName(TEST_DATABASE_URL!), port: localPort }));
      const pools = (await admin.query('show pools')).rows as { database: string; pool_mode: string }[];
      expect(pools.filter((p) => p.database === databaseName(TEST_DATABASE_URL!)).map((p) => p.pool_mode)).toEqual(['transaction']);
    } finally {
      await Promise.all([client.end(), admin.end()]);
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL || !pgbouncerBinary())('PgBouncer 1.18 in transaction mode, a pool of 2 (needs TEST_DATABASE_URL and pgbouncer)', () => {
  describe('what a client meets there', () => {
    // A fresh pooler per test: which server connection a client gets depends on what the pool holds.
    let bouncer: PgBouncer;
    let clients: pg.Client[];
    beforeEach(async () => {
      bouncer = await startPgBouncer(DIRECT_URL!, { poolSize: 2 });
      clients = [await connected(bouncer.pooled(DIRECT_URL!)), await connected(bouncer.pooled(DIRECT_URL!))];
    });
    afterEach(async () => {
      await Promise.all(clients.map((c) => c.end()));
      await bouncer.stop();
    });

    it("hands one client's next statement to another server session once a second client's transaction holds the first", async () => {
      const [one, other] = clients as [pg.Client, pg.Client];
      const first = await backendOf(one);
      await other.query('begin');
      expect(await backendOf(other)).toBe(first);
      const next = await backendOf(one);
      await other.query('commit');
      expect(next).not.toBe(first);
    });

    it('loses a statement prepared by name: the next server session has never seen it (26000), as pg would use it', async () => {
      const [one, other] = clients as [pg.Client, pg.Client];
      const probe = { name: 'gatehouse_probe', text: 'select 1 as one' };
      expect((await one.query(probe)).rows).toEqual([{ one: 1 }]);
      await other.query('begin');
      await other.query('select 1');
      await expect(one.query(probe)).rejects.toMatchObject({ code: '26000', message: 'prepared statement "gatehouse_probe" does not exist' });
      await other.query('commit');
    });
  });

  describe('Gatehouse through it (named statements off, limits per transaction, LISTEN direct)', () => {
    let bouncer: PgBouncer;
    let t: TestApp;
    let database: Database;
    beforeAll(async () => {
      bouncer = await startPgBouncer(DIRECT_URL!, { poolSize: 2 });
      // Six connections of ours over PgBouncer's two server connections: every statement may land on another session.
      // (Five requests at a time stay within one environment's share of them, so none waits for a connection of ours.)
      database = await openDatabase({ url: bouncer.pooled(DIRECT_URL!), directUrl: DIRECT_URL!, poolSize: 6, limits: { statementTimeoutMs: 7000, lockTimeoutMs: 700 } });
      await migrate(database.db);
      t = await startTestApp({}, { database });
    });
    afterAll(async () => {
      await t.close();
      await bouncer.stop();
    });

    it('serves GET user, sign-in and audit append five at a time, round after round, while another client holds a server session', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const busy = await connected(bouncer.pooled(DIRECT_URL!));
      const appended: string[] = [];
      try {
        for (let round = 0; round < 4; round++) {
          if (round === 0) await busy.query('begin; select 1');
          if (round === 2) await busy.query('commit');
          const answers = await Promise.all(Array.from({ length: 5 }, async () => {
            const action = `document.shared.n${randomUUID().slice(0, 8)}`;
            appended.push(action);
            return [
              (await t.server(env).get(`/users/${user.id}`)).statusCode,
              (await t.client(env).post('/auth/sign-in?_is_native=true', { email: user.email, password: user.password })).statusCode,
              (await t.server(env).post('/audit-events', auditEvent(action), { headers: { 'idempotency-key': randomUUID() } })).statusCode,
            ];
          }));
          expect(answers).toEqual(Array.from({ length: 5 }, () => [200, 200, 201]));
        }
      } finally {
        await busy.end();
      }
      const stored = await sql<{ action: string }>`select action from audit_events where environment_id = ${env.id}::uuid and action like 'document.shared.%'`.execute(t.db);
      expect(stored.rows.map((r) => r.action).sort()).toEqual(appended.sort());
      const sessions = await sql<{ n: number }>`select count(*)::int as n from sessions where environment_id = ${env.id}::uuid and user_id = ${user.id}::uuid`.execute(t.db);
      expect(sessions.rows[0]!.n).toBe(20);
    });

    it("runs each transaction with the process's limits, and a statement outside one with the server session's own (connect_query)", async () => {
      const settings = sql<{ statement: string; lock: string; idle: string }>`select current_setting('statement_timeout') as statement,
        current_setting('lock_timeout') as lock, current_setting('idle_in_transaction_session_timeout') as idle`;
      expect((await database.db.transaction().execute((trx) => settings.execute(trx))).rows).toEqual([{ statement: '7s', lock: '700ms', idle: '21s' }]);
      expect((await settings.execute(database.db)).rows).toEqual([{ statement: '5s', lock: '2s', idle: '15s' }]);
    });

    it('ends a statement in a transaction that runs past the statement timeout (57014), with nothing left on the pooled session', async () => {
      const quick = await openDatabase({ url: bouncer.pooled(DIRECT_URL!), directUrl: DIRECT_URL!, poolSize: 1, limits: { statementTimeoutMs: 100, lockTimeoutMs: 100 } });
      try {
        await expect(quick.db.transaction().execute((trx) => sql`select pg_sleep(30)`.execute(trx))).rejects.toMatchObject({ code: '57014' });
        expect((await sql<{ statement: string }>`select current_setting('statement_timeout') as statement`.execute(quick.db)).rows).toEqual([{ statement: '5s' }]);
      } finally {
        await quick.close();
      }
    });

    it('hears an invalidation sent inside a transaction through the pooler, on its own direct connection', async () => {
      while (!database.notifications.listening) await new Promise((resolve) => setTimeout(resolve, 20));
      const payload = `probe-${randomUUID()}`;
      const heard = new Promise<void>((resolve) => database.notifications.subscribe((message) => { if (message === payload) resolve(); }, () => {}));
      await database.db.transaction().execute((trx) => publishInvalidation(trx, payload));
      await heard;
    });
  });

  describe('a database of its own behind it', () => {
    let maintenance: pg.Client;
    const created: string[] = [];
    /** A new empty database on the suite's server, dropped after these tests: its URL straight to PostgreSQL. */
    async function freshDatabase() {
      const name = `gatehouse_bouncer_${randomBytes(6).toString('hex')}`;
      await maintenance.query(`create database ${name}`);
      created.push(name);
      return Object.assign(new URL(DIRECT_URL!), { pathname: `/${name}` }).toString();
    }
    let own: string;
    beforeAll(async () => {
      maintenance = await connected(DIRECT_URL!);
      own = await freshDatabase();
    });
    afterAll(async () => {
      for (const name of created) await maintenance.query(`drop database if exists ${name} with (force)`);
      await maintenance.end();
    });

    it('migrates an empty database from two processes at once through the pooler: each migration once, no lock left behind', async () => {
      const fresh = await freshDatabase();
      const bouncer = await startPgBouncer(fresh, { poolSize: 2 });
      const [a, b] = await Promise.all([0, 1].map(() => openDatabase({ url: bouncer.pooled(fresh), directUrl: fresh, poolSize: 2 })));
      try {
        const [ranByA, ranByB] = await Promise.all([migrate(a!.db), migrate(b!.db)]);
        const files = readdirSync(new URL('../../migrations/', import.meta.url)).filter((f) => f.endsWith('.sql')).sort();
        expect([...ranByA!, ...ranByB!].sort()).toEqual(files);
        const check = await connected(fresh);
        try {
          expect((await check.query('select version from schema_migrations order by version')).rows.map((r) => r.version)).toEqual(files);
          // This database's only: pg_locks lists every database's, and other files' transactions hold advisory locks of their own meanwhile.
          expect((await check.query("select count(*)::int as n from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())")).rows).toEqual([{ n: 0 }]);
        } finally {
          await check.end();
        }
      } finally {
        await Promise.all([a!.close(), b!.close()]);
        await bouncer.stop();
      }
    });

    it("refuses to start (exit code 2) when the pooler's sessions have no statement timeout, since a statement could run forever", async () => {
      const bouncer = await startPgBouncer(own, { serverSettings: {} });
      try {
        const failure = await startServer({ DATABASE_URL: bouncer.pooled(own), DATABASE_DIRECT_URL: own, GATEHOUSE_ENCRYPTION_KEY: PAIR_ENCRYPTION_KEY });
        expect(failure?.code).toBe(2);
        expect(failure?.stderr).toContain('DATABASE_POOLER=transaction: statements through the pooler run without a statement timeout (statement_timeout is 0)');
      } finally {
        await bouncer.stop();
      }
    });

    it('starts with DATABASE_URL through the pooler and DATABASE_DIRECT_URL, and serves', async () => {
      const bouncer = await startPgBouncer(own, { poolSize: 2 });
      const server = await spawnServer({ env: { DATABASE_URL: bouncer.pooled(own), DATABASE_DIRECT_URL: own, GATEHOUSE_ENCRYPTION_KEY: PAIR_ENCRYPTION_KEY, GATEHOUSE_ADMIN_TOKEN: PAIR_ADMIN_TOKEN } });
      try {
        const admin = { authorization: `Bearer ${PAIR_ADMIN_TOKEN}` };
        const env = (await httpRequest(server.port, { method: 'POST', path: '/api/admin/v1/environments', headers: admin, body: { name: 'behind-pgbouncer' } })).json();
        const key = { authorization: `Bearer ${env.secretKey}` };
        const created = await httpRequest(server.port, { method: 'POST', path: '/api/server/v1/users', headers: key, body: { email: 'pooled@example.com' } });
        expect(created.status).toBe(201);
        for (let i = 0; i < 3; i++) {
          const read = await httpRequest(server.port, { path: `/api/server/v1/users/${created.json().id}`, headers: key });
          expect([read.status, read.json().email]).toEqual([200, 'pooled@example.com']);
        }
      } finally {
        expect(await server.stop()).toEqual({ code: 0, signal: null });
        await bouncer.stop();
      }
    });
  });
});

const auditEvent = (action: string) => ({
  action, result: 'success', schemaVersion: 1, occurredAt: new Date().toISOString(), actor: { type: 'service' }, targets: [], metadata: {},
});

/** src/main.ts with `env` and nothing of the runner's own settings: how it ended, when it ended. */
async function startServer(env: Record<string, string>) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(GATEHOUSE_|DATABASE_|PORT$|HOST$|LOG_LEVEL$)/.test(k)));
  return promisify(execFile)(process.execPath, serverEntry(), { env: { ...base, HOST: '127.0.0.1', PORT: String(await freePort()), ...env }, timeout: PATIENCE_MS })
    .then(() => undefined, (err: { code: number; stderr: string }) => err);
}

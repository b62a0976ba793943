import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSealer } from '../../src/platform/crypto/encryption.js';
import { eventually } from '../helpers/eventually.js';
import { spawnServer, type ServerProcess } from '../helpers/processes.js';
import { PAIR_ENCRYPTION_KEY, startServerPair, type PairEnv, type ServerPair } from '../helpers/server-pair.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { newSecret, signedWith } from '../webhooks/given-endpoint.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
const USERS = 40;
const LEASE_SECONDS = 2;
const PAIR_ENV = { GATEHOUSE_WEBHOOK_PRIVATE_TARGETS: 'allow' };

describe.skipIf(!TEST_DATABASE_URL)('webhooks with several server processes on one PostgreSQL (needs TEST_DATABASE_URL)', () => {
  let receiver: WebhookReceiver;
  let pair: ServerPair;
  let db: pg.Client;
  const extra: ServerProcess[] = [];
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    pair = await startServerPair(TEST_DATABASE_URL!, PAIR_ENV);
    db = new pg.Client({ connectionString: pair.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await Promise.all(extra.map((s) => s.stop()));
    await pair?.stop();
    await receiver?.stop();
  });

  /** An endpoint written as the endpoints API stores one, its secret sealed with the processes' key. */
  async function endpoint(env: PairEnv, path: string) {
    const secret = newSecret();
    const sealed = createSealer(Buffer.from(PAIR_ENCRYPTION_KEY, 'base64')).seal(Buffer.from(secret));
    const { rows } = await db.query(`insert into webhook_endpoints (environment_id, id, url, enabled, secret_sealed, created_at, updated_at)
      values ($1, gen_random_uuid(), $2, true, $3, now(), now()) returning id`, [env.id, `${receiver.url}/${path}`, sealed]);
    return { id: rows[0].id as string, secret };
  }
  const deliveries = async (env: PairEnv) =>
    (await db.query(`select status, attempts from webhook_deliveries where environment_id = $1`, [env.id])).rows;

  it('delivers each event once while every process races for the deliveries', async () => {
    const env = await pair.environment();
    const { secret } = await endpoint(env, 'raced');
    await Promise.all(Array.from({ length: USERS }, (_, i) => pair.serverApi(pair.roundRobin(i), env, 'POST', '/users', { email: `raced-${i}@example.com` })));

    await eventually(async () => expect(await deliveries(env)).toEqual(Array(USERS).fill({ status: 'succeeded', attempts: 1 })), { interval: 50 });
    const received = (await receiver.received()).filter((r) => r.path === '/raced');
    expect(received).toHaveLength(USERS);
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(USERS);
    expect(received.every((r) => signedWith(secret, r))).toBe(true);
  });

  it('leaves delivery to a separate worker process when the API process runs with GATEHOUSE_JOB_WORKER=off', async () => {
    const env = await pair.environment();
    await endpoint(env, 'worker');
    const api = await spawnServer({ env: { ...pair.serverEnv, GATEHOUSE_JOB_WORKER: 'off' } });
    extra.push(api);
    await Promise.all(pair.servers.map((s) => s.stop()));
    await pair.serverApi(api, env, 'POST', '/users', { email: 'worker@example.com' });
    expect(await deliveries(env)).toEqual([{ status: 'pending', attempts: 0 }]);

    const worker = await spawnServer({ env: { ...pair.serverEnv, GATEHOUSE_JOB_WORKER: 'only' }, workerOnly: true });
    extra.push(worker);
    await eventually(async () => expect(await deliveries(env)).toEqual([{ status: 'succeeded', attempts: 1 }]), { interval: 50 });
    expect((await pair.call(api, { path: '/metrics' })).body).not.toMatch(/^gatehouse_webhook_deliveries_total\{/m);
    await worker.stop();
  });

  it('loses no event when the process sending it is killed mid-delivery: a restarted process sends it again under the same webhook-id', async () => {
    // One process with a short lease holds the attempt (the pair's 60 s lease would make the restart wait).
    await Promise.all([...pair.servers, ...extra].map((s) => s.stop()));
    const serverEnv = { ...pair.serverEnv, GATEHOUSE_JOB_LEASE_SECONDS: String(LEASE_SECONDS) };
    const doomed = await spawnServer({ env: serverEnv });
    extra.push(doomed);
    const env: PairEnv = (await pair.admin(doomed, 'POST', '/environments', { name: 'killed-mid-delivery' })).json();
    await endpoint(env, 'killed');
    await receiver.script(['hang']);
    await pair.serverApi(doomed, env, 'POST', '/users', { email: 'killed@example.com' });
    await eventually(async () => expect((await receiver.received()).filter((r) => r.path === '/killed')).toHaveLength(1), { interval: 20 });
    doomed.signal('SIGKILL');
    expect(await doomed.exited).toMatchObject({ signal: 'SIGKILL' });
    expect(await deliveries(env)).toEqual([{ status: 'pending', attempts: 0 }]);

    const restarted = await spawnServer({ env: serverEnv });
    extra.push(restarted);
    await eventually(async () => expect(await deliveries(env)).toEqual([{ status: 'succeeded', attempts: 1 }]), { interval: 100 });
    const [first, second] = (await receiver.received()).filter((r) => r.path === '/killed');
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
  });
});

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type HttpResponse, type ServerProcess } from '../helpers/processes.js';
import { startServerPair, type PairEnv as Env, type ServerPair } from '../helpers/server-pair.js';

// Real server processes share one PostgreSQL database (PGlite is one process's file, so this file only
// runs with TEST_DATABASE_URL). The pair creates (and drops) a database of its own on that server.
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

const eventBody = (i = 0) => ({
  action: 'document.shared', result: 'success', schemaVersion: 1, occurredAt: new Date().toISOString(),
  actor: { type: 'service' }, targets: [{ type: 'document', id: `doc_${i}` }], metadata: { i },
});

/** Runs `tasks` with at most `concurrency` in flight; resolves with every result in order. */
async function pooled<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const i = next++;
      results[i] = await task(i);
    }
  }));
  return results;
}

describe.skipIf(!TEST_DATABASE_URL)('audit appends from several server processes on one PostgreSQL (needs TEST_DATABASE_URL)', () => {
  let pair: ServerPair;
  let direct: pg.Client;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

  beforeAll(async () => {
    pair = await startServerPair(TEST_DATABASE_URL!);
    direct = new pg.Client({ connectionString: pair.databaseUrl });
    await direct.connect();
  });

  afterAll(async () => {
    agent.destroy();
    await direct?.end();
    await pair?.stop();
  });

  const appendTo = (server: ServerProcess, env: Env, key: string, body: unknown, keepAlive = true): Promise<HttpResponse> =>
    pair.call(server, {
      method: 'POST', path: '/api/server/v1/audit-events', body, agent: keepAlive ? agent : false,
      headers: { authorization: `Bearer ${env.secretKey}`, 'idempotency-key': key },
    });

  /** Customer events stored for the environment (its own trail, such as its first key, left out). */
  async function storedEvents(env: Env) {
    const { rows } = await direct.query<{ id: string; sequence: number; key: string | null }>(
      `select e.id, e.sequence::int as sequence, k.idempotency_key as key from audit_events e
         left join audit_idempotency_keys k on k.environment_id = e.environment_id and k.event_id = e.id
        where e.environment_id = $1 and e.producer->>'type' = 'secret_key' order by e.sequence`, [env.id]);
    return rows;
  }

  /** Seconds left in the current UTC minute; waits for a fresh minute when fewer than `needed` remain. */
  async function freshMinuteIfNeeded(needed: number) {
    const left = 60 - (Date.now() % 60_000) / 1000;
    if (left < needed) await new Promise((resolve) => setTimeout(resolve, left * 1000 + 200));
  }

  it('stores exactly one event for 50 concurrent identical appends spread over every process', async () => {
    const env = await pair.environment();
    const body = eventBody();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => appendTo(pair.roundRobin(i), env, 'the-one-key', body)));

    expect(results.map((r) => r.status)).toEqual(Array(50).fill(201));
    const ids = new Set(results.map((r) => r.json().id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(49);
    const stored = await storedEvents(env);
    expect(stored.map((e) => e.id)).toEqual([...ids]);
  });

  it('accepts exactly 600 of 700 appends sent within one UTC minute spread over every process', async () => {
    // A burst that a busy machine stretched over a minute's end proves nothing: it goes again, in a new
    // environment and a fresh minute (a third crossing fails the test).
    let burst: { env: Env; results: HttpResponse[] } | undefined;
    for (let attempt = 1; !burst; attempt++) {
      const env = await pair.environment();
      await freshMinuteIfNeeded(attempt === 1 ? 20 : 60);
      const minute = Math.floor(Date.now() / 60_000);
      const results = await pooled(700, 40, (i) => appendTo(pair.roundRobin(i), env, randomUUID(), eventBody(i)));
      const fitted = Math.floor(Date.now() / 60_000) === minute;
      if (fitted || attempt === 3) {
        expect(fitted, 'the burst must fit in one UTC minute').toBe(true);
        burst = { env, results };
      }
    }
    const { env, results } = burst;
    const statuses = results.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
    expect(statuses).toEqual({ 201: 600, 429: 100 });
    for (const refused of results.filter((r) => r.status === 429)) {
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(refused.headers.ratelimit).toMatch(/^"audit";r=0;t=\d+$/);
    }
    expect(await storedEvents(env)).toHaveLength(600);
  });

  it('loses no acknowledged append when a process is SIGKILLed mid-stream, and retries store each event exactly once', async () => {
    const env = await pair.environment();
    await freshMinuteIfNeeded(30);
    const victim = await spawnServer({ env: pair.serverEnv });
    const keys = Array.from({ length: 300 }, () => randomUUID());
    const bodies = keys.map((_, i) => eventBody(i));
    const acknowledged = new Map<string, string>(); // key -> event id
    let killed = false;

    await pooled(keys.length, 16, async (i) => {
      if (killed) return;
      try {
        // A fresh connection per request, so the kill cuts requests in flight rather than idle sockets.
        const res = await appendTo(victim, env, keys[i], bodies[i], false);
        if (res.status === 201) acknowledged.set(keys[i], res.json().id);
        else throw new Error(`unexpected ${res.status}: ${res.body}`);
      } catch (error) {
        if (!killed) throw error;
      }
      if (acknowledged.size === 100 && !killed) {
        killed = true;
        victim.signal('SIGKILL');
      }
    });
    expect(await victim.exited).toMatchObject({ signal: 'SIGKILL' });

    // Every acknowledged append is stored, under its key.
    const afterKill = new Map((await storedEvents(env)).map((e) => [e.key, e.id]));
    for (const [key, id] of acknowledged) expect(afterKill.get(key)).toBe(id);

    // The client retries everything it has no answer for, with the same keys and bodies, on the live processes.
    const unanswered = keys.filter((key) => !acknowledged.has(key));
    expect(unanswered.length).toBeGreaterThan(0);
    const retries = await pooled(unanswered.length, 16, (j) => appendTo(pair.roundRobin(j), env, unanswered[j], bodies[keys.indexOf(unanswered[j])]));
    expect(retries.map((r) => r.status)).toEqual(Array(unanswered.length).fill(201));
    // Requests the kill interrupted after their commit come back as replays of the stored event.
    for (const [j, res] of retries.entries()) {
      if (afterKill.has(unanswered[j])) {
        expect(res.headers['idempotent-replayed']).toBe('true');
        expect(res.json().id).toBe(afterKill.get(unanswered[j]));
      }
    }

    const stored = await storedEvents(env);
    expect(stored).toHaveLength(keys.length);
    expect(new Set(stored.map((e) => e.key))).toEqual(new Set(keys));
    // The sequence has no gaps: the first key's event is 1, so customer events are 2..301.
    expect(stored.map((e) => e.sequence)).toEqual(Array.from({ length: keys.length }, (_, i) => i + 2));
  });
});

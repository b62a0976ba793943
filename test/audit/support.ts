import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { TestApp, TestEnv } from '../helpers/app.js';

/** A valid append body: every required field, nothing that needs a lookup. */
export function eventBody(t: TestApp, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    action: 'document.shared',
    result: 'success',
    schemaVersion: 1,
    occurredAt: new Date(t.clock.now().getTime() - 1000).toISOString(),
    actor: { type: 'service', id: randomUUID() },
    targets: [{ type: 'document', id: 'doc_42' }],
    metadata: { permission: 'view' },
    ...overrides,
  };
}

/** POST /audit-events with an Idempotency-Key (a fresh one unless given; `null` sends none). */
export function append(t: TestApp, env: TestEnv, body: unknown, key: string | null = randomUUID(), secretKey?: string) {
  return t.server(env, secretKey).post('/audit-events', body as Record<string, unknown>, key === null ? {} : { headers: { 'idempotency-key': key } });
}

/** Events stored for the environment, straight from the table, in sequence order. */
export async function storedEvents(t: TestApp, env: TestEnv) {
  const { rows } = await sql<{ id: string; sequence: number; action: string; producer: { type: string } }>`
    select id, sequence, action, producer from audit_events where environment_id = ${env.id} order by sequence`.execute(t.db);
  return rows;
}

/** Customer events only (the environment's own trail, such as its first secret key, left out). */
export const customerEvents = async (t: TestApp, env: TestEnv) =>
  (await storedEvents(t, env)).filter((e) => e.producer.type === 'secret_key');

export async function storedKeys(t: TestApp, env: TestEnv) {
  const { rows } = await sql<{ idempotency_key: string; event_id: string }>`
    select idempotency_key, event_id from audit_idempotency_keys where environment_id = ${env.id} order by created_at, idempotency_key`.execute(t.db);
  return rows;
}

import { randomBytes } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import { Webhook } from 'standardwebhooks';
import { createSealer } from '../../src/platform/crypto/encryption.js';
import type { Db } from '../../src/platform/db/database.js';
import { TEST_ENCRYPTION_KEY, type TestEnv } from '../helpers/app.js';
import type { ReceivedWebhook } from '../helpers/webhook-receiver.js';

const sealer = createSealer(TEST_ENCRYPTION_KEY);
export const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** An endpoint written straight into the table, as the endpoints API stores one (secret sealed). */
export async function givenEndpoint(db: Db, env: TestEnv, url: string, options: { eventTypes?: string[]; secret?: string } = {}) {
  const secret = options.secret ?? newSecret();
  const id = uuidv7();
  const now = new Date();
  await db.insertInto('webhook_endpoints').values({
    environment_id: env.id, id, url, description: null, event_types: options.eventTypes ?? null, enabled: true, disabled_reason: null,
    secret_sealed: sealer.seal(Buffer.from(secret)), previous_secret_sealed: null, previous_secret_expires_at: null,
    failing_since: null, created_at: now, updated_at: now,
  }).execute();
  return { id, secret };
}

/** Rotates as the endpoints API does: the old secret keeps signing until `until`. */
export async function rotateSecret(db: Db, env: TestEnv, endpointId: string, oldSecret: string, until: Date) {
  const secret = newSecret();
  await db.updateTable('webhook_endpoints').where('environment_id', '=', env.id).where('id', '=', endpointId).set({
    secret_sealed: sealer.seal(Buffer.from(secret)), previous_secret_sealed: sealer.seal(Buffer.from(oldSecret)), previous_secret_expires_at: until,
  }).execute();
  return secret;
}

const header = (received: ReceivedWebhook, name: string) => String(received.headers[name]);

/**
 * Whether the standardwebhooks package, given this secret, makes one of the signatures the request carries
 * for its id, timestamp and body (its own `verify` also checks the timestamp against the real clock, which
 * the tests' clock is not).
 */
export function signedWith(secret: string, received: ReceivedWebhook): boolean {
  const expected = new Webhook(secret).sign(header(received, 'webhook-id'), new Date(Number(header(received, 'webhook-timestamp')) * 1000), received.body);
  return header(received, 'webhook-signature').split(' ').includes(expected);
}

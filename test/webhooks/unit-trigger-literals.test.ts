import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { INVALIDATION_CHANNEL } from '../../src/platform/db/notifications.js';
import { JOB_QUEUED_MESSAGE } from '../../src/platform/jobs/queue.js';
import { WEBHOOK_DELIVERY_JOB, WEBHOOK_MAX_ATTEMPTS } from '../../src/webhooks/delivery.js';

// The webhook trigger (the newest migration that defines it) enqueues delivery jobs in PL/pgSQL, so it writes
// TypeScript's literals again: the job's kind and attempts (the worker's handler and the retry read them) and the
// wake-up it sends (without it, a delivery waits for the worker's next poll). This holds them to the constants.
const TRIGGER = readFileSync(new URL('../../migrations/0032_webhook_trigger_early_exit.sql', import.meta.url), 'utf8');

describe('the webhook trigger of migration 0032 and the TypeScript it copies', () => {
  it('enqueues the job kind and attempts the delivery worker uses', () => {
    expect(TRIGGER).toContain(`SELECT NEW.environment_id, job_id, '${WEBHOOK_DELIVERY_JOB}', jsonb_build_object('deliveryId', delivery_id), 'queued',`);
    expect(TRIGGER).toMatch(new RegExp(`NEW\\.occurred_at, ${WEBHOOK_MAX_ATTEMPTS}, NEW\\.occurred_at, endpoint_id::text`));
  });

  it('wakes the job workers on the channel and with the message they listen for', () => {
    expect(TRIGGER).toContain(`PERFORM pg_notify('${INVALIDATION_CHANNEL}', '${JOB_QUEUED_MESSAGE}');`);
  });
});

import { randomBytes } from 'node:crypto';
import { WEBHOOK_DELIVERY_JOB, WEBHOOK_MAX_ATTEMPTS } from './delivery.js';
import { createDeliveryStore } from './delivery-store.js';
import { DAY_MS } from '../platform/maintenance.js';
import { uuidv7 } from 'uuidv7';
import { recordOwnEvent } from '../audit/service.js';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/encryption.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { PageQuery } from '../platform/http/common-schemas.js';
import type { JsonObject } from '../platform/json.js';
import { enqueueJob, makeJobDueNow } from '../platform/jobs/queue.js';
import { examplePayload, WEBHOOK_EVENT_TYPE_NAMES, WEBHOOK_EVENT_TYPES } from './catalogue.js';
import { invalidWebhookEndpoint, webhookDeliveryNotFound, webhookEndpointDisabled, webhookEndpointLimit, webhookEndpointNotFound } from './errors.js';
import type {
  CreatedWebhookEndpoint, CreateWebhookEndpointBody, ListWebhookDeliveriesQuery, UpdateWebhookEndpointBody, WebhookEndpoint, WebhookEventTypes,
} from './schemas.js';
import { MAX_URL_LENGTH } from './schemas.js';
import { createWebhooksStore, type WebhookEndpointChanges } from './store.js';

/** Endpoints per environment: plenty for a product's receivers, few enough that one event stays cheap to fan out. */
export const MAX_WEBHOOK_ENDPOINTS = 20;
/** How long the secret a rotation replaces keeps signing, so receivers can switch without losing a delivery. */
export const PREVIOUS_SECRET_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** The job kind that sends a delivery (src/webhooks/delivery.ts); the trigger of migration 0028 queues the same. */

export interface WebhooksDeps {
  db: Db; clock: Clock; sealer: Sealer;
  /** Tells this process's job worker to look now (other processes hear the NOTIFY at commit). */
  wakeJobs(): void;
}

/** A Standard Webhooks signing secret: `whsec_` and 24 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** The problems of a URL, event types and description as a validation error lists them; empty when all is well. */
function fieldProblems(body: { url?: string; eventTypes?: string[] | null }) {
  const errors: { path: string; message: string }[] = [];
  if (body.url !== undefined) {
    const problem = urlProblem(body.url);
    if (problem) errors.push({ path: '/body/url', message: problem });
  }
  body.eventTypes?.forEach((type, i) => {
    if (!Object.hasOwn(WEBHOOK_EVENT_TYPES, type)) errors.push({ path: `/body/eventTypes/${i}`, message: `"${type}" is not a webhook event type (GET /webhook-event-types lists them)` });
  });
  return errors;
}

function urlProblem(value: string): string | undefined {
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try { url = new URL(value); } catch { return 'must be an absolute URL'; }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https: or http: URL';
  if (!url.hostname) return 'must name a host';
  if (url.username || url.password) return 'must not carry a username or password';
  return undefined;
}

function checked<T extends { url?: string; eventTypes?: string[] | null }>(body: T): T {
  const errors = fieldProblems(body);
  if (errors.length > 0) throw invalidWebhookEndpoint(errors);
  // The same type twice means it once.
  return body.eventTypes ? { ...body, eventTypes: [...new Set(body.eventTypes)] } : body;
}

const targetsOf = (endpointId: string) => [{ type: 'webhook_endpoint', id: endpointId }];

/** Webhook endpoints of an environment, their deliveries, and the event catalogue (Server API). */
export function createWebhooksService({ db, clock, sealer, wakeJobs }: WebhooksDeps) {
  const store = createWebhooksStore(db);
  const record = (trx: Db, environmentId: string, action: string, endpointId: string, by: Caller, metadata: JsonObject = {}) =>
    recordOwnEvent(trx, environmentId, { action, ...by, targets: targetsOf(endpointId), metadata }, clock.now());
  const seal = (secret: string) => sealer.seal(Buffer.from(secret, 'utf8'));

  return {
    /** Housekeeping: deliveries settled longer ago than the retention, their attempts, and events none names any more. */
    pruneHistory: (retentionDays: number) => createDeliveryStore(db).pruneSettled(new Date(clock.now().getTime() - retentionDays * DAY_MS)),
    /** 201 with the secret, the only time it is shown; 409 webhook_endpoint_limit past MAX_WEBHOOK_ENDPOINTS. */
    async create(environmentId: string, input: CreateWebhookEndpointBody, by: Caller): Promise<CreatedWebhookEndpoint> {
      const body = checked(input);
      const secret = newSecret();
      return inTransaction(db, async (trx) => {
        const trxStore = createWebhooksStore(trx);
        await trxStore.lockEndpoints(environmentId);
        if ((await trxStore.countEndpoints(environmentId)) >= MAX_WEBHOOK_ENDPOINTS) throw webhookEndpointLimit(MAX_WEBHOOK_ENDPOINTS);
        const endpoint = await trxStore.insertEndpoint(environmentId, {
          id: uuidv7(), url: body.url, description: body.description ?? null, eventTypes: body.eventTypes ?? null,
          enabled: body.enabled ?? true, secretSealed: seal(secret),
        }, clock.now());
        await record(trx, environmentId, 'webhook_endpoint.created', endpoint.id, by, { eventTypes: endpoint.eventTypes, enabled: endpoint.enabled });
        return { ...endpoint, secret };
      });
    },

    async get(environmentId: string, endpointId: string): Promise<WebhookEndpoint> {
      const endpoint = await store.findEndpoint(environmentId, endpointId);
      if (!endpoint) throw webhookEndpointNotFound();
      return endpoint;
    },

    list: (environmentId: string, page: PageQuery) => store.listEndpoints(environmentId, page),

    /** Changes what the body names; `enabled` false records `manual` as the reason, true clears the reason. */
    async update(environmentId: string, endpointId: string, input: UpdateWebhookEndpointBody, by: Caller): Promise<WebhookEndpoint> {
      const body = checked(input);
      const changes: WebhookEndpointChanges = body;
      return inTransaction(db, async (trx) => {
        const endpoint = await createWebhooksStore(trx).updateEndpoint(environmentId, endpointId, changes, clock.now());
        if (!endpoint) throw webhookEndpointNotFound();
        await record(trx, environmentId, 'webhook_endpoint.updated', endpoint.id, by, { changedFields: Object.keys(body).sort() });
        return endpoint;
      });
    },

    /** Deletes the endpoint with its deliveries and attempts; their queued jobs find nothing and do nothing. */
    async delete(environmentId: string, endpointId: string, by: Caller): Promise<void> {
      await inTransaction(db, async (trx) => {
        if (!(await createWebhooksStore(trx).deleteEndpoint(environmentId, endpointId))) throw webhookEndpointNotFound();
        await record(trx, environmentId, 'webhook_endpoint.deleted', endpointId, by);
      });
    },

    /** A new secret, shown once; the one it replaces also signs for PREVIOUS_SECRET_LIFETIME_MS. */
    async rotateSecret(environmentId: string, endpointId: string, by: Caller): Promise<CreatedWebhookEndpoint> {
      const secret = newSecret();
      return inTransaction(db, async (trx) => {
        const now = clock.now();
        const endpoint = await createWebhooksStore(trx).rotateSecret(environmentId, endpointId, seal(secret), new Date(now.getTime() + PREVIOUS_SECRET_LIFETIME_MS), now);
        if (!endpoint) throw webhookEndpointNotFound();
        await record(trx, environmentId, 'webhook_endpoint.secret_rotated', endpoint.id, by);
        return { ...endpoint, secret };
      });
    },

    /** The endpoint's deliveries, newest first, with their attempts. */
    async listDeliveries(environmentId: string, endpointId: string, query: ListWebhookDeliveriesQuery) {
      if (!(await store.findEndpoint(environmentId, endpointId))) throw webhookEndpointNotFound();
      return store.listDeliveries(environmentId, endpointId, { status: query.status }, query);
    },

    /**
     * Sends the delivery again now: a finished one goes back to pending with a new job; a pending one's
     * job is made due now (or, were it no longer queued, replaced). 409 while its endpoint is disabled.
     */
    async retryDelivery(environmentId: string, deliveryId: string): Promise<{ id: string; status: 'pending' }> {
      await inTransaction(db, async (trx) => {
        const trxStore = createWebhooksStore(trx);
        const delivery = await trxStore.lockDeliveryForRetry(environmentId, deliveryId);
        if (!delivery) throw webhookDeliveryNotFound();
        if (!delivery.endpointEnabled) throw webhookEndpointDisabled();
        const now = clock.now();
        const dueNow = delivery.status === 'pending' && await makeJobDueNow(trx, environmentId, delivery.jobId, now);
        const jobId = dueNow ? delivery.jobId : await enqueueJob(trx, environmentId, {
          kind: WEBHOOK_DELIVERY_JOB, payload: { deliveryId }, maxAttempts: WEBHOOK_MAX_ATTEMPTS, orderingKey: delivery.endpointId,
        }, now);
        await trxStore.markPending(environmentId, deliveryId, jobId, now);
      });
      wakeJobs();
      return { id: deliveryId, status: 'pending' };
    },

    eventTypes: (): WebhookEventTypes => ({
      items: WEBHOOK_EVENT_TYPE_NAMES.map((type) => ({ type, description: WEBHOOK_EVENT_TYPES[type], example: examplePayload(type) })),
    }),
  };
}
export type WebhooksService = ReturnType<typeof createWebhooksService>;

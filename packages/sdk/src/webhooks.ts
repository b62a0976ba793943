import { Webhook } from 'standardwebhooks';
import { sdkError } from './errors.js';

/**
 * Every webhook event type Gatehouse sends (GET /api/server/v1/webhook-event-types describes each, with an
 * example payload). The same list as the server's catalogue, src/webhooks/catalogue.ts: a test keeps them equal.
 */
export const webhookEventTypes = [
  'user.created', 'user.updated', 'user.deleted', 'user.banned', 'user.unbanned',
  'email.verified',
  'session.created', 'session.revoked',
  'organization.created', 'organization.updated', 'organization.deleted',
  'organization_membership.created', 'organization_membership.updated', 'organization_membership.deleted',
  'invitation.created', 'invitation.accepted', 'invitation.revoked',
  'organization_invitation.created', 'organization_invitation.accepted', 'organization_invitation.revoked',
  'organization_domain.created', 'organization_domain.verified', 'organization_domain.updated', 'organization_domain.deleted',
  'sso_connection.created', 'sso_connection.updated', 'sso_connection.deleted',
  'scim_directory.created', 'scim_directory.updated', 'scim_directory.token_rotated', 'scim_directory.deleted',
  'factor.added', 'factor.removed',
  'impersonation.redeemed',
] as const;

export type WebhookEventType = typeof webhookEventTypes[number];

/** A record an event names: `{ type: 'user', id }`, `{ type: 'session', id }`, ... */
export interface WebhookEventTarget { type: string; id: string }

/** What an event's `data` holds: the entry Gatehouse wrote on its own audit trail for the change. */
export interface WebhookEventData {
  /** The type of the first target (`user`, `session`, `organization`, ...), and its id. */
  object: string;
  id: string;
  /** Every record the change names, the first one being `object` and `id`. */
  targets: WebhookEventTarget[];
  /** Who made the change: `user`, `operator` (the dashboard), `api_key` (the Server API) or `system`; `id` null for `system`. */
  actor: { type: 'user' | 'operator' | 'api_key' | 'system' | (string & {}); id: string | null; impersonatorId: string | null };
  /** Details of the change, as on the audit trail (for example `{ method: 'password' }` on a sign-in). */
  metadata: Record<string, unknown>;
  /** The audit event behind this webhook event (GET /api/server/v1/audit-events/{auditEventId}). */
  auditEventId: string;
}

/** One event of one type: the parsed body of a delivery. */
export interface WebhookEvent<T extends WebhookEventType = WebhookEventType> {
  type: T;
  /** When the change happened (ISO 8601); order events by it, not by arrival. */
  timestamp: string;
  data: WebhookEventData;
}

/** A verified delivery's body: a union discriminated on `type` (`switch (event.type)` narrows it). */
export type GatehouseWebhookEvent = { [T in WebhookEventType]: WebhookEvent<T> }[WebhookEventType];

/** Why a delivery was refused; answer it with a 4xx (Gatehouse then retries it). */
export type WebhookVerificationFailure =
  | 'missing_headers' | 'invalid_timestamp' | 'timestamp_out_of_tolerance' | 'invalid_signature' | 'invalid_payload';

/** What `verifyWebhook` throws for a request that is not a genuine, recent Gatehouse delivery. */
export class WebhookVerificationError extends Error {
  readonly name = 'WebhookVerificationError';
  constructor(readonly code: WebhookVerificationFailure, message: string) {
    super(message);
  }
}

/** A request's headers: a plain object, a Fetch `Headers`, or Node's `IncomingHttpHeaders` (Express, Fastify, node:http). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const HEADER_NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/** The value of a header, whatever the object's key case; the signatures of a repeated header joined by a space. */
function headerValue(headers: WebhookHeaders, name: typeof HEADER_NAMES[number]): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : (headers as Record<string, string | string[] | undefined>)[key];
  if (!Array.isArray(value)) return value;
  return name === 'webhook-signature' ? value.join(' ') : value[0];
}

/** The standardwebhooks library's messages, as our failure codes. */
const FAILURES: [RegExp, WebhookVerificationFailure][] = [
  [/missing required headers/i, 'missing_headers'],
  [/invalid signature headers/i, 'invalid_timestamp'],
  [/timestamp too (old|new)/i, 'timestamp_out_of_tolerance'],
  [/no matching signature/i, 'invalid_signature'],
];

function signer(secret: string): Webhook {
  try {
    if (typeof secret !== 'string' || secret.trim() === '') throw new Error('empty');
    return new Webhook(secret);
  } catch (cause) {
    throw sdkError('invalid_option', 'verifyWebhook: the secret is missing or not a webhook signing secret (whsec_...)', cause);
  }
}

/**
 * Checks that a request is a delivery from Gatehouse (Standard Webhooks) and answers its event, typed.
 * `payload` is the RAW body, exactly the bytes received (a body parsed to JSON and serialised again no longer
 * matches its signature); `secret` is the endpoint's `whsec_...`. Accepts a delivery signed by any of the
 * signatures in `webhook-signature` (during a secret rotation Gatehouse signs with the new and the old secret),
 * and a `webhook-timestamp` at most 5 minutes from now. Throws `WebhookVerificationError` otherwise.
 * Server-side: the secret must never reach a browser.
 */
export function verifyWebhook(payload: string | Uint8Array, headers: WebhookHeaders, secret: string): GatehouseWebhookEvent {
  const webhook = signer(secret);
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  const found: Record<string, string> = {};
  for (const name of HEADER_NAMES) {
    const value = headerValue(headers, name);
    if (value === undefined || value === '') throw new WebhookVerificationError('missing_headers', `verifyWebhook: the ${name} header is missing`);
    found[name] = value;
  }
  try {
    webhook.verify(body, found, { jsonParse: false });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const code = FAILURES.find(([pattern]) => pattern.test(message))?.[1] ?? 'invalid_signature';
    throw new WebhookVerificationError(code, `verifyWebhook: ${message}`);
  }
  return parsed(body);
}

function parsed(body: string): GatehouseWebhookEvent {
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'verifyWebhook: the signed body is not JSON');
  }
  const { type, timestamp, data } = (event ?? {}) as Partial<WebhookEvent>;
  if (typeof type !== 'string' || typeof timestamp !== 'string' || typeof data !== 'object' || data === null) {
    throw new WebhookVerificationError('invalid_payload', 'verifyWebhook: the signed body is not a Gatehouse event ({type, timestamp, data})');
  }
  return event as GatehouseWebhookEvent;
}

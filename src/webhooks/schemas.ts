import { Type, type Static } from 'typebox';
import { DateTime, Nullable, NullableInput, PageQuery, Uuid } from '../platform/http/common-schemas.js';

export const MAX_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 500;

const Url = Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'Where deliveries are POSTed: an http: or https: URL without credentials, at most 2048 characters.' });
const Description = Type.String({ maxLength: MAX_DESCRIPTION_LENGTH, description: 'A note for people, at most 500 characters.' });
const EventTypes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1, maxItems: 100, description: 'The event types this endpoint receives (GET /webhook-event-types); null or absent means every type.',
});

export const DisabledReason = Type.Union([Type.Literal('manual'), Type.Literal('failing'), Type.Null()], {
  description: 'Why the endpoint is off: `manual` (turned off through the API), `failing` (every delivery failed for days), or null while enabled.',
});

export const WebhookEndpoint = Type.Object({
  id: Uuid,
  url: Type.String(),
  description: Nullable(Type.String()),
  eventTypes: Nullable(Type.Array(Type.String(), { description: 'The event types it receives; null means every type.' })),
  enabled: Type.Boolean(),
  disabledReason: DisabledReason,
  createdAt: DateTime,
  updatedAt: DateTime,
}, { title: 'WebhookEndpoint', description: 'A receiver of webhook events (Standard Webhooks). Its signing secret is shown only when created or rotated.' });
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

const Secret = Type.String({ description: 'The signing secret (`whsec_` and base64), for Standard Webhooks verifiers. Shown only in this answer: store it now.' });

export const CreatedWebhookEndpoint = Type.Object({ ...WebhookEndpoint.properties, secret: Secret }, {
  title: 'CreatedWebhookEndpoint', description: 'The endpoint just created, with its signing secret (shown once).',
});
export type CreatedWebhookEndpoint = Static<typeof CreatedWebhookEndpoint>;

export const RotatedWebhookSecret = Type.Object({ ...WebhookEndpoint.properties, secret: Secret }, {
  title: 'RotatedWebhookSecret', description: 'The endpoint with its new signing secret (shown once); the previous secret also signs deliveries for 24 hours.',
});

export const CreateWebhookEndpointBody = Type.Object({
  url: Url,
  eventTypes: Type.Optional(NullableInput(EventTypes)),
  description: Type.Optional(NullableInput(Description)),
  enabled: Type.Optional(Type.Boolean({ description: 'Default true.' })),
}, { additionalProperties: false });
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>;

export const UpdateWebhookEndpointBody = Type.Object({
  url: Type.Optional(Url),
  eventTypes: Type.Optional(NullableInput(EventTypes)),
  description: Type.Optional(NullableInput(Description)),
  enabled: Type.Optional(Type.Boolean({ description: 'false turns the endpoint off (`disabledReason` `manual`); true turns it on again and clears `disabledReason`.' })),
}, { additionalProperties: false, minProperties: 1 });
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>;

export const WebhookEndpointParams = Type.Object({ endpointId: Uuid });
export const WebhookDeliveryParams = Type.Object({ deliveryId: Uuid });

export const WebhookDeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
  description: '`pending` (attempts to come), `succeeded` (a 2xx answer), `failed` (given up on, or a target the service may not send to).',
});
export type WebhookDeliveryStatus = Static<typeof WebhookDeliveryStatus>;

export const WebhookAttempt = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  startedAt: DateTime,
  durationMs: Type.Integer(),
  responseStatus: Nullable(Type.Integer()),
  responseBody: Nullable(Type.String({ description: 'The first KB of what the receiver answered.' })),
  error: Nullable(Type.String({ description: 'Why the attempt failed without an answer (timeout, refused target, ...).' })),
}, { title: 'WebhookAttempt' });
export type WebhookAttempt = Static<typeof WebhookAttempt>;

export const WebhookDelivery = Type.Object({
  id: Uuid,
  eventId: Uuid,
  endpointId: Uuid,
  type: Type.String({ description: 'The event type.' }),
  status: WebhookDeliveryStatus,
  responseStatus: Nullable(Type.Integer({ description: "The last attempt's HTTP status." })),
  attempt: Type.Integer({ minimum: 0, description: 'Attempts made so far.' }),
  nextAttemptAt: Nullable(Type.String({ format: 'date-time', description: 'When the next attempt is due; null unless pending.' })),
  lastError: Nullable(Type.String()),
  createdAt: DateTime,
  finishedAt: Nullable(DateTime),
  attempts: Type.Array(WebhookAttempt, { description: 'Every attempt, oldest first.' }),
}, { title: 'WebhookDelivery', description: 'One event sent to one endpoint, with its attempts.' });
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const ListWebhookDeliveriesQuery = Type.Object({
  ...PageQuery.properties,
  status: Type.Optional(WebhookDeliveryStatus),
}, { additionalProperties: false });
export type ListWebhookDeliveriesQuery = Static<typeof ListWebhookDeliveriesQuery>;

export const RetriedWebhookDelivery = Type.Object({ id: Uuid, status: Type.Literal('pending') }, {
  title: 'RetriedWebhookDelivery', description: 'The delivery, due again now.',
});

export const WebhookEventTypes = Type.Object({
  items: Type.Array(Type.Object({
    type: Type.String(),
    description: Type.String(),
    example: Type.Object({
      type: Type.String(), timestamp: DateTime, data: Type.Record(Type.String(), Type.Unknown()),
    }, { description: 'A payload as a receiver gets it.' }),
  })),
}, { title: 'WebhookEventTypes', description: 'Every webhook event type, what makes it, and an example payload.' });
export type WebhookEventTypes = Static<typeof WebhookEventTypes>;

import { Type, type Static } from 'typebox';
import { DateTime, JsonObject, Nullable, NullableInput, PageQuery, Uuid } from '../platform/http/common-schemas.js';
import { METADATA_BUDGET_BYTES } from '../platform/metadata.js';

/** Supported values of `schemaVersion` (the caller's version of its event shape). */
export const SUPPORTED_SCHEMA_VERSIONS = [1];
export const MAX_TARGETS = 50;
/** `occurredAt` may be at most this far ahead of the server's clock (clock skew) ... */
export const MAX_FUTURE_MS = 5 * 60_000;
/** ... and at most this old. */
export const MAX_AGE_MS = 30 * 86_400_000;

const Identifier = (description: string, maxLength: number) => Type.String({
  minLength: 1, maxLength, pattern: '^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*$', description,
});

const Action = Identifier('A short dotted identifier, lower-case: `user.signed_in`, `document.shared`. At most 100 characters.', 100);
const Result = Identifier('A short dotted identifier, lower-case: `success`, `failure`, `denied`. At most 100 characters.', 100);
const TypeName = Identifier('A short dotted identifier, lower-case: `user`, `document`. At most 100 characters.', 100);

const ActorInput = Type.Object({
  type: TypeName,
  id: Type.Optional(NullableInput(Type.String({
    format: 'uuid', description: 'The actor\'s id. When `type` is `user`, a user of this environment (else 404 resource_not_found).',
  }))),
  impersonatorId: Type.Optional(NullableInput(Type.String({ format: 'uuid', description: 'Who acted on behalf of the actor, if anyone.' }))),
}, { additionalProperties: false });

const TargetInput = Type.Object({
  type: TypeName,
  id: Type.Optional(NullableInput(Type.String({
    minLength: 1, maxLength: 255, description: 'When `type` is `user`, a user of this environment (else 404 resource_not_found).',
  }))),
}, { additionalProperties: false });

const ContextInput = Type.Object({
  ipAddress: Type.Optional(NullableInput(Type.String({ maxLength: 64, description: 'A valid IPv4 or IPv6 address.' }))),
  userAgent: Type.Optional(NullableInput(Type.String({ maxLength: 512 }))),
}, { additionalProperties: false });

export const AppendAuditEventBody = Type.Object({
  action: Action,
  result: Result,
  schemaVersion: Type.Integer({ enum: SUPPORTED_SCHEMA_VERSIONS, description: `Supported: ${SUPPORTED_SCHEMA_VERSIONS.join(', ')}.` }),
  occurredAt: Type.String({
    format: 'date-time', description: 'When it happened: at most 5 minutes ahead of the server clock and at most 30 days old.',
  }),
  actor: ActorInput,
  targets: Type.Array(TargetInput, { maxItems: MAX_TARGETS, description: `At most ${MAX_TARGETS}.` }),
  context: Type.Optional(ContextInput),
  correlationId: Type.Optional(NullableInput(Uuid)),
  metadata: Type.Record(Type.String(), Type.Unknown(), { description: `Free-form; at most ${METADATA_BUDGET_BYTES} bytes of compact JSON.` }),
}, { additionalProperties: false, title: 'AppendAuditEvent' });
export type AppendAuditEventBody = Static<typeof AppendAuditEventBody>;

export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
// The key is checked by the append itself, so that a missing or malformed one has its own code.
export const AppendHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    description: 'Required. 1 to 255 printable ASCII characters, unique per event you append; kept at least 24 hours per environment. '
      + 'A missing or malformed key is 400 invalid_idempotency_key.',
  })),
});

const Actor = Type.Object({ type: Type.String(), id: Nullable(Uuid), impersonatorId: Nullable(Uuid) });
const Target = Type.Object({ type: Type.String(), id: Nullable(Type.String()) });
const Producer = Type.Object({
  type: Type.String({ description: '`secret_key` for appended events; `gatehouse` for the service\'s own trail.' }),
  keyId: Type.Optional(Uuid),
  via: Type.Optional(Type.String({ description: 'Own trail: `server_api`, `client_api`, `admin_api`, `cli`, `bootstrap`, `job` (the background job queue) or `enrollment` (the automatic enrollment of a verified domain).' })),
}, { description: 'Who wrote the event: the secret key (by id, never the secret) that appended it, or Gatehouse itself.' });

export const AuditEvent = Type.Object({
  id: Uuid,
  environmentId: Uuid,
  sequence: Type.Integer({ description: 'Increases by one with every event of the environment, in commit order.' }),
  action: Type.String(),
  result: Type.String(),
  occurredAt: DateTime,
  recordedAt: DateTime,
  actor: Actor,
  targets: Type.Array(Target),
  context: Type.Object({ ipAddress: Nullable(Type.String()), userAgent: Nullable(Type.String()) }),
  producer: Producer,
  metadata: JsonObject,
  schemaVersion: Type.Integer(),
  correlationId: Nullable(Uuid),
}, { title: 'AuditEvent', description: 'An audit event as stored, with its place (`sequence`) in the environment\'s trail.' });
export type AuditEvent = Static<typeof AuditEvent>;

export const AuditEventParams = Type.Object({ eventId: Uuid }, { additionalProperties: false });

export const SearchAuditEventsQuery = Type.Object({
  ...PageQuery.properties,
  action: Type.Optional(Type.String({ maxLength: 100, description: 'Exact action.' })),
  result: Type.Optional(Type.String({ maxLength: 100, description: 'Exact result.' })),
  actorId: Type.Optional(Type.String({ format: 'uuid', description: 'The actor\'s id.' })),
  targetType: Type.Optional(Type.String({ maxLength: 100, description: 'Events with a target of this type (with targetId: this target).' })),
  targetId: Type.Optional(Type.String({ maxLength: 255, description: 'Events with a target of this id.' })),
  occurredAfter: Type.Optional(Type.String({ format: 'date-time', description: 'occurredAt at or after this instant.' })),
  occurredBefore: Type.Optional(Type.String({ format: 'date-time', description: 'occurredAt strictly before this instant.' })),
  correlationId: Type.Optional(Type.String({ format: 'uuid' })),
  order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], {
    default: 'asc', description: '`asc` (the default): oldest first; `desc`: newest first. A cursor continues in the order it was made in.',
  }),
}, { additionalProperties: false });
export type SearchAuditEventsQuery = Static<typeof SearchAuditEventsQuery>;

export const PollAuditEventsQuery = Type.Object({
  // The column is a bigint; sequences are read as JavaScript numbers, exact up to 2^53 - 1.
  afterSequence: Type.Integer({
    minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0,
    description: `Return events with a larger sequence; 0 starts at the first event. At most ${Number.MAX_SAFE_INTEGER}.`,
  }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 100, description: 'Page size, 1 to 100.' }),
}, { additionalProperties: false });
export type PollAuditEventsQuery = Static<typeof PollAuditEventsQuery>;

export const AuditEventFeed = Type.Object({
  items: Type.Array(AuditEvent, { description: 'In sequence order.' }),
  nextAfterSequence: Type.Integer({ description: 'Pass as afterSequence next time: the last item\'s sequence, or the given one when there is none.' }),
  hasMore: Type.Boolean({ description: 'More events are there right now; ask again at once.' }),
}, { title: 'AuditEventFeed', description: 'Events after the given sequence number, in order, and where to continue.' });
export type AuditEventFeed = Static<typeof AuditEventFeed>;

/** The order of a search: by id, which is creation order. */
export type SearchOrder = 'asc' | 'desc';

export interface AuditEventFilter {
  action?: string; result?: string; actorId?: string; targetType?: string; targetId?: string;
  occurredAfter?: string; occurredBefore?: string; correlationId?: string;
}

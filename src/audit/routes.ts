import { ProblemError } from '../platform/http/problem.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Page } from '../platform/http/common-schemas.js';
import { countingFailedAttempts } from '../platform/http/counted-attempts.js';
import {
  AppendAuditEventBody, AppendHeaders, AuditEvent, AuditEventFeed, AuditEventParams, PollAuditEventsQuery, SearchAuditEventsQuery,
} from './schemas.js';
import type { AuditService } from './service.js';

const tags = ['Audit events'];

const APPEND_DESCRIPTION = `Appends a customer audit event, exactly once per \`Idempotency-Key\`.

- **Idempotency.** The same key with the same body (compared as JSON with sorted keys) answers the stored event again, with the
  same status and \`Idempotent-Replayed: true\`; the same key with another body is 422 \`idempotency_key_reused\`. A duplicate sent
  while the first is still being stored waits for it and then replays it, so any number of concurrent duplicates store one event.
  Keys are per environment and kept at least 24 hours. A request that fails validation stores nothing.
- **Rate limit.** 600 attempts per environment per UTC clock minute, counted across every process. Every authenticated append
  request counts, whether it is accepted, replayed or refused (malformed ones too). Each answer carries
  \`RateLimit-Policy: "audit";q=600;w=60\` and \`RateLimit: "audit";r=<remaining>;t=<seconds to the window's end>\`; over the limit
  the answer is 429 \`rate_limited\` with \`Retry-After\`.
- **Validation.** Beyond the schema: \`occurredAt\` at most 5 minutes ahead of the server clock and at most 30 days old,
  \`context.ipAddress\` a valid IPv4 or IPv6 address, \`metadata\` at most 8192 bytes of compact JSON (400 \`metadata_too_large\`),
  and a \`user\` actor or target with an id must be a user of this environment (404 \`resource_not_found\`, naming it).
- **Stored form.** \`sequence\` is the environment's next number (events become visible in sequence order), \`recordedAt\` is the
  server's time, \`producer\` is \`{type: "secret_key", keyId}\` (never the secret).
- **Unavailable.** With the environment setting \`auditLogEnabled\` off: 503 \`audit_storage_unavailable\`. With the database
  unreachable: 503 \`unavailable\` within seconds.`;

const SEARCH_DESCRIPTION = `Audit events of the environment matching every given filter, in id order (creation order; \`order=desc\`:
newest first), with keyset pagination (\`cursor\` = the previous page's \`nextCursor\`, with the same \`order\`). \`occurredAfter\` is inclusive and \`occurredBefore\` exclusive.
\`targetType\` and \`targetId\` match one target of the event (both together: the same target). Events of Gatehouse's own trail
(user ban, unban, delete and metadata changes, session revocations, secret keys) are here too, with \`producer.type\` \`gatehouse\`.
To follow the log as it grows, use \`GET /audit-events/feed\`.`;

const FEED_DESCRIPTION = `Events with a sequence greater than \`afterSequence\`, in sequence order: the way to follow the log.
Every event of an environment gets the next sequence number and becomes visible only after every smaller one, so a consumer that
stores \`nextAfterSequence\` and asks again never misses or repeats an event, even with many writers. \`hasMore\` means more events
are there now; otherwise poll again later.`;

const appendHeaders = {
  'RateLimit-Policy': { type: 'string', description: '"audit";q=600;w=60' },
  RateLimit: { type: 'string', description: '"audit";r=<remaining>;t=<seconds to the end of the window>' },
};

/** Server API: append, search and follow the environment's audit log. There is no route to change or delete an event. */
export function auditServerRoutes(audit: AuditService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/audit-events', {
      schema: { operationId: 'appendAuditEvent',
        summary: 'Append an audit event (idempotent, rate limited)', description: APPEND_DESCRIPTION, tags,
        headers: AppendHeaders, body: AppendAuditEventBody,
        response: {
          201: { ...AuditEvent, description: 'The stored event; a replay answers the original event again.', headers: {
            ...appendHeaders, 'Idempotent-Replayed': { type: 'string', description: '`true` on a replay of a stored request' },
          } },
        },
      },
      // An append counts itself in the statement that stores it; one that fails before that is counted here.
      errorHandler: countingFailedAttempts((req) => audit.countFailedAppend(req.environmentId)),
    }, async (req, reply) => {
      // The customer's trail is what their application records; the dashboard reads it and adds nothing to it.
      if (req.operator) throw new ProblemError(403, 'forbidden', "Appending an audit event takes the environment's secret key, not an operator session.");
      const { event, headers } = await audit.append(req.environmentId, req.secretKeyId, req.headers['idempotency-key'], req.body);
      return reply.headers(headers).code(201).send(event);
    });
    app.get('/audit-events', { schema: { operationId: 'searchAuditEvents', summary: 'Search audit events', description: SEARCH_DESCRIPTION, tags, querystring: SearchAuditEventsQuery, response: { 200: Page(AuditEvent) } } },
      (req) => audit.search(req.environmentId, req.query, req.query, req.query.order));
    app.get('/audit-events/feed', { schema: { operationId: 'pollAuditEvents', summary: 'Poll audit events after a sequence number', description: FEED_DESCRIPTION, tags, querystring: PollAuditEventsQuery, response: { 200: AuditEventFeed } } },
      (req) => audit.poll(req.environmentId, req.query.afterSequence, req.query.limit));
    app.get('/audit-events/:eventId', { schema: { operationId: 'getAuditEvent', summary: 'Get an audit event', tags, params: AuditEventParams, response: { 200: AuditEvent } } },
      (req) => audit.get(req.environmentId, req.params.eventId));
  };
}

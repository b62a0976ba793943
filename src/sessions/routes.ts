import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { NoContent, noContent, Page } from '../platform/http/common-schemas.js';
import { clientCaller, NOT_UNDER_IMPERSONATION, signedIn } from '../platform/http/planes.js';
import { ListSessionsQuery, Session, SessionParams } from './schemas.js';
import type { SessionsService } from './service.js';

/** Client plane, signed in: list and end the user's own sessions. */
export function sessionsClientRoutes(sessions: SessionsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Client: sessions'];
    app.get('/sessions', { schema: { operationId: 'listMySessions', summary: "List the signed-in user's sessions", tags, querystring: ListSessionsQuery, response: { 200: Page(Session) } } },
      (req) => sessions.listForUser(req.environmentId, signedIn(req).userId, { status: 'active', ...req.query }));
    app.delete('/sessions/:sessionId', { config: NOT_UNDER_IMPERSONATION, schema: { operationId: 'revokeMySession', summary: "End one of the signed-in user's sessions", tags, params: SessionParams, response: { 204: NoContent } } },
      async (req, reply) => { await sessions.revoke(req.environmentId, signedIn(req).userId, req.params.sessionId, clientCaller(req)); return noContent(reply); });
  };
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { NoContent, noContent, Page } from '../platform/http/common-schemas.js';
import { clientCaller, NOT_UNDER_IMPERSONATION, signedIn } from '../platform/http/planes.js';
import { ActiveOrganizationBody, ListSessionsQuery, Session, SessionParams } from './schemas.js';
import type { SessionsService } from './service.js';

const ACTIVE_ORGANIZATION = 'The JWTs of this session then carry `org_id`, `org_role` (the user\'s role key there) and `org_slug` (when the '
  + 'organization has one); `null` clears it. The user must be a member: else 404 `organization_not_found`, as for an organization that '
  + 'does not exist. When the membership ends (removed, left, the organization deleted) the session has no active organization again.';

/** Client plane, signed in: list and end the user's own sessions, choose the active organization. */
export function sessionsClientRoutes(sessions: SessionsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Client: sessions'];
    app.get('/sessions', { schema: { operationId: 'listMySessions', summary: "List the signed-in user's sessions", tags, querystring: ListSessionsQuery, response: { 200: Page(Session) } } },
      (req) => sessions.listForUser(req.environmentId, signedIn(req).userId, { status: 'active', ...req.query }));
    app.delete('/sessions/:sessionId', { config: NOT_UNDER_IMPERSONATION, schema: { operationId: 'revokeMySession', summary: "End one of the signed-in user's sessions", tags, params: SessionParams, response: { 204: NoContent } } },
      async (req, reply) => { await sessions.revoke(req.environmentId, signedIn(req).userId, req.params.sessionId, clientCaller(req)); return noContent(reply); });
    app.post('/sessions/current/active-organization', { schema: { operationId: 'setActiveOrganization', summary: "Choose the session's active organization", description: ACTIVE_ORGANIZATION, tags, body: ActiveOrganizationBody, response: { 200: Session } } },
      (req) => sessions.setActiveOrganization(req.environmentId, signedIn(req), req.body.organizationId, clientCaller(req)));
  };
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { NoContent, noContent, Page, PageQuery } from '../platform/http/common-schemas.js';
import { clientCaller, OPEN_DURING_ENROLMENT, serverCaller, signedIn } from '../platform/http/planes.js';
import { ListSessionsQuery, Session, UserSessionParams } from '../sessions/schemas.js';
import { actorOf } from '../sessions/service.js';
import {
  CreateUserBody, CurrentUser, ListUsersQuery, MetadataPatchBody, SearchUsersBody, UpdateMeBody, UpdateUserBody, User, UserParams,
} from './schemas.js';
import { toClientUser } from './accounts.js';
import type { UsersService } from './service.js';

const tags = ['Users'];

/** Server API: users, their metadata, status and sessions. */
const LAST_OWNER = 'Refused with 409 last_owner (properties.organizationIds) while the user is the only active owner of an organization: make another member owner, or delete the organization, first.';

export function usersServerRoutes(users: UsersService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/users', { schema: { operationId: 'createUser', summary: 'Create a user', tags, body: CreateUserBody, response: { 201: User } } },
      async (req, reply) => reply.code(201).send(await users.create(req.environmentId, req.body, serverCaller(req))));
    app.get('/users', { schema: { operationId: 'listUsers', summary: 'List users (filter by email or name substring and status)', tags, querystring: ListUsersQuery, response: { 200: Page(User) } } },
      (req) => users.list(req.environmentId, { emailSearch: req.query.emailSearch, nameSearch: req.query.nameSearch, statuses: req.query.status }, req.query));
    app.post('/users/search', { schema: { operationId: 'searchUsers', summary: 'Search users (email, name, statuses, metadata containment)', tags, querystring: PageQuery, body: SearchUsersBody, response: { 200: Page(User) } } },
      (req) => users.list(req.environmentId, req.body, req.query));
    app.get('/users/:userId', { schema: { operationId: 'getUser', summary: 'Get a user', tags, params: UserParams, response: { 200: User } } },
      (req) => users.get(req.environmentId, req.params.userId));
    app.patch('/users/:userId', { schema: { operationId: 'updateUser', summary: "Update a user's profile, email or password", tags, params: UserParams, body: UpdateUserBody, response: { 200: User } } },
      (req) => users.update(req.environmentId, req.params.userId, req.body, serverCaller(req)));
    app.delete('/users/:userId', { schema: { operationId: 'deleteUser', summary: 'Soft-delete a user (a repeat answers 403)', description: LAST_OWNER, tags, params: UserParams, response: { 204: NoContent } } },
      async (req, reply) => { await users.softDelete(req.environmentId, req.params.userId, serverCaller(req)); return noContent(reply); });
    app.post('/users/:userId/ban', { schema: { operationId: 'banUser', summary: 'Ban a user and revoke their sessions', description: LAST_OWNER, tags, params: UserParams, response: { 200: User } } },
      (req) => users.ban(req.environmentId, req.params.userId, serverCaller(req)));
    app.post('/users/:userId/unban', { schema: { operationId: 'unbanUser', summary: 'Unban a user', tags, params: UserParams, response: { 200: User } } },
      (req) => users.unban(req.environmentId, req.params.userId, serverCaller(req)));
    app.patch('/users/:userId/metadata', { schema: { operationId: 'mergeUserMetadata', summary: "Deep-merge a user's metadata", tags, params: UserParams, body: MetadataPatchBody, response: { 200: User } } },
      (req) => users.mergeMetadata(req.environmentId, req.params.userId, req.body, serverCaller(req)));
    app.get('/users/:userId/sessions', { schema: { operationId: 'listUserSessions', summary: "List a user's sessions", tags, params: UserParams, querystring: ListSessionsQuery, response: { 200: Page(Session) } } },
      (req) => users.listSessions(req.environmentId, req.params.userId, req.query));
    app.delete('/users/:userId/sessions', { schema: { operationId: 'revokeUserSessions', summary: "Revoke all of a user's sessions", tags, params: UserParams, response: { 204: NoContent } } },
      async (req, reply) => { await users.revokeAllSessions(req.environmentId, req.params.userId, serverCaller(req)); return noContent(reply); });
    app.delete('/users/:userId/sessions/:sessionId', { schema: { operationId: 'revokeUserSession', summary: 'Revoke one session of a user', tags, params: UserSessionParams, response: { 204: NoContent } } },
      async (req, reply) => { await users.revokeSession(req.environmentId, req.params.userId, req.params.sessionId, serverCaller(req)); return noContent(reply); });
  };
}

const ME = 'The user in client form (no private metadata), and `actor`: who acts behind an impersonated session, else null.';

/** Client plane, signed in: the current user in client form. */
export function usersClientRoutes(users: UsersService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Client: current user'];
    const current = (req: FastifyRequest, user: User) => ({ ...toClientUser(user), actor: actorOf(signedIn(req)) });
    app.get('/me', { config: OPEN_DURING_ENROLMENT, schema: { operationId: 'getMe', summary: 'Get the signed-in user', description: ME, tags, response: { 200: CurrentUser } } },
      async (req) => current(req, await users.get(req.environmentId, signedIn(req).userId)));
    app.patch('/me', { schema: { operationId: 'updateMe', summary: "Update the signed-in user's profile and unsafe metadata", tags, body: UpdateMeBody, response: { 200: CurrentUser } } },
      async (req) => current(req, await users.update(req.environmentId, signedIn(req).userId, req.body, clientCaller(req))));
  };
}

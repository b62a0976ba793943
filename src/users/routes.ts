import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { NoContent, noContent, Page } from '../platform/http/common-schemas.js';
import { ListSessionsQuery, Session, UserSessionParams } from '../sessions/schemas.js';
import {
  ClientUser, CreateUserBody, ListUsersQuery, MetadataPatchBody, SearchUsersBody, UpdateMeBody, UpdateUserBody, User, UserParams,
} from './schemas.js';
import { toClientUser, type UsersService } from './service.js';
import { PageQuery } from '../platform/http/common-schemas.js';

const tags = ['Users'];

/** Server API: users, their metadata, status and sessions. */
export function usersServerRoutes(users: UsersService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/users', { schema: { tags, body: CreateUserBody, response: { 201: User } } },
      async (req, reply) => reply.code(201).send(await users.create(req.environmentId, req.body)));
    app.get('/users', { schema: { tags, querystring: ListUsersQuery, response: { 200: Page(User) } } },
      (req) => users.list(req.environmentId, { emailSearch: req.query.emailSearch, statuses: req.query.status }, req.query));
    app.post('/users/search', { schema: { tags, querystring: PageQuery, body: SearchUsersBody, response: { 200: Page(User) } } },
      (req) => users.list(req.environmentId, req.body, req.query));
    app.get('/users/:userId', { schema: { tags, params: UserParams, response: { 200: User } } },
      (req) => users.get(req.environmentId, req.params.userId));
    app.patch('/users/:userId', { schema: { tags, params: UserParams, body: UpdateUserBody, response: { 200: User } } },
      (req) => users.update(req.environmentId, req.params.userId, req.body));
    app.delete('/users/:userId', { schema: { tags, params: UserParams, response: { 204: NoContent } } },
      async (req, reply) => { await users.softDelete(req.environmentId, req.params.userId); return noContent(reply); });
    app.post('/users/:userId/ban', { schema: { tags, params: UserParams, response: { 200: User } } },
      (req) => users.ban(req.environmentId, req.params.userId));
    app.post('/users/:userId/unban', { schema: { tags, params: UserParams, response: { 200: User } } },
      (req) => users.unban(req.environmentId, req.params.userId));
    app.patch('/users/:userId/metadata', { schema: { tags, params: UserParams, body: MetadataPatchBody, response: { 200: User } } },
      (req) => users.mergeMetadata(req.environmentId, req.params.userId, req.body));
    app.get('/users/:userId/sessions', { schema: { tags, params: UserParams, querystring: ListSessionsQuery, response: { 200: Page(Session) } } },
      (req) => users.listSessions(req.environmentId, req.params.userId, req.query));
    app.delete('/users/:userId/sessions', { schema: { tags, params: UserParams, response: { 204: NoContent } } },
      async (req, reply) => { await users.revokeAllSessions(req.environmentId, req.params.userId); return noContent(reply); });
    app.delete('/users/:userId/sessions/:sessionId', { schema: { tags, params: UserSessionParams, response: { 204: NoContent } } },
      async (req, reply) => { await users.revokeSession(req.environmentId, req.params.userId, req.params.sessionId); return noContent(reply); });
  };
}

/** Client plane, signed in: the current user in client form. */
export function usersClientRoutes(users: UsersService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Client: current user'];
    app.get('/me', { schema: { tags, response: { 200: ClientUser } } },
      async (req) => toClientUser(await users.get(req.environmentId, req.session!.userId)));
    app.patch('/me', { schema: { tags, body: UpdateMeBody, response: { 200: ClientUser } } },
      async (req) => toClientUser(await users.update(req.environmentId, req.session!.userId, req.body)));
  };
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { directoryCaller } from '../platform/caller.js';
import { NoContent, noContent } from '../platform/http/common-schemas.js';
import { requestContext, serverCaller } from '../platform/http/planes.js';
import { listOf, resourceTypes, schemas, serviceProviderConfig } from './discovery.js';
import { resourceNotFound } from './errors.js';
import { membersExcluded, type ScimGroups } from './groups.js';
import { scimDirectoryOf } from './plane.js';
import {
  CreateDirectoryBody, DirectoriesParams, Directory, DirectoryList, DirectoryParams, DirectoryWithToken, ScimBody, ScimListQuery, ScimResourceParams, UpdateDirectoryBody,
} from './schemas.js';
import { scimBasePath, type DirectoriesService } from './service.js';
import type { ScimUsers } from './users.js';

const tags = ['SCIM directories'];

/** Server API: an organization's SCIM directories (the token is answered once, on create and on rotation). */
export function directoriesServerRoutes(directories: DirectoriesService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const one = '/organizations/:organizationId/directories/:directoryId';
    app.post('/organizations/:organizationId/directories', {
      schema: { operationId: 'createScimDirectory', summary: 'Create a SCIM directory; its bearer token is answered only here', tags, params: DirectoriesParams, body: CreateDirectoryBody, response: { 201: DirectoryWithToken } },
    }, async (req, reply) => reply.code(201).send(await directories.create(req.environmentId, req.params.organizationId, req.body, serverCaller(req))));
    app.get('/organizations/:organizationId/directories', { schema: { operationId: 'listScimDirectories', summary: "List an organization's SCIM directories", tags, params: DirectoriesParams, response: { 200: DirectoryList } } },
      (req) => directories.list(req.environmentId, req.params.organizationId));
    app.get(one, { schema: { operationId: 'getScimDirectory', summary: 'Get a SCIM directory (never its token)', tags, params: DirectoryParams, response: { 200: Directory } } },
      (req) => directories.get(req.environmentId, req.params.organizationId, req.params.directoryId));
    app.patch(one, { schema: { operationId: 'updateScimDirectory', summary: 'Rename a SCIM directory or set its group-to-role mapping', tags, params: DirectoryParams, body: UpdateDirectoryBody, response: { 200: Directory } } },
      (req) => directories.update(req.environmentId, req.params.organizationId, req.params.directoryId, req.body, serverCaller(req)));
    app.post(`${one}/token`, { schema: { operationId: 'rotateScimDirectoryToken', summary: 'Replace the bearer token; the old one stops working at once', tags, params: DirectoryParams, response: { 200: DirectoryWithToken } } },
      (req) => directories.rotateToken(req.environmentId, req.params.organizationId, req.params.directoryId, serverCaller(req)));
    app.delete(one, { schema: { operationId: 'deleteScimDirectory', summary: 'Delete a SCIM directory (its users stay)', tags, params: DirectoryParams, response: { 204: NoContent } } },
      async (req, reply) => { await directories.delete(req.environmentId, req.params.organizationId, req.params.directoryId, serverCaller(req)); return noContent(reply); });
  };
}

/** The directory's SCIM base URL as the client reached it, for `meta.location`. */
const baseOf = (req: FastifyRequest) => `${req.protocol}://${req.host}${scimBasePath(scimDirectoryOf(req).id)}`;
const by = (req: FastifyRequest) => directoryCaller(scimDirectoryOf(req).id, requestContext(req));
const DirectoryOnly = Type.Object({ directoryId: Type.String() });
const ResourceQuery = Type.Object({ ...ScimListQuery.properties, excludedAttributes: Type.Optional(Type.String()), attributes: Type.Optional(Type.String()) });

/** SCIM 2.0 (RFC 7644) under /scim/v2/{directoryId}; mounted by the SCIM plane, which has opened the directory. */
export function scimRoutes({ users, groups }: { users: ScimUsers; groups: ScimGroups }): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const params = ScimResourceParams;
    app.get('/:directoryId/ServiceProviderConfig', { schema: { params: DirectoryOnly } }, (req) => serviceProviderConfig(baseOf(req)));
    app.get('/:directoryId/Schemas', { schema: { params: DirectoryOnly } }, (req) => listOf(schemas(baseOf(req))));
    app.get('/:directoryId/Schemas/:resourceId', { schema: { params } }, (req) => discovered(schemas(baseOf(req)), req.params.resourceId));
    app.get('/:directoryId/ResourceTypes', { schema: { params: DirectoryOnly } }, (req) => listOf(resourceTypes(baseOf(req))));
    app.get('/:directoryId/ResourceTypes/:resourceId', { schema: { params } }, (req) => discovered(resourceTypes(baseOf(req)), req.params.resourceId));

    app.post('/:directoryId/Users', { schema: { params: DirectoryOnly, body: ScimBody } },
      async (req, reply) => created(reply, await users.create(scimDirectoryOf(req), req.body, by(req), baseOf(req))));
    app.get('/:directoryId/Users', { schema: { params: DirectoryOnly, querystring: ResourceQuery } }, (req) => users.list(scimDirectoryOf(req), req.query, baseOf(req)));
    app.get('/:directoryId/Users/:resourceId', { schema: { params } }, (req) => users.get(scimDirectoryOf(req), req.params.resourceId, baseOf(req)));
    app.put('/:directoryId/Users/:resourceId', { schema: { params, body: ScimBody } }, (req) => users.replace(scimDirectoryOf(req), req.params.resourceId, req.body, by(req), baseOf(req)));
    app.patch('/:directoryId/Users/:resourceId', { schema: { params, body: ScimBody } }, (req) => users.patch(scimDirectoryOf(req), req.params.resourceId, req.body, by(req), baseOf(req)));
    app.delete('/:directoryId/Users/:resourceId', { schema: { params } },
      async (req, reply) => { await users.delete(scimDirectoryOf(req), req.params.resourceId, by(req)); return reply.code(204).send(); });

    app.post('/:directoryId/Groups', { schema: { params: DirectoryOnly, body: ScimBody } },
      async (req, reply) => created(reply, await groups.create(scimDirectoryOf(req), req.body, by(req), baseOf(req))));
    app.get('/:directoryId/Groups', { schema: { params: DirectoryOnly, querystring: ResourceQuery } },
      (req) => groups.list(scimDirectoryOf(req), req.query, baseOf(req), membersExcluded(req.query.excludedAttributes)));
    app.get('/:directoryId/Groups/:resourceId', { schema: { params, querystring: ResourceQuery } },
      (req) => groups.get(scimDirectoryOf(req), req.params.resourceId, baseOf(req), membersExcluded(req.query.excludedAttributes)));
    app.put('/:directoryId/Groups/:resourceId', { schema: { params, body: ScimBody } }, (req) => groups.replace(scimDirectoryOf(req), req.params.resourceId, req.body, by(req), baseOf(req)));
    app.patch('/:directoryId/Groups/:resourceId', { schema: { params, body: ScimBody } }, (req) => groups.patch(scimDirectoryOf(req), req.params.resourceId, req.body, by(req), baseOf(req)));
    app.delete('/:directoryId/Groups/:resourceId', { schema: { params } },
      async (req, reply) => { await groups.delete(scimDirectoryOf(req), req.params.resourceId, by(req)); return reply.code(204).send(); });
  };
}

/** 201 with the new resource's URI in Location (RFC 7644 §3.3). */
const created = (reply: FastifyReply, resource: { meta: { location: string } }) => reply.code(201).header('Location', resource.meta.location).send(resource);

function discovered<T extends { id: string }>(documents: T[], id: string): T {
  const found = documents.find((document) => document.id === id);
  if (!found) throw resourceNotFound('entry', id);
  return found;
}

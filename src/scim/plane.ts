import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ownConnections } from '../platform/db/pool.js';
import { scimUnauthenticated } from './errors.js';
import type { AuthenticatedDirectory, DirectoriesService } from './service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the SCIM plane's hook: the directory the path names, opened by its bearer token. */
    scimDirectory: AuthenticatedDirectory | null;
  }
}

export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

const bearer = (request: FastifyRequest) => /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];

/** The directory of a request on the SCIM plane, whose hook has set it. */
export function scimDirectoryOf(request: FastifyRequest): AuthenticatedDirectory {
  if (!request.scimDirectory) throw new Error(`${request.method} ${request.routeOptions.url} is served outside the SCIM plane`);
  return request.scimDirectory;
}

/**
 * The SCIM plane, /scim/v2/{directoryId}: its own encapsulated context whose hook opens the directory with the
 * bearer token (401 for a missing or wrong token, or one of another directory). Bodies may come as
 * application/scim+json; answers are application/scim+json, errors in SCIM's error schema (rendered by the one
 * error handler, see problem.ts). Its routes are left out of the OpenAPI document: SCIM is described by RFC 7644
 * and by its own discovery endpoints.
 */
export function scimPlane(authenticate: DirectoriesService['authenticate'], routes: FastifyPluginAsync[]): FastifyPluginAsync {
  return async (app) => {
    app.decorateRequest('scimDirectory', null);
    app.addHook('onRoute', (route) => { route.schema = { ...route.schema, hide: true }; });
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.addContentTypeParser('application/scim+json', { parseAs: 'string' }, (request, body, done) =>
      (body.length === 0 ? done(null, undefined) : parseJson(request, body as string, done)));
    app.addHook('onRequest', async (request, reply) => {
      reply.type(SCIM_CONTENT_TYPE);
      const { directoryId } = (request.params ?? {}) as { directoryId?: string };
      const token = bearer(request);
      const directory = token && directoryId ? await authenticate(directoryId, token) : undefined;
      if (!directory) throw scimUnauthenticated();
      request.scimDirectory = directory;
      request.environmentId = directory.environmentId;
      ownConnections(directory.environmentId);
    });
    for (const plugin of routes) await app.register(plugin);
  };
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { NoContent, noContent } from '../platform/http/common-schemas.js';
import { serverCaller } from '../platform/http/planes.js';
import { Connection, ConnectionList, ConnectionParams, ConnectionsParams, CreateConnectionBody, UpdateConnectionBody } from './schemas.js';
import type { SsoConnectionsService } from './service.js';

const tags = ['SSO connections'];
const CREATE = 'SAML: the IdP by `idpMetadataXml`, by `idpMetadataUrl` (fetched now; 422 idp_metadata_unavailable when it cannot be read), or by '
  + '`idpEntityId`, `idpSsoUrl` (HTTP-Redirect binding) and `idpCertificate`; the answer has `spEntityId`, `acsUrl` and `metadataUrl` to enter at the IdP. '
  + 'OpenID Connect: `issuer`, `clientId`, `clientSecret` (sealed at rest, never returned); register `redirectUri` at the IdP. '
  + "Users sign in by email when their domain is one of the organization's verified domains; `enforced` refuses them every other way in: password, passkey, social sign-in and invitation sign-up (sso_required). "
  + '`groupRoles` maps IdP groups to the organization\'s roles (400 invalid_role for a role the organization does not have).';

/** Server API: an organization's enterprise sign-in connections (contract §3d). */
export function ssoConnectionsServerRoutes(connections: SsoConnectionsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const one = '/organizations/:organizationId/sso-connections/:connectionId';
    app.post('/organizations/:organizationId/sso-connections', {
      schema: { operationId: 'createSsoConnection', summary: 'Add a SAML or OpenID Connect connection to the organization', description: CREATE, tags, params: ConnectionsParams, body: CreateConnectionBody, response: { 201: Connection } },
    }, async (req, reply) => reply.code(201).send(await connections.create(req.environmentId, req.params.organizationId, req.body, serverCaller(req))));
    app.get('/organizations/:organizationId/sso-connections', {
      schema: { operationId: 'listSsoConnections', summary: "List the organization's SSO connections", tags, params: ConnectionsParams, response: { 200: ConnectionList } },
    }, (req) => connections.list(req.environmentId, req.params.organizationId));
    app.get(one, {
      schema: { operationId: 'getSsoConnection', summary: 'Get an SSO connection (never its client secret)', tags, params: ConnectionParams, response: { 200: Connection } },
    }, (req) => connections.get(req.environmentId, req.params.organizationId, req.params.connectionId));
    app.patch(one, {
      schema: { operationId: 'updateSsoConnection', summary: 'Change an SSO connection', tags, params: ConnectionParams, body: UpdateConnectionBody, response: { 200: Connection } },
    }, (req) => connections.update(req.environmentId, req.params.organizationId, req.params.connectionId, req.body, serverCaller(req)));
    app.delete(one, {
      schema: { operationId: 'deleteSsoConnection', summary: 'Delete an SSO connection (its users and memberships stay)', tags, params: ConnectionParams, response: { 204: NoContent } },
    }, async (req, reply) => { await connections.delete(req.environmentId, req.params.organizationId, req.params.connectionId, serverCaller(req)); return noContent(reply); });
  };
}

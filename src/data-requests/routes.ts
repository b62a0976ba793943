import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Page, PageQuery } from '../platform/http/common-schemas.js';
import { clientCaller, NOT_UNDER_IMPERSONATION, RECENTLY_AUTHENTICATED, serverCaller, signedIn } from '../platform/http/planes.js';
import {
  CreateDataRequestBody, DataExportArchive, DataRequest, DataRequestParams, ListDataRequestsQuery, StartDataRequestBody, UserDataRequestParams,
} from './schemas.js';
import type { DataRequestsService } from './service.js';

const ERASURE = 'An erasure waits out its grace period (status `scheduled` until `completesAt`; the environment setting `dataErasureGraceDays`, 7 by default) '
  + 'and can be cancelled meanwhile; it then removes names, emails, metadata, identities, sessions and the IPs and user agents of '
  + "Gatehouse's own audit events about the user, and keeps the user id (status `deleted`) and the customer's audit events. "
  + 'An export is prepared in the background (`pending`, then `ready`) and can be downloaded for 7 days. '
  + 'One request of each type in flight per user (409 data_request_in_progress); an erasure of the only active owner of an organization is 409 last_owner.';
const CLIENT_REQUEST = ' Needs recent authentication (a password or second-factor check in this session within 10 minutes, else 403 reauthentication_required); '
  + 'an impersonated session gets 403 impersonation_restricted.';

/** Client plane, signed in: the user's own data requests (GDPR Art. 15, 17 and 20). */
export function dataRequestsClientRoutes(dataRequests: DataRequestsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Client: data requests'];
    app.post('/me/data-requests', {
      config: { ...NOT_UNDER_IMPERSONATION, ...RECENTLY_AUTHENTICATED },
      schema: { operationId: 'createMyDataRequest', summary: 'Request an export or the erasure of my data', description: ERASURE + CLIENT_REQUEST, tags, body: CreateDataRequestBody, response: { 202: DataRequest } },
    }, async (req, reply) => reply.code(202).send(await dataRequests.request(req.environmentId, signedIn(req).userId, req.body, clientCaller(req))));
    app.get('/me/data-requests', { schema: { operationId: 'listMyDataRequests', summary: 'List my data requests, newest first', tags, querystring: PageQuery, response: { 200: Page(DataRequest) } } },
      (req) => dataRequests.listForUser(req.environmentId, signedIn(req).userId, req.query));
    app.get('/me/data-requests/:requestId/download', {
      schema: {
        operationId: 'downloadMyDataExport', summary: 'Download the archive of my export',
        description: '200 once the export is `ready`; 409 export_not_ready before, 410 export_expired once its 7-day link has passed.',
        tags, params: DataRequestParams, response: { 200: DataExportArchive },
      },
    }, async (req, reply) => {
      const archive = await dataRequests.download(req.environmentId, signedIn(req).userId, req.params.requestId);
      return reply.header('content-disposition', `attachment; filename="data-export-${req.params.requestId}.json"`).header('cache-control', 'no-store').send(archive);
    });
    app.post('/me/data-requests/:requestId/cancel', {
      config: { ...NOT_UNDER_IMPERSONATION },
      schema: { operationId: 'cancelMyDataRequest', summary: 'Cancel my erasure during its grace period', tags, params: DataRequestParams, response: { 200: DataRequest } },
    }, (req) => dataRequests.cancel(req.environmentId, req.params.requestId, clientCaller(req), signedIn(req).userId));
  };
}

/** Server API: operators list, start and cancel users' data requests. */
export function dataRequestsServerRoutes(dataRequests: DataRequestsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Data requests'];
    app.get('/data-requests', { schema: { operationId: 'listDataRequests', summary: 'List data requests (filter by status, type, user)', tags, querystring: ListDataRequestsQuery, response: { 200: Page(DataRequest) } } },
      (req) => dataRequests.list(req.environmentId, { status: req.query.status, type: req.query.type, userId: req.query.userId }, req.query));
    app.get('/data-requests/:requestId', { schema: { operationId: 'getDataRequest', summary: 'Get a data request', tags, params: DataRequestParams, response: { 200: DataRequest } } },
      (req) => dataRequests.get(req.environmentId, req.params.requestId));
    app.post('/users/:userId/data-requests', {
      schema: {
        operationId: 'startDataRequest', summary: "Start an export or erasure of a user's data",
        description: `${ERASURE} \`graceDays\` (erasure only) overrides the environment's grace period; 0 erases at once.`,
        tags, params: UserDataRequestParams, body: StartDataRequestBody, response: { 202: DataRequest },
      },
    }, async (req, reply) => reply.code(202).send(await dataRequests.request(req.environmentId, req.params.userId, req.body, serverCaller(req))));
    app.post('/data-requests/:requestId/cancel', { schema: { operationId: 'cancelDataRequest', summary: 'Cancel an erasure during its grace period', tags, params: DataRequestParams, response: { 200: DataRequest } } },
      (req) => dataRequests.cancel(req.environmentId, req.params.requestId, serverCaller(req)));
  };
}

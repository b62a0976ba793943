import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { NoContent, noContent, Page, PageQuery } from '../platform/http/common-schemas.js';
import { serverCaller } from '../platform/http/planes.js';
import {
  CreatedWebhookEndpoint, CreateWebhookEndpointBody, ListWebhookDeliveriesQuery, RetriedWebhookDelivery, RotatedWebhookSecret, UpdateWebhookEndpointBody,
  WebhookDelivery, WebhookDeliveryParams, WebhookEndpoint, WebhookEndpointParams, WebhookEventTypes,
} from './schemas.js';
import type { WebhooksService } from './service.js';

const tags = ['Webhooks'];
const ENDPOINTS = 'At most 20 endpoints per environment (409 webhook_endpoint_limit). The URL is http: or https: without credentials; '
  + 'where a delivery may go (private networks) is decided when it is sent. `eventTypes` names types of GET /webhook-event-types, or null for every type.';

/** Server API: webhook endpoints, their deliveries, and the event types they can receive. */
export function webhooksServerRoutes(webhooks: WebhooksService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/webhook-endpoints', {
      schema: { operationId: 'createWebhookEndpoint', summary: 'Create a webhook endpoint; the answer shows its signing secret, once', description: ENDPOINTS, tags, body: CreateWebhookEndpointBody, response: { 201: CreatedWebhookEndpoint } },
    }, async (req, reply) => reply.code(201).send(await webhooks.create(req.environmentId, req.body, serverCaller(req))));
    app.get('/webhook-endpoints', { schema: { operationId: 'listWebhookEndpoints', summary: 'List webhook endpoints, oldest first', tags, querystring: PageQuery, response: { 200: Page(WebhookEndpoint) } } },
      (req) => webhooks.list(req.environmentId, req.query));
    app.get('/webhook-endpoints/:endpointId', { schema: { operationId: 'getWebhookEndpoint', summary: 'Get a webhook endpoint', tags, params: WebhookEndpointParams, response: { 200: WebhookEndpoint } } },
      (req) => webhooks.get(req.environmentId, req.params.endpointId));
    app.patch('/webhook-endpoints/:endpointId', {
      schema: { operationId: 'updateWebhookEndpoint', summary: "Change a webhook endpoint's URL, event types, description, or turn it on or off", description: ENDPOINTS, tags, params: WebhookEndpointParams, body: UpdateWebhookEndpointBody, response: { 200: WebhookEndpoint } },
    }, (req) => webhooks.update(req.environmentId, req.params.endpointId, req.body, serverCaller(req)));
    app.delete('/webhook-endpoints/:endpointId', { schema: { operationId: 'deleteWebhookEndpoint', summary: 'Delete a webhook endpoint with its deliveries', tags, params: WebhookEndpointParams, response: { 204: NoContent } } },
      async (req, reply) => { await webhooks.delete(req.environmentId, req.params.endpointId, serverCaller(req)); return noContent(reply); });
    app.post('/webhook-endpoints/:endpointId/rotate-secret', {
      schema: { operationId: 'rotateWebhookSecret', summary: "Replace a webhook endpoint's signing secret; the previous one also signs for 24 hours", tags, params: WebhookEndpointParams, response: { 200: RotatedWebhookSecret } },
    }, (req) => webhooks.rotateSecret(req.environmentId, req.params.endpointId, serverCaller(req)));
    app.get('/webhook-endpoints/:endpointId/deliveries', {
      schema: { operationId: 'listWebhookDeliveries', summary: "List a webhook endpoint's deliveries with their attempts, newest first", tags, params: WebhookEndpointParams, querystring: ListWebhookDeliveriesQuery, response: { 200: Page(WebhookDelivery) } },
    }, (req) => webhooks.listDeliveries(req.environmentId, req.params.endpointId, req.query));
    app.post('/webhook-deliveries/:deliveryId/retry', {
      schema: { operationId: 'retryWebhookDelivery', summary: 'Send a webhook delivery again now', description: 'A finished delivery goes back to pending; a pending one is due now. 409 webhook_endpoint_disabled while its endpoint is off.', tags, params: WebhookDeliveryParams, response: { 202: RetriedWebhookDelivery } },
    }, async (req, reply) => reply.code(202).send(await webhooks.retryDelivery(req.environmentId, req.params.deliveryId)));
    app.get('/webhook-event-types', { schema: { operationId: 'listWebhookEventTypes', summary: 'List the webhook event types, each with an example payload', tags, response: { 200: WebhookEventTypes } } },
      () => webhooks.eventTypes());
  };
}

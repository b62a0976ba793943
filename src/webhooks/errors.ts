import { ProblemError } from '../platform/http/problem.js';

export const webhookEndpointNotFound = () => new ProblemError(404, 'resource_not_found', 'No webhook endpoint with this id in this environment.');
export const webhookDeliveryNotFound = () => new ProblemError(404, 'resource_not_found', 'No webhook delivery with this id in this environment.');
export const webhookEndpointLimit = (max: number) =>
  new ProblemError(409, 'webhook_endpoint_limit', `An environment can have at most ${max} webhook endpoints: delete one first.`, { max });
export const webhookEndpointDisabled = () =>
  new ProblemError(409, 'webhook_endpoint_disabled', "The delivery's endpoint is disabled: enable it (PATCH {enabled: true}) before retrying.");

/** 400 invalid_request in the shape of a schema validation error: one entry per field, the detail naming each. */
export const invalidWebhookEndpoint = (errors: { path: string; message: string }[]) =>
  new ProblemError(400, 'invalid_request', `Invalid request body: ${errors.map((e) => `${e.path.slice('/body/'.length).replaceAll('/', '.')} ${e.message}`).join('; ')}.`, { errors });

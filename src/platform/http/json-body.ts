import type { FastifyInstance } from 'fastify';

/**
 * Bodies are JSON only, and a JSON content type with nothing after it counts as no body: generic fetch
 * wrappers send `content-type: application/json` on every call, bodiless POSTs (sign-out, token, ban)
 * included. A route that needs a body then answers the usual validation problem. A text/plain body is 415,
 * not a string that fails validation.
 */
export function acceptJsonBodies(app: FastifyInstance) {
  // Fastify's own parser, with its refusal of __proto__ and constructor.prototype keys (its defaults).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    (body.length === 0 ? done(null, undefined) : parseJson(request, body as string, done)));
}

import type { FastifyRequest } from 'fastify';

// Query parameters that carry a single-use secret (the impersonation link's token): never written to a log.
const SECRET_QUERY_VALUE = /([?&]token=)[^&#]*/gi;

/** The request as Fastify logs it on "incoming request", with secret query values replaced by [redacted]. */
export const serializeRequest = (req: FastifyRequest) => ({
  method: req.method, url: req.url.replace(SECRET_QUERY_VALUE, '$1[redacted]'), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort,
});

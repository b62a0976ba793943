import type { FastifyInstance } from 'fastify';
import { constantTimeEqual } from '../crypto/tokens.js';
import type { Metrics } from '../metrics.js';
import { ProblemError } from './problem.js';

/** Who may scrape: anyone (the default), holders of a bearer token, or nobody here (served on its own port). */
export type MetricsExposure = { on: 'app'; token?: string } | { on: 'own_port' };

/** Counts every request by route pattern and status; serves GET /metrics unless it has a port of its own. */
export function registerMetrics(app: FastifyInstance, metrics: Metrics, exposure: MetricsExposure = { on: 'app' }) {
  // A callback hook: it runs on every request, and a promise per request costs more than the counting.
  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, never the raw URL: ids and tokens must not become label values.
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
  if (exposure.on === 'own_port') return;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (exposure.token && !bearerMatches(request.headers.authorization, exposure.token)) {
      throw new ProblemError(401, 'unauthenticated', 'Send the metrics token as "Authorization: Bearer <GATEHOUSE_METRICS_TOKEN>".');
    }
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

export const bearerMatches = (header: string | undefined, token: string) => {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  return presented !== undefined && constantTimeEqual(presented, token);
};

import { createServer } from 'node:http';
import type { Metrics } from '../metrics.js';
import { bearerMatches } from './metrics-route.js';

/**
 * GET /metrics on a port of its own (GATEHOUSE_METRICS_PORT), so the scrape can stay on an internal
 * network while the app's port faces the world. Anything else there is a 404; a token, when set, applies.
 */
export async function serveMetrics(metrics: Metrics, options: { port: number; host: string; token?: string }) {
  const server = createServer((request, response) => {
    const answer = (status: number, contentType: string, body: string) => {
      response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }).end(body);
    };
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') return answer(404, 'text/plain', 'Not found: only GET /metrics is served here.\n');
    if (options.token && !bearerMatches(request.headers.authorization, options.token)) {
      response.setHeader('www-authenticate', 'Bearer');
      return answer(401, 'text/plain', 'Send the metrics token as "Authorization: Bearer <GATEHOUSE_METRICS_TOKEN>".\n');
    }
    metrics.registry.metrics().then((text) => answer(200, metrics.registry.contentType, text), () => answer(500, 'text/plain', 'metrics unavailable\n'));
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(options.port, options.host, resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

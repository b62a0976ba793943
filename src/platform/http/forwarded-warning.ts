import type { FastifyInstance } from 'fastify';

/** At most one warning this often: a proxy sends the header on every request. */
const WARN_EVERY_MS = 10 * 60_000;

/**
 * Warns (at most every ten minutes) when a request carries X-Forwarded-For from a peer that is not a
 * trusted proxy: the header is ignored then, so every client behind that proxy shares the proxy's per-IP
 * budgets, and one attacker's failures throttle all of them. The fix is GATEHOUSE_TRUSTED_PROXIES.
 */
export function warnOnUntrustedForwarding(app: FastifyInstance, now: () => number = Date.now) {
  let lastWarnedAt = -Infinity;
  app.addHook('onRequest', (request, _reply, done) => {
    const forwarded = request.headers['x-forwarded-for'];
    const peer = request.socket.remoteAddress;
    if (forwarded !== undefined && request.ip === peer && now() - lastWarnedAt >= WARN_EVERY_MS) {
      lastWarnedAt = now();
      request.log.warn({ peer }, `X-Forwarded-For came from ${peer}, which is not a trusted proxy, so it was ignored: every client behind `
        + 'that proxy shares its per-IP budgets (sign-in failures, codes, sign-ups). List the proxy in GATEHOUSE_TRUSTED_PROXIES.');
    }
    done();
  });
}

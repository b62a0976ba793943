import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * The one inline style swagger-ui writes (the `<style>` of its logo SVG), allowed by its hash rather than
 * 'unsafe-inline'. test/browser/docs-page.test.ts fails if an upgrade changes it.
 */
const SWAGGER_LOGO_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

/**
 * The API reference page (swagger-ui at /docs) runs only its own scripts and styles, reads the document
 * from its own origin, sends no forms and may not be framed. Its SVG icons are data: URLs.
 */
export const DOCS_CSP = [
  "default-src 'none'", "script-src 'self'", `style-src 'self' ${SWAGGER_LOGO_STYLE}`, "img-src 'self' data:",
  "font-src 'self' data:", "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

/** Everything else is JSON (or Prometheus text): it loads nothing and may not be framed. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * Headers every answer carries, errors and 404s included:
 * - `X-Content-Type-Options: nosniff`, so no browser renders a JSON body as HTML or script;
 * - `Cache-Control: no-store` unless the route chose its own (only the reference page's static files do):
 *   sessions, secret keys, codes and user data must never sit in a browser or proxy cache, and
 *   listing which answers carry them would be one more thing to forget;
 * - a Content-Security-Policy; the reference page sets its own (`DOCS_CSP`) after this one.
 */
export function registerSecurityHeaders(app: FastifyInstance) {
  // A callback hook, not an async one: it runs on every answer, and a promise per request costs more than the work.
  app.addHook('onSend', (_request, reply, payload, done) => {
    setSecurityHeaders(reply);
    done(null, payload);
  });
}

/** Also called by the problem renderer: errors Fastify raises before routing skip every hook. */
export function setSecurityHeaders(reply: FastifyReply) {
  reply.header('x-content-type-options', 'nosniff');
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', API_CSP);
}

import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from './problem.js';

/** What CORS reads of a client-plane environment (planes.ts's ClientEnvironment has it). */
interface CorsEnvironment { id: string; allowedOrigins: string[] }

/** The origins whose pages may call the client plane from a browser (CORS, with credentials): the environment's allowed origins. */
const isCorsOrigin = (env: CorsEnvironment, origin: string) => env.allowedOrigins.includes(origin);

const isPreflight = (request: FastifyRequest) =>
  request.method === 'OPTIONS' && request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined;

/** An origin as it may be echoed in a header and a sentence: printable ASCII, not too long (a non-browser can send anything). */
const printable = (origin: string) => (/^[\x21-\x7e]{1,200}$/.test(origin) ? origin : 'this origin');

/**
 * A preflight from an origin that is not allowed is refused with 403 origin_not_allowed, logged at warn, instead of
 * falling through to a 404 that the browser shows as "Failed to fetch". A browser never shows a preflight's body
 * (not in the console, not in DevTools), but its console quotes a malformed Access-Control-Allow-Origin value: the
 * refusal is put there as a sentence, which matches no origin and so grants nothing (docs/security.md, "CORS").
 */
export function refuseForeignPreflight(request: FastifyRequest, env: CorsEnvironment) {
  const origin = request.headers.origin;
  if (!isPreflight(request) || origin === undefined || isCorsOrigin(env, origin)) return;
  const shown = printable(origin);
  const howTo = `PUT /api/server/v1/allowed-origins (the Server API) or npx gatehouse allowed-origins add ${env.id} ${shown}`;
  request.log.warn({ code: 'origin_not_allowed', environmentId: env.id, origin: shown }, 'refused a CORS preflight from an origin that is not allowed');
  throw new ProblemError(403, 'origin_not_allowed',
    `The origin ${shown} is not an allowed origin of this environment (${env.id}), so browsers refuse its pages' calls. Allow it with ${howTo}.`,
    { origin: shown },
    { 'Access-Control-Allow-Origin': `origin_not_allowed: Gatehouse does not allow ${shown} for environment ${env.id}; allow it with ${howTo}`, Vary: 'Origin' });
}

/**
 * CORS with credentials for the environment's allowed origins only. Registered after the hook that resolves the
 * environment so it is known, and at the plane's level so it covers every client route and the preflight.
 */
export async function registerClientCors(app: FastifyInstance) {
  await app.register(cors, {
    delegator: (request, callback) => {
      const origin = request.headers.origin;
      const env = (request as FastifyRequest).clientEnvironment;
      const allowed = origin !== undefined && env !== null && isCorsOrigin(env, origin);
      callback(null, { origin: allowed ? origin : false, credentials: true, maxAge: 600, methods: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] });
    },
  });
}

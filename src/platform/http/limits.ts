import { randomUUID } from 'node:crypto';
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { FastifyHttpOptions, FastifyInstance } from 'fastify';
import { ProblemError, problemBody } from './problem.js';

/**
 * How long and how many: the bounds that stop slow or idle clients from holding connections
 * (a body trickled one byte every few seconds, headers that never end, responses never read).
 */
export interface HttpLimits {
  /** The request line and headers must arrive within this time. */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this time; slow handlers are not cut. */
  requestTimeoutMs: number;
  /** How often the two timeouts above are checked (Node's default is 30 s, which would double them). */
  timeoutCheckIntervalMs: number;
  /** A socket with no traffic either way for this long is closed (a client that never reads its answer). */
  idleTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long; above the 60 s idle timeout of common proxies. */
  keepAliveTimeoutMs: number;
  /** Connections over this many are refused at once, so file descriptors and memory stay bounded. */
  maxConnections: number;
}

export const HTTP_LIMITS: Readonly<HttpLimits> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  timeoutCheckIntervalMs: 1_000,
  idleTimeoutMs: 60_000,
  keepAliveTimeoutMs: 72_000,
  maxConnections: 1_024,
});

/** Fastify server options applying the limits; spread into `Fastify({...})`. */
export function httpServerOptions(limits: HttpLimits = HTTP_LIMITS) {
  return {
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: limits.timeoutCheckIntervalMs },
    clientErrorHandler: answerClientError,
  } satisfies FastifyHttpOptions<Server>;
}

/** Refuses connections over the cap; the refusals are logged at most once a minute, with their count. */
export function capConnections(app: FastifyInstance, limits: HttpLimits = HTTP_LIMITS) {
  app.server.maxConnections = limits.maxConnections;
  let refused = 0;
  let loggedAt = -Infinity;
  app.server.on('drop', () => {
    refused += 1;
    // Monotonic time only paces the log line; no rule depends on it.
    if (performance.now() - loggedAt < 60_000) return;
    app.log.warn({ refused, maxConnections: limits.maxConnections }, 'connection cap reached; refusing new connections');
    refused = 0;
    loggedAt = performance.now();
  });
}

function clientProblem(error: NodeJS.ErrnoException): ProblemError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ProblemError(408, 'request_timeout', 'The request did not arrive in time; the connection is closed.');
    case 'HPE_HEADER_OVERFLOW':
      return new ProblemError(431, 'headers_too_large', 'The request headers are too large.');
    default:
      return new ProblemError(400, 'invalid_request', 'The request is not valid HTTP.');
  }
}

/**
 * Errors Node raises on the socket before Fastify sees a request (timeouts, malformed HTTP) answer
 * problem+json like every other error, then close the connection. Fastify's default answers plain JSON.
 */
function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const problem = clientProblem(error);
  const body = problemBody(problem, randomUUID());
  this.log.info({ code: problem.code, instance: body.instance, remoteAddress: socket.remoteAddress }, problem.detail);
  // As Node does: never write over an answer already under way on this socket; just close it.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const json = JSON.stringify(body);
    socket.write([
      `HTTP/1.1 ${problem.status} ${body.title}`, 'Content-Type: application/problem+json', `Content-Length: ${Buffer.byteLength(json)}`,
      'Cache-Control: no-store', 'X-Content-Type-Options: nosniff', 'Connection: close', '', json,
    ].join('\r\n'));
  }
  socket.destroy(error);
}

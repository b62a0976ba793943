import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUnavailableError } from '../db/database.js';
import { setSecurityHeaders } from './security-headers.js';
import { fieldErrors, validationDetail } from './validation-errors.js';

const TITLES: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 408: 'Request Timeout', 409: 'Conflict',
  410: 'Gone', 413: 'Content Too Large', 415: 'Unsupported Media Type', 422: 'Unprocessable Content',
  429: 'Too Many Requests', 431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 503: 'Service Unavailable',
};

/** The one error type: a status, a stable snake_case code, a human detail and optional extra properties. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string | string[]> = {},
  ) {
    super(detail);
  }
}

const problemTypeUri = (code: string) => `urn:gatehouse:problem:${code}`;

/** The RFC 9457 body of a problem; `requestId` becomes its `instance`. */
export const problemBody = (problem: ProblemError, requestId: string) => ({
  type: problemTypeUri(problem.code),
  title: TITLES[problem.status] ?? 'Error',
  status: problem.status,
  detail: problem.detail,
  instance: `urn:uuid:${requestId}`,
  properties: { code: problem.code, ...problem.extra },
});

/** SCIM clients (Okta, Entra ID) read errors in SCIM's own schema: every path under /scim answers in it. */
const isScimRequest = (request: FastifyRequest) => request.url.startsWith('/scim/');

/**
 * RFC 7644 §3.12: `status` as a string, `scimType` when the problem carries one (a validation error is
 * `invalidValue`, a conflict `uniqueness`), and the detail. The problem's code stays in the log line.
 */
export function scimErrorBody(problem: ProblemError) {
  const scimType = typeof problem.extra.scimType === 'string' ? problem.extra.scimType
    : problem.status === 409 ? 'uniqueness' : problem.status === 400 ? 'invalidValue' : undefined;
  return { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: String(problem.status), ...(scimType && { scimType }), detail: problem.detail };
}

/**
 * Problems an operator watches for: throttling (429) and failed sign-ins (a locked-out account answers the
 * same code by design). They are logged at warn with what identifies the attempt, never its body.
 */
const isWarnWorthy = (problem: ProblemError) => problem.status === 429 || problem.code === 'invalid_credentials';

function send(request: FastifyRequest, reply: FastifyReply, problem: ProblemError) {
  setSecurityHeaders(reply);
  // Fastify writes "request completed" through reply.log: binding the code there puts it on that line.
  reply.log = reply.log.child({ code: problem.code });
  if (isWarnWorthy(problem)) {
    request.log.warn({ code: problem.code, status: problem.status, method: request.method, path: request.url.split('?')[0], ip: request.ip }, problem.detail);
  }
  if (problem.status === 401) reply.header('WWW-Authenticate', 'Bearer');
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  if (isScimRequest(request)) {
    return reply.code(problem.status).type('application/scim+json; charset=utf-8').serializer(JSON.stringify).send(scimErrorBody(problem));
  }
  return reply
    .code(problem.status)
    .type('application/problem+json')
    .serializer(JSON.stringify)
    .send(problemBody(problem, request.id));
}


/** Turns any thrown error into the problem it stands for; unknown errors become an opaque 500. */
function toProblem(error: FastifyError, request: FastifyRequest): ProblemError | undefined {
  if (error instanceof ProblemError) return error;
  if (error.validation) {
    const part = error.validationContext ?? 'input';
    const errors = fieldErrors(error.validation, part);
    return new ProblemError(400, 'invalid_request', validationDetail(errors, part), { errors });
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ProblemError(413, 'payload_too_large', 'The request body is larger than this endpoint accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ProblemError(415, 'unsupported_media_type',
        `The content type "${String(request.headers['content-type'] ?? '').slice(0, 100)}" is not supported: send the request body as application/json.`);
    case 'FST_ERR_BAD_URL':
      return new ProblemError(400, 'invalid_request', 'The URL is not validly percent-encoded.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ProblemError(400, 'invalid_request', 'A path segment of the URL is too long.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ProblemError(400, 'invalid_request', 'The request body is not valid JSON.');
  }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return new ProblemError(400, 'invalid_request', 'The request body is not valid JSON.');
  }
  // The client went away (or the request timeout cut it) while its body was arriving: nobody is left
  // to answer, and its ECONNRESET says nothing about the database.
  if (error.code === 'ECONNRESET' && error.message === 'aborted') {
    return new ProblemError(400, 'invalid_request', 'The connection closed before the request body arrived.');
  }
  if (isUnavailableError(error)) {
    return new ProblemError(503, 'unavailable', 'The database is unavailable; retry shortly.', {}, { 'Retry-After': '1' });
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new ProblemError(error.statusCode, 'invalid_request', error.message);
  }
  return undefined;
}

/**
 * What the log keeps of an unexpected error: its kind, message, code and stack. Driver errors carry the
 * failed statement and its parameters (emails, hashes); those never reach the log.
 */
const loggable = (error: FastifyError) => ({ type: error.name, message: error.message, code: error.code, stack: error.stack });

/** Renders a problem for any error; used by the error handler and for errors Fastify raises before routing. */
export function replyWithProblem(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const problem = toProblem(error, request);
  const instance = `urn:uuid:${request.id}`;
  if (problem) {
    if (problem.status >= 500) request.log.warn({ code: problem.code, instance, err: loggable(error) }, problem.detail);
    return send(request, reply, problem);
  }
  request.log.error({ err: loggable(error), instance }, 'unhandled error');
  return send(request, reply, new ProblemError(500, 'internal_error', 'An unexpected error occurred.'));
}

/** Registers the single error handler and the 404 handler; every error body is rendered here. */
export function registerProblemHandlers(app: FastifyInstance) {
  app.setErrorHandler(replyWithProblem);
  app.setNotFoundHandler((request, reply) =>
    send(request, reply, new ProblemError(404, 'resource_not_found', `No route ${request.method} ${request.url.split('?')[0]}.`)));
}

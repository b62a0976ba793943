import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError, replyWithProblem } from './problem.js';

/** An error raised after its attempt was counted carries the count's RateLimit header already. */
const wasCounted = (error: FastifyError) =>
  error instanceof ProblemError && Object.keys(error.headers).some((name) => name.toLowerCase() === 'ratelimit');

/**
 * The error handler of a route whose every authenticated attempt counts against a limit, attempts that
 * fail before the handler runs included (a body that is not JSON, a wrong content type, a schema
 * violation). `countFailure` counts one attempt and answers the headers to send with the error; the
 * limit's refusal it throws replaces the error, so over the limit the answer is 429 whatever else was wrong.
 */
export function countingFailedAttempts(countFailure: (request: FastifyRequest) => Promise<Record<string, string>>) {
  return async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (!request.environmentId || wasCounted(error)) return replyWithProblem(error, request, reply);
    try {
      reply.headers(await countFailure(request));
    } catch (refused) {
      return replyWithProblem(refused as FastifyError, request, reply);
    }
    return replyWithProblem(error, request, reply);
  };
}

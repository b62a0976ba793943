import { SESSION_JWT_COOKIE, type RequestLike, type SessionVerifier, type VerifiedSession } from './verify.js';

declare global {
  // Express's Request merges this interface (@types/express), so `req.gatehouse` is typed in every handler.
  // eslint-disable-next-line @typescript-eslint/no-namespace -- a global augmentation of Express can only be a namespace
  namespace Express {
    interface Request {
      /** The Gatehouse session `expressSession` found on the request; null without one (with `optional`). */
      gatehouse?: VerifiedSession | null;
    }
  }
}

/** A request a middleware of this SDK has seen: the session it found, null when it carries none. */
export interface RequestWithSession extends RequestLike { gatehouse?: VerifiedSession | null }

/**
 * The session a middleware of this SDK found on the request (Express, Fastify, or any other), null when it
 * carries none. A route behind the middleware without `optional` always has one.
 */
export const sessionOf = (request: object): VerifiedSession | null => (request as RequestWithSession).gatehouse ?? null;

/** The RFC 9457 body of the middleware's 401, in the shape Gatehouse's own errors have. */
export const unauthenticatedProblem = () => ({
  type: 'urn:gatehouse:problem:unauthenticated',
  title: 'Unauthorized',
  status: 401,
  detail: `Send a valid Gatehouse session token: "Authorization: Bearer <session JWT>", or the ${SESSION_JWT_COOKIE} cookie.`,
  properties: { code: 'unauthenticated' },
});
const PROBLEM_HEADERS = { 'content-type': 'application/problem+json', 'www-authenticate': 'Bearer' } as const;

/** What the Express middleware writes to: Node's `ServerResponse`, which Express's `Response` extends. */
export interface ResponseLike { statusCode: number; setHeader(name: string, value: string): unknown; end(body: string): unknown }

/** Express (or plain Node) middleware: `req.gatehouse` is the session; without one, a 401 problem (or the next handler with `optional`). */
export function expressSession(verifier: SessionVerifier, { optional = false } = {}) {
  return (req: RequestWithSession, res: ResponseLike, next: (err?: unknown) => void): void => {
    verifier.verify(req).then((session) => {
      req.gatehouse = session;
      if (session || optional) return next();
      res.statusCode = 401;
      for (const [name, value] of Object.entries(PROBLEM_HEADERS)) res.setHeader(name, value);
      res.end(JSON.stringify(unauthenticatedProblem()));
    }, next);
  };
}

/** What the Fastify hook writes to: the part of `FastifyReply` it uses. */
export interface ReplyLike { code(status: number): ReplyLike; header(name: string, value: string): ReplyLike; send(payload: string): unknown }

/**
 * A Fastify `onRequest` hook: `sessionOf(request)` (or `request.gatehouse`, once declared on
 * `FastifyRequest`) is the session; without one, a 401 problem (unless `optional`).
 */
export function fastifySession(verifier: SessionVerifier, { optional = false } = {}) {
  return async (request: RequestWithSession, reply: ReplyLike): Promise<void> => {
    request.gatehouse = await verifier.verify(request);
    if (request.gatehouse || optional) return;
    let answer = reply.code(401);
    for (const [name, value] of Object.entries(PROBLEM_HEADERS)) answer = answer.header(name, value);
    await answer.send(JSON.stringify(unauthenticatedProblem()));
  };
}

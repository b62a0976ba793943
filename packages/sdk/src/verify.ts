import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { GatehouseError } from './errors.js';
import type { ServerClient } from './server.js';

/** Who a verified request comes from. */
export interface VerifiedSession {
  userId: string;
  sessionId: string;
  /** The operator behind an impersonated session (the token's `act.sub`), else null. */
  actorId: string | null;
  claims: JWTPayload;
}

export interface SessionVerifierOptions {
  /** The environment's frontend URL: the tokens' issuer, where the JWKS is published. */
  frontendUrl: string;
  /**
   * With a Server API client, every token is also checked by a call (`POST /sessions/verify`), so a session
   * revoked a moment ago is refused at once; answers are cached `cacheSeconds` (default 10) per token.
   * Without one, verification is offline: the signature against the cached JWKS, the issuer and the expiry.
   */
  server?: Pick<ServerClient, 'verifySessionToken'>;
  cacheSeconds?: number;
  /**
   * How long the offline check trusts the JWKS it fetched (default 60, the environment's default JWT
   * lifetime): a key revoked in Gatehouse stops verifying within this window. A token whose `kid` is not
   * in the cached JWKS fetches it again at once (at most once every 5 s).
   */
  jwksCacheSeconds?: number;
  /** The cookie that may carry the session JWT (default `__session`); a bearer token is read first. */
  cookieName?: string;
}

/** The headers of a request, whichever framework made it (Fetch `Request`, Node's `IncomingMessage`, Express, Fastify). */
export type RequestLike = { headers: Headers | Record<string, string | string[] | undefined> };

function header(request: RequestLike, name: string): string | undefined {
  const { headers } = request;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The session JWT a request carries: `Authorization: Bearer <jwt>`, else the named cookie. */
export function sessionTokenOf(request: RequestLike, cookieName = '__session'): string | undefined {
  const bearer = /^Bearer\s+(\S+)$/i.exec(header(request, 'authorization') ?? '')?.[1];
  if (bearer) return bearer;
  for (const part of (header(request, 'cookie') ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === cookieName) return decodedCookie(value.join('='));
  }
  return undefined;
}

/** A cookie value percent-decoded; one that is not valid percent-encoding (`%`) is taken as it is, and then fails verification. */
function decodedCookie(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

const toSession = (claims: JWTPayload): VerifiedSession => ({
  userId: String(claims.sub), sessionId: String(claims.sid),
  actorId: typeof (claims.act as { sub?: unknown } | undefined)?.sub === 'string' ? (claims.act as { sub: string }).sub : null, claims,
});

/**
 * Verifies session JWTs in a customer's backend: `verify(request)` answers the session, or null when the
 * request carries no valid token (missing, malformed, expired, another issuer's, revoked when checked online).
 */
export function createSessionVerifier(options: SessionVerifierOptions) {
  const issuer = options.frontendUrl.replace(/\/$/, '');
  const jwks = createRemoteJWKSet(new URL(`${issuer}/_svc/.well-known/jwks.json`), {
    cacheMaxAge: (options.jwksCacheSeconds ?? 60) * 1000, cooldownDuration: 5000,
  });
  const cacheMs = (options.cacheSeconds ?? 10) * 1000;
  const checked = new Map<string, { session: VerifiedSession | null; until: number }>();

  async function online(token: string): Promise<VerifiedSession | null> {
    const cached = checked.get(token);
    if (cached && cached.until > Date.now()) return cached.session;
    const session = await options.server!.verifySessionToken({ token }).then(
      (answer) => toSession(answer.claims as JWTPayload),
      (err: unknown) => { if (err instanceof GatehouseError && err.status === 401) return null; throw err; },
    );
    if (checked.size > 10_000) checked.clear();
    checked.set(token, { session, until: Date.now() + cacheMs });
    return session;
  }

  async function verifyToken(token: string): Promise<VerifiedSession | null> {
    if (options.server) return online(token);
    try {
      const { payload } = await jwtVerify(token, jwks, { issuer, algorithms: ['ES256'], requiredClaims: ['sub', 'sid', 'exp'] });
      return toSession(payload);
    } catch (err) {
      // A bad token is an answer (no session); a JWKS that cannot be fetched is an outage, and says so.
      if (err instanceof joseErrors.JOSEError && !(err instanceof joseErrors.JWKSTimeout)) return null;
      throw err;
    }
  }

  return {
    verifyToken,
    verify: (request: RequestLike) => {
      const token = sessionTokenOf(request, options.cookieName);
      return token ? verifyToken(token) : Promise.resolve(null);
    },
  };
}
export type SessionVerifier = ReturnType<typeof createSessionVerifier>;

const UNAUTHENTICATED = { status: 401, body: { error: 'unauthenticated', message: 'Send a valid Gatehouse session token.' } };

/** Express middleware: `req.gatehouse` is the session; without one, 401 (or the next handler with `optional`). */
export function expressSession(verifier: SessionVerifier, { optional = false } = {}) {
  return (req: RequestLike & { gatehouse?: VerifiedSession | null }, res: { status(code: number): { json(body: unknown): unknown } }, next: (err?: unknown) => void) => {
    verifier.verify(req).then((session) => {
      req.gatehouse = session;
      if (!session && !optional) return void res.status(UNAUTHENTICATED.status).json(UNAUTHENTICATED.body);
      next();
    }, next);
  };
}

/** A Fastify `onRequest` hook: `request.gatehouse` is the session; without one, 401 (unless `optional`). */
export function fastifySession(verifier: SessionVerifier, { optional = false } = {}) {
  return async (request: RequestLike & { gatehouse?: VerifiedSession | null }, reply: { code(status: number): { send(body: unknown): unknown } }) => {
    request.gatehouse = await verifier.verify(request);
    if (!request.gatehouse && !optional) return reply.code(UNAUTHENTICATED.status).send(UNAUTHENTICATED.body);
  };
}

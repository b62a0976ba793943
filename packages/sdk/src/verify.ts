import { createRemoteJWKSet, customFetch, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { GatehouseError } from './errors.js';
import { localhostFetch } from './localhost-fetch.js';
import type { ServerClient } from './server.js';
import { SESSION_JWT_COOKIE } from './token-cache.js';

/** Who a verified request comes from. */
export interface VerifiedSession {
  userId: string;
  sessionId: string;
  /** The operator behind an impersonated session (the token's `act.sub`), else null. */
  actorId: string | null;
  /** The session's active organization (`org_id`), its user's role key there (`org_role`) and its slug (`org_slug`); null without one. */
  orgId: string | null;
  orgRole: string | null;
  orgSlug: string | null;
  claims: JWTPayload;
}

export { SESSION_JWT_COOKIE };

interface VerifierSettings {
  /** The `aud` the tokens must carry (the environment's `session.jwtAudience`); not checked when absent. */
  audience?: string | string[];
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
  /** The cookie that may carry the session JWT (default `__gatehouse_jwt`); a bearer token is read first. */
  cookieName?: string;
  /** The fetch the JWKS is read with (default: the global one, reaching `*.localhost` hosts on loopback in Node). */
  fetch?: typeof fetch;
}

/**
 * How long the offline check trusts a fetched JWKS by default: the environment's default JWT lifetime. Gatehouse
 * serves the JWKS with this max-age (JWKS_MAX_AGE_SECONDS in src/session-tokens/service.ts), so a cache in front
 * keeps it no longer.
 */
export const DEFAULT_JWKS_CACHE_SECONDS = 60;

/**
 * Where the tokens come from: the environment's frontend URL (`issuer` is that URL, `jwksUrl` its
 * `/.well-known/jwks.json`), or `issuer` and `jwksUrl` apart (a JWKS read through an internal address).
 */
export type SessionVerifierOptions = VerifierSettings & (
  | { frontendUrl: string; issuer?: string; jwksUrl?: string }
  | { frontendUrl?: undefined; issuer: string; jwksUrl: string }
);

/** The headers of a request, whichever framework made it (Fetch `Request`, Node's `IncomingMessage`, Express, Fastify). */
export type RequestLike = { headers: Headers | Record<string, string | string[] | undefined> };

function header(request: RequestLike, name: string): string | undefined {
  const { headers } = request;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Three base64url parts: the shape of a JWS. Gatehouse's opaque session token (`sess_...`) never has it. */
const looksLikeJwt = (token: string) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);

function cookie(request: RequestLike, cookieName: string): string | undefined {
  for (const part of (header(request, 'cookie') ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === cookieName) return decodedCookie(value.join('='));
  }
  return undefined;
}

/**
 * The session JWT a request carries: `Authorization: Bearer <jwt>`, else the named cookie (default
 * `__gatehouse_jwt`). A value that is not shaped as a JWT (an opaque session token) is never taken for one.
 */
export function sessionTokenOf(request: RequestLike, cookieName = SESSION_JWT_COOKIE): string | undefined {
  const bearer = /^Bearer\s+(\S+)$/i.exec(header(request, 'authorization') ?? '')?.[1];
  return [bearer, cookie(request, cookieName)].find((token) => token !== undefined && looksLikeJwt(token));
}

/** A cookie value percent-decoded; one that is not valid percent-encoding (`%`) is taken as it is, and then fails verification. */
function decodedCookie(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

const stringClaim = (value: unknown) => (typeof value === 'string' ? value : null);

const toSession = (claims: JWTPayload): VerifiedSession => ({
  userId: String(claims.sub), sessionId: String(claims.sid), actorId: stringClaim((claims.act as { sub?: unknown } | undefined)?.sub),
  orgId: stringClaim(claims.org_id), orgRole: stringClaim(claims.org_role), orgSlug: stringClaim(claims.org_slug), claims,
});

/** The issuer and the JWKS URL the options name, without a trailing slash on a frontend URL. */
function sourcesOf(options: SessionVerifierOptions): { issuer: string; jwksUrl: string } {
  const frontendUrl = options.frontendUrl?.replace(/\/$/, '');
  const issuer = options.issuer ?? frontendUrl;
  const jwksUrl = options.jwksUrl ?? (frontendUrl && `${frontendUrl}/.well-known/jwks.json`);
  if (!issuer || !jwksUrl) throw new TypeError('createSessionVerifier needs `frontendUrl`, or both `issuer` and `jwksUrl`.');
  return { issuer, jwksUrl };
}

/**
 * Verifies session JWTs in a customer's backend: `verify(request)` answers the session, or null when the
 * request carries no valid token (missing, malformed, expired, another issuer's or audience's, revoked when
 * checked online).
 */
export function createSessionVerifier(options: SessionVerifierOptions) {
  const { issuer, jwksUrl } = sourcesOf(options);
  const jwks = createRemoteJWKSet(new URL(jwksUrl), {
    cacheMaxAge: (options.jwksCacheSeconds ?? DEFAULT_JWKS_CACHE_SECONDS) * 1000, cooldownDuration: 5000, [customFetch]: options.fetch ?? localhostFetch,
  });
  const checks = { issuer, algorithms: ['ES256'], requiredClaims: ['sub', 'sid', 'exp'], ...(options.audience !== undefined && { audience: options.audience }) };
  const cacheMs = (options.cacheSeconds ?? 10) * 1000;
  const checked = new Map<string, { session: VerifiedSession | null; until: number }>();

  async function online(server: Pick<ServerClient, 'verifySessionToken'>, token: string): Promise<VerifiedSession | null> {
    const cached = checked.get(token);
    if (cached && cached.until > Date.now()) return cached.session;
    const session = await server.verifySessionToken({ token }).then(
      (answer) => audienceMatches(answer.claims as JWTPayload, options.audience) ? toSession(answer.claims as JWTPayload) : null,
      (err: unknown) => { if (err instanceof GatehouseError && err.status === 401) return null; throw err; },
    );
    if (checked.size > 10_000) checked.clear();
    checked.set(token, { session, until: Date.now() + cacheMs });
    return session;
  }

  async function verifyToken(token: string): Promise<VerifiedSession | null> {
    if (!looksLikeJwt(token)) return null;
    if (options.server) return online(options.server, token);
    try {
      return toSession((await jwtVerify(token, jwks, checks)).payload);
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

/** Whether the claims carry the expected audience (any of them), as jose checks it offline. */
function audienceMatches(claims: JWTPayload, expected: string | string[] | undefined): boolean {
  if (expected === undefined) return true;
  const held = Array.isArray(claims.aud) ? claims.aud : claims.aud === undefined ? [] : [claims.aud];
  return (Array.isArray(expected) ? expected : [expected]).some((aud) => held.includes(aud));
}

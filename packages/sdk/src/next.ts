import { unauthenticatedProblem } from './middleware.js';
import { SESSION_JWT_COOKIE } from './token-cache.js';
import { createSessionVerifier, sessionTokenOf, type SessionVerifier, type VerifiedSession } from './verify.js';

export { SESSION_JWT_COOKIE, type VerifiedSession };

export interface GatehouseNextOptions {
  /** The environment's frontend URL (default `GATEHOUSE_FRONTEND_URL`): the tokens' issuer and where the JWKS is. */
  frontendUrl?: string;
  /** A verifier of your own (online checks, other options); by default an offline one for `frontendUrl`. */
  verifier?: SessionVerifier;
  /** The cookie holding the session JWT, as the React provider's cookie mode writes it (default `__gatehouse_jwt`). */
  cookieName?: string;
  /**
   * Where a page request without a session is sent (default `/sign-in`), with `redirect_url` set to the page:
   * the path on the app's own origin, the full URL when the sign-in page is elsewhere (Gatehouse's hosted page).
   */
  signInUrl?: string;
  /** Paths open without a session: exact paths and prefixes (`/docs` covers `/docs/…`), patterns, or a test. The sign-in page always is. */
  publicRoutes?: (string | RegExp)[] | ((pathname: string) => boolean);
  /** Paths answered with a 401 problem instead of a redirect (default: `/api` and everything under it). */
  apiRoutes?: (string | RegExp)[] | ((pathname: string) => boolean);
}

const matcher = (routes: (string | RegExp)[] | ((pathname: string) => boolean)) => (pathname: string) =>
  typeof routes === 'function' ? routes(pathname) : routes.some((route) => (typeof route === 'string'
    ? pathname === route || (route !== '/' && pathname.startsWith(`${route.replace(/\/$/, '')}/`))
    : route.test(pathname)));

/** The 401 a protected route handler answers without a session: problem+json as Gatehouse's own (RFC 9457). */
export function unauthenticated(): Response {
  return new Response(JSON.stringify(unauthenticatedProblem()), {
    status: 401, headers: { 'content-type': 'application/problem+json', 'www-authenticate': 'Bearer', 'cache-control': 'no-store' },
  });
}

/**
 * Gatehouse for a Next.js App Router app: `middleware` (export it from `middleware.ts`, or `proxy.ts` on
 * Next 16) lets requests with a valid session JWT through, sends pages without one to the sign-in page and
 * answers API routes 401; `auth()` answers the session in server components, route handlers and actions.
 */
export function gatehouseNext(options: GatehouseNextOptions = {}) {
  const cookieName = options.cookieName ?? SESSION_JWT_COOKIE;
  const signInUrl = options.signInUrl ?? '/sign-in';
  const signInIsHere = signInUrl.startsWith('/');
  let verifier = options.verifier;
  // Made on first use, so a build that imports this without the variable set does not fail.
  const verifierNow = () => (verifier ??= createSessionVerifier({ frontendUrl: frontendUrlOf(options), cookieName }));
  const isPublic = matcher(options.publicRoutes ?? []);
  const isApi = matcher(options.apiRoutes ?? ['/api']);

  /** The middleware: undefined lets the request through, as `NextResponse.next()` would. */
  async function middleware(request: Request): Promise<Response | undefined> {
    const url = new URL(request.url);
    if ((signInIsHere && matcher([signInUrl.split('?')[0]!])(url.pathname)) || isPublic(url.pathname)) return undefined;
    if (await verifierNow().verify(request)) return undefined;
    if (isApi(url.pathname)) return unauthenticated();
    const target = new URL(signInUrl, url);
    target.searchParams.set('redirect_url', signInIsHere ? url.pathname + url.search : url.href);
    return new Response(null, { status: 307, headers: { location: target.href, 'cache-control': 'no-store' } });
  }

  /** The request's session (bearer token first, then the JWT cookie), null without a valid one. */
  async function auth(): Promise<VerifiedSession | null> {
    // Imported here, so that importing this module never loads Next.js outside a request.
    const { cookies, headers } = await import('next/headers.js');
    const [requestHeaders, requestCookies] = await Promise.all([headers(), cookies()]);
    const token = sessionTokenOf({ headers: { authorization: requestHeaders.get('authorization') ?? undefined } })
      ?? requestCookies.get(cookieName)?.value;
    return token ? verifierNow().verifyToken(token) : null;
  }

  return { middleware, auth, get verifier() { return verifierNow(); } };
}

function frontendUrlOf(options: GatehouseNextOptions): string {
  const frontendUrl = options.frontendUrl ?? process.env.GATEHOUSE_FRONTEND_URL;
  if (!frontendUrl) throw new Error('Gatehouse: set GATEHOUSE_FRONTEND_URL, or pass frontendUrl to gatehouseNext().');
  return frontendUrl;
}

import type { Locale } from '../i18n/catalogue.js';
import { pickLocale } from '../i18n/locale.js';
import cookie from '@fastify/cookie';
import type { FastifyContextConfig, FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { operatorCaller, systemCaller, type Caller, type RequestContext } from '../caller.js';
import { ownConnections, withConnectionOwner } from '../db/pool.js';
import { refuseForeignPreflight, registerClientCors } from './cors.js';
import { ProblemError } from './problem.js';

/**
 * What the client plane knows about the environment a request's Host header names. The environments
 * domain adds its settings to this interface (declaration merging), so routes read them typed.
 */
export interface ClientEnvironment {
  id: string;
  frontendHost: string;
  allowedOrigins: string[];
}

/** The signed-in session of a client-plane request. */
export interface SessionContext {
  id: string;
  userId: string;
  /** The operator behind an impersonated session, when there is one. */
  impersonatorId: string | null;
  /** Whether that operator is a user of the environment or a dashboard operator (null when nobody impersonates). */
  impersonatorType?: 'user' | 'operator' | null;
  /** Whether the user proved who they are (password, second factor) in this session within the last 10 minutes. */
  recentlyAuthenticated: boolean;
  /** The environment requires a second factor and the user has none yet: the session may only enrol one. */
  enrolmentOnly: boolean;
}

/** The operator signed in to the dashboard, on an admin or Server API request that their session cookie authenticated. */
export interface OperatorContext {
  /** The operator's id (a user of the reserved operators' environment). */
  id: string;
  sessionId: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An impersonated session may not call this route (403 impersonation_restricted): see NOT_UNDER_IMPERSONATION. */
    notUnderImpersonation?: true;
    /** Only a recently authenticated session may call this route (403 reauthentication_required): see RECENTLY_AUTHENTICATED. */
    recentAuthentication?: true;
    /** A session held to enrolling a second factor may call this route: see OPEN_DURING_ENROLMENT. */
    openDuringEnrolment?: true;
    /**
     * A route another site's page posts to by design (a SAML IdP's form to the ACS): the client plane's Origin
     * check does not apply. Such a route must authenticate what is posted by itself, and never read the session.
     */
    postedByOtherSites?: true;
  }
  interface FastifyRequest {
    /** Set by every plane's auth hook; routes read it and never authenticate themselves. */
    environmentId: string;
    /** Set by the Server API hook: the id (never the secret) of the key that authenticated the request. */
    secretKeyId: string;
    clientEnvironment: ClientEnvironment;
    session: SessionContext | null;
    /** Set by the admin and Server API hooks when an operator's session cookie (not a token) authenticated the request. */
    operator: OperatorContext | null;
  }
}

export const SESSION_COOKIE = '__session';

/**
 * The route option of what an operator acting as a user may not do: end the user's other sessions,
 * delete an organization, and (as they arrive) change credentials, factors or email addresses, or delete
 * the account. Support sees and fixes; it does not lock the user out or destroy their data.
 */
export const NOT_UNDER_IMPERSONATION = { notUnderImpersonation: true } as const;

/**
 * The route option of a sensitive change (an address made primary, the account deleted, a data request):
 * a stolen session, or one left open on a shared computer, must not do it without the password. A
 * session started by a password, OAuth or second factor counts for 10 minutes; POST /_svc/me/reauthenticate renews it.
 */
export const RECENTLY_AUTHENTICATED = { recentAuthentication: true } as const;

/**
 * The route option of what a session held to enrolment may do (policy mfa "required", no factor yet):
 * read who it is, enrol a second factor or a passkey, sign out. Everything else is 403 mfa_enrolment_required.
 */
export const OPEN_DURING_ENROLMENT = { openDuringEnrolment: true } as const;

/**
 * Declares the per-request fields once at the root so every request has the same shape, and runs each
 * request in a store where its plane records the environment whose share of connections it uses.
 */
export function decorateRequests(app: FastifyInstance) {
  app.addHook('onRequest', (_request, _reply, done) => withConnectionOwner(done));
  app.decorateRequest('environmentId', '');
  app.decorateRequest('secretKeyId', '');
  app.decorateRequest('clientEnvironment', null as unknown as ClientEnvironment);
  app.decorateRequest('session', null);
  app.decorateRequest('operator', null);
}

const unauthenticated = (detail: string) => new ProblemError(401, 'unauthenticated', detail);
export const reauthenticationRequired = () => new ProblemError(403, 'reauthentication_required',
  'This change needs a recent sign-in: confirm the password with POST /_svc/me/reauthenticate {password}, then try again within 10 minutes.');

/** The rules a route sets on what a session may do there (the options above). */
export type SessionRules = Pick<FastifyContextConfig, 'notUnderImpersonation' | 'recentAuthentication' | 'openDuringEnrolment'>;

/**
 * Refuses a session what a route's rules keep from it. The client plane's hook asks this of every signed-in
 * request; a hosted page's step asks it with the rules of the client-plane route it stands for.
 */
export function assertSessionMay(session: SessionContext, rules: SessionRules) {
  if (session.impersonatorId && rules.notUnderImpersonation) {
    throw new ProblemError(403, 'impersonation_restricted', 'An impersonated session cannot do this: it is the user\'s own to do (ending sessions, deleting an organization, changing credentials).');
  }
  if (session.enrolmentOnly && !rules.openDuringEnrolment) {
    throw new ProblemError(403, 'mfa_enrolment_required',
      'This environment requires a second factor: enrol one (POST /_svc/me/mfa/totp, then confirm it) before anything else.');
  }
  if (!session.recentlyAuthenticated && rules.recentAuthentication) throw reauthenticationRequired();
}

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * The OpenAPI security each plane states on its operations, by the names of the document's security
 * schemes; an empty list says "no credentials". Set by each plane as its routes register, so a route can
 * never be documented under another plane's scheme.
 */
export const PLANE_SECURITY = {
  server: [{ secretKey: [] }, { operatorSession: [], operatorEnvironment: [] }],
  admin: [{ adminToken: [] }, { operatorSession: [] }],
  clientPublic: [],
  clientSession: [{ sessionCookie: [] }, { sessionToken: [] }],
} as const;

function documentSecurity(app: FastifyInstance, security: readonly object[]) {
  app.addHook('onRoute', (route) => { route.schema = { ...route.schema, security } as typeof route.schema; });
}

export interface SecretKeyAuthenticator {
  (secretKey: string): Promise<{ environmentId: string; keyId: string } | undefined>;
}

/** The operators' session cookie: sent to the admin API and the Server API (both under /api), never readable by scripts. */
export const OPERATOR_COOKIE = 'gatehouse_operator';
/** The header naming the environment a Server API request with an operator's session acts in. */
export const ENVIRONMENT_HEADER = 'gatehouse-environment';

/** What the admin and Server API planes need to know of operators (the operators domain answers). */
export interface OperatorAuthenticator {
  /** The operator of a session token; undefined when invalid, expired or revoked. */
  authenticate(token: string): Promise<OperatorContext | undefined>;
  /** Whether an id names a customer's environment (not missing, not reserved). */
  isCustomerEnvironment(id: string): Promise<boolean>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * CSRF defence for a change authenticated by the operator's cookie, beyond its SameSite=Strict: the request
 * must carry an Origin, and it must be the service's own (the host the request came to, over either scheme).
 */
function refuseCrossSiteChange(request: FastifyRequest) {
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.origin;
  if (origin === undefined) throw new ProblemError(403, 'forbidden', 'A change made with the operator session cookie must carry an Origin header.');
  refuseForeignOrigin(request);
}

/** An Origin that is not the service's own base URL (the host the request came to) is refused on any change. */
function refuseForeignOrigin(request: FastifyRequest) {
  const origin = request.headers.origin;
  if (SAFE_METHODS.has(request.method) || origin === undefined) return;
  const host = request.headers.host ?? '';
  if (origin !== `http://${host}` && origin !== `https://${host}`) {
    throw new ProblemError(403, 'forbidden', `Origin ${origin} is not this service's own origin; the operator API takes changes from the dashboard only.`);
  }
}

/** The operator of the request's session cookie, or 401. */
async function operatorOf(request: FastifyRequest, operators: OperatorAuthenticator, token: string): Promise<OperatorContext> {
  const operator = await operators.authenticate(token);
  if (!operator) throw unauthenticated('The operator session is invalid, expired or revoked: sign in again (POST /api/admin/v1/operator-sessions).');
  refuseCrossSiteChange(request);
  request.operator = operator;
  return operator;
}

/** A Server API request made with an operator's session: the environment comes from the Gatehouse-Environment header. */
async function operatorServerRequest(request: FastifyRequest, operators: OperatorAuthenticator, token: string) {
  await operatorOf(request, operators, token);
  const named = request.headers[ENVIRONMENT_HEADER];
  if (typeof named !== 'string' || named === '') {
    throw new ProblemError(400, 'environment_required', 'With an operator session, name the environment to act in: send "Gatehouse-Environment: <environment id>".');
  }
  if (!UUID.test(named) || !(await operators.isCustomerEnvironment(named))) {
    throw new ProblemError(404, 'resource_not_found', `No environment with the id "${named}" (the Gatehouse-Environment header).`);
  }
  request.environmentId = named;
  ownConnections(named);
}

/**
 * The Server API: every request carries the environment's secret key as a bearer token; or, with `operators`,
 * an operator's session cookie and the Gatehouse-Environment header (the dashboard holds no secret key).
 */
export function serverPlane(authenticate: SecretKeyAuthenticator, routes: FastifyPluginAsync[], operators?: OperatorAuthenticator): FastifyPluginAsync {
  return async (app) => {
    documentSecurity(app, PLANE_SECURITY.server);
    if (operators) await app.register(cookie);
    app.addHook('onRequest', async (request) => {
      const token = bearerToken(request);
      const operatorToken = operators && !token ? request.cookies[OPERATOR_COOKIE] : undefined;
      if (operatorToken) return operatorServerRequest(request, operators!, operatorToken);
      if (!token) throw unauthenticated('Send the secret key as "Authorization: Bearer <secret key>".');
      const key = await authenticate(token);
      if (!key) throw unauthenticated('The secret key is invalid or revoked.');
      request.environmentId = key.environmentId;
      request.secretKeyId = key.keyId;
      ownConnections(key.environmentId);
    });
    for (const plugin of routes) await app.register(plugin);
  };
}

/** Where a request comes from, as sessions and the audit trail keep it: the client IP and its user agent, cut to 512 characters. */
export const requestContext = (request: FastifyRequest): RequestContext =>
  ({ ipAddress: request.ip, userAgent: request.headers['user-agent']?.slice(0, 512) ?? null });

/** The language a request's Accept-Language asks for (en or da, else en): mail to someone who is not a user yet is written in it. */
export const acceptedLocale = (request: FastifyRequest): Locale => pickLocale({ acceptLanguage: request.headers['accept-language'] });

/** The session of a request on the signed-in part of the client plane, whose hook has set it. */
export function signedIn(request: FastifyRequest): SessionContext {
  if (!request.session) throw new Error(`${request.method} ${request.routeOptions.url} is served outside the signed-in client plane`);
  return request.session;
}

/** The caller of a Server API request: the secret key that authenticated it, or the operator whose session did. */
export const serverCaller = (request: FastifyRequest): Caller => (request.operator
  ? operatorCaller(request.operator.id, 'server_api', requestContext(request))
  : { actor: { type: 'api_key', id: request.secretKeyId, impersonatorId: null }, context: requestContext(request), via: 'server_api' });

/** The caller of a signed-in client-plane request: the user, and the operator when the session is impersonated. */
export function clientCaller(request: FastifyRequest): Caller {
  const { userId, impersonatorId } = signedIn(request);
  return { actor: { type: 'user', id: userId, impersonatorId }, context: requestContext(request), via: 'client_api' };
}

/** The caller of an admin-plane request: the signed-in operator, or the system for the admin token (whoever holds it). */
export const adminCaller = (request: FastifyRequest): Caller => (request.operator
  ? operatorCaller(request.operator.id, 'admin_api', requestContext(request))
  : systemCaller('admin_api', requestContext(request)));

/** The operator of a request on the admin plane that needs one (their own session, factors). */
export function signedInOperator(request: FastifyRequest): OperatorContext {
  if (!request.operator) throw new ProblemError(403, 'operator_session_required', 'Only a signed-in operator can do this; the admin token names no operator.');
  return request.operator;
}

export interface AdminPlaneRoutes {
  /** Routes that work without credentials (operator sign-in, its second step, setting a first password). */
  publicRoutes: FastifyPluginAsync[];
  /** Routes that need the admin token or an operator's session. */
  routes: FastifyPluginAsync[];
}

/**
 * The admin plane: only when GATEHOUSE_ADMIN_TOKEN is set, with that token as bearer, or an operator's session
 * cookie (the dashboard). A reserved environment's id is as unknown here as a missing one.
 */
export function adminPlane(adminToken: string, compare: (a: string, b: string) => boolean, operators: OperatorAuthenticator, planeRoutes: AdminPlaneRoutes): FastifyPluginAsync {
  return async (app) => {
    await app.register(cookie);
    await app.register(async (open) => {
      documentSecurity(open, PLANE_SECURITY.clientPublic);
      open.addHook('onRequest', async (request) => refuseForeignOrigin(request));
      for (const plugin of planeRoutes.publicRoutes) await open.register(plugin);
    });
    await app.register(async (guarded) => {
      documentSecurity(guarded, PLANE_SECURITY.admin);
      guarded.addHook('onRequest', async (request) => {
        const token = bearerToken(request);
        const operatorToken = token ? undefined : request.cookies[OPERATOR_COOKIE];
        if (operatorToken) return void await operatorOf(request, operators, operatorToken);
        if (!token || !compare(token, adminToken)) {
          throw unauthenticated('Send the admin token as "Authorization: Bearer <GATEHOUSE_ADMIN_TOKEN>", or sign in as an operator (POST /api/admin/v1/operator-sessions).');
        }
      });
      guarded.addHook('preHandler', async (request) => {
        const { id } = (request.params ?? {}) as { id?: unknown };
        if (request.routeOptions.url?.startsWith('/api/admin/v1/environments/:id') && typeof id === 'string' && !(await operators.isCustomerEnvironment(id))) {
          throw new ProblemError(404, 'resource_not_found', 'No environment with this id.');
        }
      });
      for (const plugin of planeRoutes.routes) await guarded.register(plugin);
    });
  };
}

export interface ClientPlaneDeps {
  resolveEnvironment(host: string): Promise<ClientEnvironment | undefined>;
  authenticateSession(environmentId: string, token: string): Promise<SessionContext | undefined>;
  /** Routes that work without a session (sign-up, sign-in, ...). */
  publicRoutes: FastifyPluginAsync[];
  /** Routes that need a signed-in user. */
  sessionRoutes: FastifyPluginAsync[];
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const SESSION_COOKIE_PAIR = new RegExp(`(?:^|;)\\s*${SESSION_COOKIE}=`, 'g');

/**
 * Cookie tossing: a page on a sibling subdomain can set a second `__session` (say with Path=/_svc, which
 * browsers send first), and a server that took the first one would act inside the attacker's account. A
 * request with more than one is refused, and every variant the tossed cookie may have (each path prefix
 * of the request, the host and its parent domains) is expired: the browser drops the one that matches.
 */
function refuseTossedCookies(request: FastifyRequest) {
  const count = request.headers.cookie?.match(SESSION_COOKIE_PAIR)?.length ?? 0;
  if (count < 2) return;
  const hostname = (request.headers.host ?? '').replace(/:\d+$/, '');
  const labels = hostname.split('.');
  const domains = [undefined, ...labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'))];
  const segments = request.url.split('?')[0]!.split('/').filter(Boolean);
  const paths = ['/', ...segments.map((_, i) => `/${segments.slice(0, i + 1).join('/')}`)];
  const expired = domains.flatMap((domain) => paths.map((path) =>
    `${SESSION_COOKIE}=; Max-Age=0; Path=${path}${domain ? `; Domain=${domain}` : ''}; HttpOnly; Secure; SameSite=Lax`));
  throw new ProblemError(400, 'duplicate_session_cookie',
    `The request carries ${count} ${SESSION_COOKIE} cookies, so which session it means is unknown (a page on another subdomain may have set one). `
    + 'They have been expired: sign in again.', {}, { 'Set-Cookie': expired });
}

/**
 * The origins the client plane accepts beyond the allowed-origins list (the escape hatch): the
 * environment's own frontend host, over http and https, where its hosted pages and a same-host app run.
 * They pass the Origin check of a state change; they are not CORS origins nor redirect targets.
 */
export const escapeHatchOrigins = (frontendHost: string) => [`http://${frontendHost}`, `https://${frontendHost}`];

function allowedOriginsOf(env: ClientEnvironment): Set<string> {
  return new Set([...escapeHatchOrigins(env.frontendHost), ...env.allowedOrigins]);
}

/** Sets the environment the request's Host header names; an unknown host is 404. */
async function environmentOfHost(request: FastifyRequest, resolve: ClientPlaneDeps['resolveEnvironment']): Promise<ClientEnvironment> {
  const host = request.headers.host ?? '';
  const env = await resolve(host);
  if (!env) throw new ProblemError(404, 'resource_not_found', `No environment serves the host "${host}".`);
  request.clientEnvironment = env;
  request.environmentId = env.id;
  ownConnections(env.id);
  return env;
}

/**
 * The root of each frontend host, outside `/_svc`: public documents only (OIDC discovery and the JWKS, where
 * OpenID Connect Discovery looks for them under the issuer). The environment comes from the Host header, as on
 * the client plane; no cookies, no CORS, and no preflight route that would also answer paths of the other planes.
 */
export function frontendRoot(resolveEnvironment: ClientPlaneDeps['resolveEnvironment'], routes: FastifyPluginAsync[]): FastifyPluginAsync {
  return async (app) => {
    documentSecurity(app, PLANE_SECURITY.clientPublic);
    app.addHook('onRequest', async (request) => { await environmentOfHost(request, resolveEnvironment); });
    for (const plugin of routes) await app.register(plugin);
  };
}

/**
 * The client plane: the environment comes from the Host header; a session from the `__session`
 * cookie (browsers) or a bearer session token (native apps). A state change carrying a foreign Origin
 * is refused, and a cookie-authenticated one must carry an allowed Origin (CSRF defence).
 */
export function clientPlane(deps: ClientPlaneDeps): FastifyPluginAsync {
  return async (app) => {
    documentSecurity(app, PLANE_SECURITY.clientPublic);
    app.addHook('onRequest', async (request) => {
      const env = await environmentOfHost(request, deps.resolveEnvironment);
      refuseForeignPreflight(request, env);
      const origin = request.headers.origin;
      if (!SAFE_METHODS.has(request.method) && origin !== undefined && !allowedOriginsOf(env).has(origin) && !request.routeOptions.config.postedByOtherSites) {
        throw new ProblemError(403, 'forbidden', `Origin ${origin} is not allowed for this environment.`);
      }
    });
    // Only the client plane reads cookies; the other planes skip parsing them.
    await app.register(cookie);
    await registerClientCors(app);
    for (const plugin of deps.publicRoutes) await app.register(plugin);
    await app.register(async (signedIn) => {
      documentSecurity(signedIn, PLANE_SECURITY.clientSession);
      signedIn.addHook('onRequest', async (request) => {
        const bearer = bearerToken(request);
        if (!bearer) refuseTossedCookies(request);
        const cookie = bearer ? undefined : request.cookies[SESSION_COOKIE];
        const token = bearer ?? cookie;
        if (!token) throw unauthenticated('Sign in first: no session cookie or bearer session token was sent.');
        const session = await deps.authenticateSession(request.environmentId, token);
        if (!session) throw unauthenticated('The session is invalid, expired or revoked.');
        if (cookie && !SAFE_METHODS.has(request.method) && request.headers.origin === undefined) {
          throw new ProblemError(403, 'forbidden', 'A cookie-authenticated change must carry an Origin header.');
        }
        assertSessionMay(session, request.routeOptions.config);
        request.session = session;
      });
      for (const plugin of deps.sessionRoutes) await signedIn.register(plugin);
    });
  };
}

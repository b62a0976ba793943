import { decodeJwt, type JWTPayload } from 'jose';
import type { ClientPlane } from './client-plane.js';
import { GatehouseError } from './errors.js';
import { OPERATIONS } from './generated/operations.js';
import { createSessionTokenCache, SESSION_JWT_COOKIE, type CachedToken } from './token-cache.js';
import type { components } from './types.js';

export type GatehouseUser = components['schemas']['CurrentUser'];
/** One of the user's organizations, with the user's `role` in it. */
export type GatehouseOrganization = components['schemas']['ClientOrganization'];

/** The signed-in session, as its JWT's claims tell it. */
export interface GatehouseSession {
  id: string;
  userId: string;
  /** The operator behind an impersonated session (`act.sub`), else null. */
  actorId: string | null;
  /** The session's active organization (`org_id`), null when it has none. */
  organizationId: string | null;
  claims: JWTPayload;
}

/** Cookie mode: the session JWT also goes into a first-party cookie, for the app's server to read when it renders. */
export interface CookieModeOptions {
  /** Default `__gatehouse_jwt`. */
  name?: string | undefined;
  domain?: string | undefined;
  /** Default `/`. */
  path?: string | undefined;
}

export interface SessionState {
  /** undefined while loading, null when signed out. */
  user: GatehouseUser | null | undefined;
  session: GatehouseSession | null;
  /** undefined until asked for (`loadOrganizations`), null when signed out. */
  organizations: GatehouseOrganization[] | null | undefined;
  /** The last failure to reach Gatehouse (not a signed-out answer), null once a load succeeds. */
  error: unknown;
}

export interface SessionStoreOptions {
  client: ClientPlane;
  cookie?: CookieModeOptions | null;
  refreshBeforeSeconds?: number | undefined;
  now?: () => number;
}

const sessionOf = (claims: JWTPayload): GatehouseSession => ({
  id: String(claims.sid), userId: String(claims.sub),
  actorId: typeof (claims.act as { sub?: unknown } | undefined)?.sub === 'string' ? (claims.act as { sub: string }).sub : null,
  organizationId: typeof claims.org_id === 'string' ? claims.org_id : null,
  claims,
});

/** A call's answer, or null when Gatehouse says there is no session (401). */
const nullWhenSignedOut = <T>(call: Promise<T>): Promise<T | null> =>
  call.catch((err: unknown) => { if (err instanceof GatehouseError && err.status === 401) return null; throw err; });

/** Written when a token arrives, so it lives as long as the token (the cache measured that; no clock read here). */
function writeJwtCookie(options: CookieModeOptions, token: CachedToken | null) {
  const attributes = [`Path=${options.path ?? '/'}`, `Max-Age=${token ? Math.floor(token.lifetimeMs / 1000) : 0}`, 'SameSite=Lax'];
  if (options.domain) attributes.push(`Domain=${options.domain}`);
  // Typed here rather than through the DOM library, so the published types need no `dom` lib.
  const page = globalThis as unknown as { location?: { protocol: string }; document: { cookie: string } };
  if (page.location?.protocol === 'https:') attributes.push('Secure');
  page.document.cookie = [`${options.name ?? SESSION_JWT_COOKIE}=${token?.token ?? ''}`, ...attributes].join('; ');
}

/** Every page of the user's organizations. */
async function allOrganizations(client: ClientPlane): Promise<GatehouseOrganization[]> {
  const items: GatehouseOrganization[] = [];
  for (let cursor: string | undefined; ;) {
    const page = await client.listMyOrganizations({ limit: 100, ...(cursor && { cursor }) });
    items.push(...page.items);
    if (!page.hasMore || !page.nextCursor) return items;
    cursor = page.nextCursor;
  }
}

/**
 * The signed-in user, session and organizations of a browser app, framework-free (the React provider
 * renders it): `start()` loads them, the token cache keeps the session JWT, and `client` is the client
 * plane whose session-starting operations (sign-in, sign-up, second factor, passkey, ...) and `signOut`
 * update the state.
 */
export function createSessionStore(options: SessionStoreOptions) {
  let state: SessionState = { user: undefined, session: null, organizations: undefined, error: null };
  const listeners = new Set<() => void>();
  let loads = 0;
  let organizationsFor: string | null = null;
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;

  function update(change: Partial<SessionState>) {
    state = { ...state, ...change };
    for (const listener of listeners) listener();
  }

  const cache = createSessionTokenCache({
    mint: () => nullWhenSignedOut(options.client.createSessionToken()),
    ...(options.refreshBeforeSeconds !== undefined && { refreshBeforeSeconds: options.refreshBeforeSeconds }),
    ...(options.now && { now: options.now }),
    onChange: (token) => {
      update({ session: token ? sessionOf(decodeJwt(token.token)) : null });
      if (options.cookie) {
        writeJwtCookie(options.cookie, token);
        scheduleRefresh();
      }
    },
  });

  /** Cookie mode keeps the cookie fresh for server rendering: a refresh when due, again 5 s after a failure. */
  function scheduleRefresh(delayMs = cache.refreshInMs()) {
    clearTimeout(refreshTimer);
    if (delayMs === null) return;
    refreshTimer = setTimeout(() => { cache.getToken().catch(() => scheduleRefresh(5000)); }, delayMs);
  }

  async function getToken(tokenOptions?: { skipCache?: boolean }): Promise<string | null> {
    const token = await cache.getToken(tokenOptions);
    if (token === null && state.user) update({ user: null, organizations: null });
    return token;
  }

  /** Loads the user and the session; only the latest load may set them, so a sign-in during the first load stands. */
  async function reload(): Promise<void> {
    const load = ++loads;
    cache.clear({ untilNextAnswer: true });
    try {
      const [me, token] = await Promise.all([nullWhenSignedOut(options.client.getMe()), cache.getToken()]);
      if (load === loads) update({ user: me && token ? me : null, error: null });
    } catch (err) {
      if (load === loads) update({ user: null, error: err });
    }
    if (load === loads && organizationsFor !== null) await loadOrganizations({ force: true });
  }

  function signedOut() {
    loads++;
    cache.clear();
    update({ user: null, organizations: null });
  }

  /** The user's organizations, fetched once per session unless forced (after creating or leaving one). */
  async function loadOrganizations({ force = false } = {}): Promise<void> {
    const sessionId = state.session?.id ?? '';
    if (!force && organizationsFor === sessionId) return;
    organizationsFor = sessionId;
    if (!state.user) return update({ organizations: state.user === null ? null : undefined });
    try {
      const organizations = await allOrganizations(options.client);
      if (organizationsFor === sessionId) update({ organizations });
    } catch (err) {
      update({ error: err });
    }
  }

  return {
    client: followingClient(options.client, { reload, signedOut, reissueToken: () => cache.getToken({ skipCache: true }) }),
    getState: (): SessionState => state,
    subscribe(listener: () => void) {
      listeners.add(listener);
      return () => { listeners.delete(listener); };
    },
    getToken,
    reload,
    loadOrganizations,
    signOut: async () => { await options.client.signOut(); signedOut(); },
    /** Loads the state; `stop()` ends the refresh timer and drops what is still on its way. */
    start: () => reload(),
    stop() {
      loads++;
      clearTimeout(refreshTimer);
    },
  };
}
export type SessionStore = ReturnType<typeof createSessionStore>;

interface Followers { reload: () => Promise<void>; signedOut: () => void; reissueToken: () => Promise<unknown> }

/** The client plane, with the calls that change the session (start, end, active organization) updating the state. */
function followingClient(client: ClientPlane, { reload, signedOut, reissueToken }: Followers): ClientPlane {
  const following: Record<string, unknown> = { ...client };
  for (const [id, operation] of Object.entries(OPERATIONS)) {
    if (operation.plane !== 'client' || !(operation.startsSession || id === 'signOut' || id === 'setActiveOrganization')) continue;
    const method = (client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[id]!;
    following[id] = async (...args: unknown[]) => {
      const answer = await method(...args);
      // A sign-in answering a second-factor challenge has no session yet: nothing changed.
      if (id === 'signOut') signedOut();
      // The next JWT carries the organization claims (org_id, org_role, org_slug): do not wait for the cached one to expire.
      else if (id === 'setActiveOrganization') await reissueToken();
      else if (typeof answer === 'object' && answer !== null && 'session' in answer) await reload();
      return answer;
    };
  }
  return following as unknown as ClientPlane;
}

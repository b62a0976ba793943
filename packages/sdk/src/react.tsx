'use client';
import { createContext, useContext, useEffect, useMemo, useSyncExternalStore, type ReactNode } from 'react';
import { createClientPlane, type ClientPlane } from './client-plane.js';
import { createSessionStore, type CookieModeOptions, type SessionState, type SessionStore } from './session-store.js';

export { SESSION_JWT_COOKIE } from './token-cache.js';
export type { CookieModeOptions, GatehouseOrganization, GatehouseSession, GatehouseUser } from './session-store.js';

export interface GatehouseProviderProps {
  /** The environment's frontend URL; or pass a `client` made with `createClientPlane`. */
  frontendUrl?: string;
  client?: ClientPlane;
  /** Cookie mode: keep the session JWT in a first-party cookie too, refreshed before it expires (`true` for the defaults). */
  cookie?: boolean | CookieModeOptions;
  /** How long before expiry a token is replaced (default 15 s, at most half its lifetime). */
  refreshBeforeSeconds?: number | undefined;
  children?: ReactNode;
}

const StoreContext = createContext<SessionStore | null>(null);

/** Loads the signed-in user and session once, and holds them for the hooks below. */
export function GatehouseProvider({ frontendUrl, client, cookie, refreshBeforeSeconds, children }: GatehouseProviderProps) {
  if (!client && !frontendUrl) throw new Error('GatehouseProvider needs frontendUrl or client.');
  // The store lives as long as its options: compared one by one, so an inline `cookie={{ name }}` keeps it.
  const cookieOn = Boolean(cookie);
  const { name, domain, path } = cookie === true ? {} : cookie || {};
  const store = useMemo(() => createSessionStore({
    client: client ?? createClientPlane({ frontendUrl: frontendUrl! }),
    cookie: cookieOn ? { name, domain, path } : null,
    refreshBeforeSeconds,
  }), [client, frontendUrl, cookieOn, name, domain, path, refreshBeforeSeconds]);
  useEffect(() => {
    void store.start();
    return store.stop;
  }, [store]);
  return <StoreContext.Provider value={store}>{children}</StoreContext.Provider>;
}

function useStore(): [SessionStore, SessionState] {
  const store = useContext(StoreContext);
  if (!store) throw new Error('Gatehouse hooks must be used inside <GatehouseProvider>.');
  return [store, useSyncExternalStore(store.subscribe, store.getState, store.getState)];
}

/**
 * The session and what to call with it: `getToken()` answers the session JWT for your backend (cached,
 * refreshed before it expires, one request for concurrent callers; `{ skipCache: true }` for a new one),
 * null when signed out.
 */
export function useAuth() {
  const [store, { user, session, error }] = useStore();
  return {
    isLoaded: user !== undefined, isSignedIn: Boolean(user), userId: user?.id ?? null, sessionId: session?.id ?? null,
    actorId: session?.actorId ?? null, organizationId: session?.organizationId ?? null, error,
    getToken: store.getToken, signOut: store.signOut, reload: store.reload,
  };
}

/** The session (`id`, `userId`, `actorId`, `organizationId`, `claims`), null when signed out. */
export function useSession() {
  const [, { user, session }] = useStore();
  return { isLoaded: user !== undefined, isSignedIn: Boolean(user), session: user ? session : null };
}

/** The signed-in user (`GET /_svc/me`), null when signed out. */
export function useUser() {
  const [, { user }] = useStore();
  return { isLoaded: user !== undefined, isSignedIn: Boolean(user), user: user ?? null };
}

/**
 * The user's organizations (loaded the first time a component asks; `reload()` after changing them), and
 * the session's active one (its JWT's `org_id`), else null.
 */
export function useOrganization() {
  const [store, { organizations, session }] = useStore();
  useEffect(() => { void store.loadOrganizations(); }, [store, session?.id]);
  return {
    isLoaded: organizations !== undefined,
    organizations: organizations ?? [],
    organization: organizations?.find((candidate) => candidate.id === session?.organizationId) ?? null,
    reload: () => store.loadOrganizations({ force: true }),
    /** Makes one of the user's organizations the session's active one (null: none); its JWTs then carry it. */
    setActive: (organizationId: string | null) => store.client.setActiveOrganization({ organizationId }),
  };
}

/**
 * The client plane for every other call (`signIn`, `signUp`, `updateMe`, `createMyOrganization`, ...). A call
 * that starts a session, and `signOut`, update the hooks.
 */
export function useGatehouseClient(): ClientPlane {
  return useStore()[0].client;
}

import { GatehouseError, type ClientPlane } from '@gatehouse/sdk';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createSessionStore } from '../../packages/sdk/src/session-store.js';

const KEY = new TextEncoder().encode('the store reads the claims, never checks them');
const USER = { id: 'user-1', email: 'ada@example.com' };
const ORGS = [{ id: 'org-1', name: 'Acme', role: 'owner' }, { id: 'org-2', name: 'Globex', role: 'member' }];
const unauthenticated = () => new GatehouseError(401, 'unauthenticated', 'no session');

const jwt = (claims: Record<string, unknown> = {}) =>
  new SignJWT({ sid: 'sess-1', ...claims }).setProtectedHeader({ alg: 'HS256' }).setSubject(USER.id).setIssuedAt().setExpirationTime('60s').sign(KEY);

/** A client plane answering as Gatehouse would for a browser that is signed in while `signedIn` is true. */
function fakeClient(state: { signedIn: boolean; claims?: Record<string, unknown> }) {
  const calls: string[] = [];
  const whenSignedIn = <T>(name: string, answer: () => T | Promise<T>) => async () => {
    calls.push(name);
    if (!state.signedIn) throw unauthenticated();
    return answer();
  };
  const client = {
    getMe: whenSignedIn('getMe', () => USER),
    createSessionToken: whenSignedIn('createSessionToken', async () => ({ token: await jwt(state.claims) })),
    listMyOrganizations: whenSignedIn('listMyOrganizations', () => ({ items: ORGS, nextCursor: null, hasMore: false })),
    signIn: async () => { calls.push('signIn'); state.signedIn = true; return { user: USER, session: { id: 'sess-1' } }; },
    signOut: async () => { calls.push('signOut'); state.signedIn = false; },
    setActiveOrganization: async ({ organizationId }: { organizationId: string | null }) => {
      calls.push('setActiveOrganization');
      state.claims = organizationId ? { org_id: organizationId } : {};
      return { id: 'sess-1', activeOrganizationId: organizationId };
    },
  };
  return { client: client as unknown as ClientPlane, calls };
}

describe('the session store behind the React hooks', () => {
  it('loads the user and the session of a signed-in browser', async () => {
    const { client } = fakeClient({ signedIn: true, claims: { act: { sub: 'operator-1' } } });
    const store = createSessionStore({ client });
    expect(store.getState().user).toBeUndefined();
    await store.start();
    expect(store.getState()).toMatchObject({ user: USER, session: { id: 'sess-1', userId: USER.id, actorId: 'operator-1', organizationId: null }, error: null });
  });

  it('is signed out when Gatehouse answers 401, and follows a sign-in through its client', async () => {
    const { client } = fakeClient({ signedIn: false });
    const store = createSessionStore({ client });
    const seen: unknown[] = [];
    store.subscribe(() => seen.push(store.getState().user));
    await store.start();
    expect(store.getState()).toMatchObject({ user: null, session: null, error: null });
    await store.client.signIn({ email: USER.email, password: 'x' });
    expect(store.getState()).toMatchObject({ user: USER, session: { id: 'sess-1' } });
    expect(seen.at(-1)).toEqual(USER);
  });

  it('forgets the user, the session and the token on signOut', async () => {
    const { client, calls } = fakeClient({ signedIn: true });
    const store = createSessionStore({ client });
    await store.start();
    await store.client.signOut();
    expect(store.getState()).toMatchObject({ user: null, session: null, organizations: null });
    expect(await store.getToken()).toBeNull();
    expect(calls.filter((call) => call === 'createSessionToken')).toHaveLength(2);
  });

  it('turns signed out when getToken finds the session gone (revoked elsewhere)', async () => {
    const state = { signedIn: true };
    const { client } = fakeClient(state);
    const store = createSessionStore({ client });
    await store.start();
    state.signedIn = false;
    expect(await store.getToken({ skipCache: true })).toBeNull();
    expect(store.getState().user).toBeNull();
  });

  it("lists the user's organizations once asked, and names the session's active one from org_id", async () => {
    const { client, calls } = fakeClient({ signedIn: true, claims: { org_id: 'org-2', org_role: 'member', org_slug: 'globex' } });
    const store = createSessionStore({ client });
    await store.start();
    expect(calls).not.toContain('listMyOrganizations');
    await store.loadOrganizations();
    await store.loadOrganizations();
    expect(store.getState().organizations).toEqual(ORGS);
    expect(store.getState().session?.organizationId).toBe('org-2');
    expect(calls.filter((call) => call === 'listMyOrganizations')).toHaveLength(1);
  });

  it('takes a new token when the active organization changes, so the session names it at once', async () => {
    const { client, calls } = fakeClient({ signedIn: true });
    const store = createSessionStore({ client });
    await store.start();
    expect(store.getState().session).toMatchObject({ organizationId: null });

    await store.client.setActiveOrganization({ organizationId: 'org-2' });

    expect(store.getState().session).toMatchObject({ organizationId: 'org-2' });
    expect(calls.slice(-2)).toEqual(['setActiveOrganization', 'createSessionToken']);
  });

  it('keeps the JWT cookie through a reload until the new token replaces it, and clears it once the session is gone', async () => {
    const writes: string[] = [];
    const page = globalThis as unknown as { document?: unknown };
    page.document = { set cookie(value: string) { writes.push(value); } };
    try {
      const state = { signedIn: true };
      const { client } = fakeClient(state);
      const store = createSessionStore({ client, cookie: {} });
      await store.start();
      await store.reload();
      expect(writes).toHaveLength(2);
      expect(writes.every((write) => /^__gatehouse_jwt=ey[^;]+; Path=\/; Max-Age=60; SameSite=Lax$/.test(write))).toBe(true);

      state.signedIn = false;
      await store.reload();
      expect(writes.slice(2)).toEqual(['__gatehouse_jwt=; Path=/; Max-Age=0; SameSite=Lax']);
      store.stop();
    } finally {
      delete page.document;
    }
  });

  it('reports a failure to reach Gatehouse as the error, apart from a signed-out answer', async () => {
    const client = { getMe: async () => { throw new TypeError('fetch failed'); }, createSessionToken: async () => ({ token: await jwt() }) };
    const store = createSessionStore({ client: client as unknown as ClientPlane });
    await store.start();
    expect(store.getState().error).toBeInstanceOf(TypeError);
  });
});

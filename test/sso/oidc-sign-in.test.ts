import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import { mailTime } from '../../src/platform/mail/render.js';
import { PASSWORD, sessionIsActive } from '../helpers/given.js';
import { loginAtProvider, startOpenIdProvider, type OpenIdProvider, type ProviderAccount } from '../helpers/openid-provider.js';
import { APP_ORIGIN, LANDING, sessionCookieOf } from '../oauth/support.js';
import { addMember, createOrganization, storedRoles } from '../organizations/support.js';
import { connectionsPath, createConnection, expectProblem, givenOrganizationWithDomain, startAppWithDns } from './support.js';

const BROWSER_COOKIE = '__sso_browser';

describe('enterprise sign-in through an OpenID Connect connection', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let op: OpenIdProvider;
  beforeAll(async () => {
    ({ t, dns } = await startAppWithDns());
    op = await startOpenIdProvider();
  });
  afterAll(async () => { await t?.close(); await dns?.close(); await op?.stop(); });

  /** An environment whose app origin is allowed, and an organization that verified `domain` with an OIDC connection registered at the provider. */
  async function givenConnection(domain: string, fields: Record<string, unknown> = {}) {
    const env = await t.given.environment();
    expect((await t.server(env).put('/allowed-origins', { origins: [APP_ORIGIN] })).statusCode).toBe(200);
    const org = await givenOrganizationWithDomain(t, env, dns, domain);
    const draft = await createConnection(t, env, org.id, { type: 'oidc', name: 'Corp IdP', issuer: op.issuer, clientId: 'pending', clientSecret: 'pending', ...fields });
    const registered = await op.register([draft.redirectUri]);
    const res = await t.server(env).patch(`${connectionsPath(org.id)}/${draft.id}`, registered);
    expect(res.statusCode, res.body).toBe(200);
    return { env, org, connection: res.json() };
  }

  const authorize = (env: TestEnv, query: string) => t.client(env).get(`/auth/sso/authorize?${query}&redirect_url=${encodeURIComponent(LANDING)}`);

  /** The whole dance for the account, started by email; answers the callback's response. */
  async function signIn(env: TestEnv, email: string, who: ProviderAccount): Promise<LightMyRequestResponse> {
    await op.nextAccount(who);
    const started = await authorize(env, `email=${encodeURIComponent(email)}`);
    expect(started.statusCode, started.body).toBe(302);
    const browser = started.cookies.find((c) => c.name === BROWSER_COOKIE)!;
    expect(browser).toMatchObject({ httpOnly: true, sameSite: 'None', secure: true, path: '/_svc/auth/sso/' });
    const back = await loginAtProvider(started.headers.location as string);
    return t.client(env).get(`${back.pathname.replace(/^\/_svc/, '')}${back.search}`, { headers: { cookie: `${BROWSER_COOKIE}=${browser.value}` } });
  }

  const errorOf = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(303);
    return new URL(res.headers.location as string).searchParams.get('error');
  };

  const usersOf = (env: TestEnv) => t.db.selectFrom('users').select(['id', 'email']).where('environment_id', '=', env.id).execute();
  const identitiesOf = (env: TestEnv) => t.db.selectFrom('sso_identities').select(['subject', 'user_id']).where('environment_id', '=', env.id).execute();

  it('creates the user and the membership with the role the groups map to, and starts a federated session (no email_verified claim, as Entra ID sends)', async () => {
    const { env, org, connection } = await givenConnection('oidc-jit.example', { groupRoles: { 'Corp Admins': 'admin' } });

    const res = await signIn(env, 'Ada@OIDC-JIT.example', { sub: 'corp-1', email: 'ada@oidc-jit.example', given_name: 'Ada', family_name: 'Lovelace', groups: ['Staff', 'corp admins'] });

    const cookie = sessionCookieOf(res);
    expect(res.headers.location).toBe(LANDING);
    const me = (await t.client(env, { cookie }).get('/me')).json();
    expect(me).toMatchObject({ email: 'ada@oidc-jit.example', firstName: 'Ada', lastName: 'Lovelace', status: 'active' });
    expect(me.emailVerifiedAt).not.toBeNull();
    expect(await storedRoles(t, env, org.id)).toEqual({ [me.id]: 'admin' });
    const [session] = await t.db.selectFrom('sessions').select(['amr', 'authenticated_at']).where('environment_id', '=', env.id).execute();
    expect(session).toEqual({ amr: ['fed'], authenticated_at: t.clock.now() });
    const events = await t.db.selectFrom('audit_events').select(['action', 'metadata']).where('environment_id', '=', env.id)
      .where('action', 'in', ['user.signed_up', 'organization_membership.created', 'user.signed_in']).orderBy('sequence').execute();
    expect(events.map((e) => [e.action, e.metadata])).toEqual([
      ['user.signed_up', { method: 'sso', connectionId: connection.id }],
      ['organization_membership.created', { role: 'admin' }],
      ['user.signed_in', { method: 'sso', connectionId: connection.id }],
    ]);
    expect(await t.db.selectFrom('sso_requests').select('key_hash').where('environment_id', '=', env.id).execute()).toEqual([]);
  });

  it('signs the same subject in again as the same user, and links an existing account of the domain by its email', async () => {
    const { env, org } = await givenConnection('oidc-link.example');
    const existing = await t.given.user(env, { email: 'grace@oidc-link.example' });

    const first = (await t.client(env, { cookie: sessionCookieOf(await signIn(env, 'grace@oidc-link.example', { sub: 'g-1', email: 'grace@oidc-link.example' })) }).get('/me')).json();
    const again = (await t.client(env, { cookie: sessionCookieOf(await signIn(env, 'grace@oidc-link.example', { sub: 'g-1', email: 'grace@oidc-link.example' })) }).get('/me')).json();

    expect([first.id, again.id]).toEqual([existing.id, existing.id]);
    expect(await storedRoles(t, env, org.id)).toEqual({ [existing.id]: 'member' });
    expect(await t.db.selectFrom('sso_identities').select(['subject', 'user_id']).where('environment_id', '=', env.id).execute()).toEqual([{ subject: 'g-1', user_id: existing.id }]);
  });

  it('refuses an email outside the organization\'s verified domains, creating nobody', async () => {
    const { env } = await givenConnection('oidc-strict.example');
    const res = await signIn(env, 'eve@oidc-strict.example', { sub: 'e-1', email: 'eve@elsewhere.example', email_verified: true });
    expect(errorOf(res)).toBe('email_domain_not_verified');
    expect(res.cookies.find((c) => c.name === '__session')).toBeUndefined();
    expect(await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
  });

  it('refuses an email the IdP says it has not verified with email_not_verified: no account of the domain is linked, none is created', async () => {
    const { env } = await givenConnection('oidc-unverified.example');
    const owner = await t.given.user(env, { email: 'owner@oidc-unverified.example' });
    const session = await t.given.session(env, owner);

    const takeover = await signIn(env, 'owner@oidc-unverified.example', { sub: 'not-the-owner', email: 'owner@oidc-unverified.example', email_verified: false });
    const newcomer = await signIn(env, 'new@oidc-unverified.example', { sub: 'newcomer', email: 'new@oidc-unverified.example', email_verified: false });

    expect([errorOf(takeover), errorOf(newcomer)]).toEqual(['email_not_verified', 'email_not_verified']);
    expect([takeover, newcomer].map((res) => res.cookies.find((c) => c.name === '__session'))).toEqual([undefined, undefined]);
    expect(await usersOf(env)).toEqual([{ id: owner.id, email: 'owner@oidc-unverified.example' }]);
    expect(await identitiesOf(env)).toEqual([]);
    expect(await sessionIsActive(t, env, session)).toBe(true);
    expect(await t.outbox(env, 'owner@oidc-unverified.example')).toEqual([]);
  });

  it('ends every session of an existing account a first sign-in links, mails its owner and records sso_identity.linked; the password stays', async () => {
    const { env, org, connection } = await givenConnection('oidc-takeover.example');
    const user = await t.given.user(env, { email: 'sam@oidc-takeover.example' });
    await addMember(t, env, (await createOrganization(t, env, { name: 'Partner' })).id, user.id);
    const before = await t.given.session(env, user);

    const first = sessionCookieOf(await signIn(env, 'sam@oidc-takeover.example', { sub: 'sam', email: 'sam@oidc-takeover.example', email_verified: true }));

    expect(await sessionIsActive(t, env, before)).toBe(false);
    const [mail, ...more] = await t.outbox(env, 'sam@oidc-takeover.example');
    expect(more).toEqual([]);
    expect(mail.subject).toBe('Your account now signs in through Acme');
    expect(mail.text).toBe(`Your ${env.name} account sam@oidc-takeover.example was linked at ${mailTime(t.clock.now(), 'en')} to Acme's single sign-on: `
      + `signing in as sam@oidc-takeover.example at Acme's identity provider now signs in to this account. Every session signed in before was signed out.`
      + `\n\nIf you did not expect this, tell your administrator at once.\n\n-- \nSent by ${env.name}.`);
    const linked = await t.db.selectFrom('audit_events').select(['actor_id', 'targets', 'metadata']).where('environment_id', '=', env.id).where('action', '=', 'sso_identity.linked').execute();
    expect(linked).toEqual([{
      actor_id: user.id, targets: [{ type: 'user', id: user.id }, { type: 'sso_connection', id: connection.id }],
      metadata: { connectionId: connection.id, organizationId: org.id, revokedSessions: 1, passwordRemoved: false },
    }]);

    // The password stays a way in; the subject's next sign-in links nothing, so it ends nothing and mails nothing.
    expect((await t.client(env).post('/auth/sign-in', { email: user.email, password: PASSWORD })).statusCode).toBe(200);
    sessionCookieOf(await signIn(env, 'sam@oidc-takeover.example', { sub: 'sam', email: 'sam@oidc-takeover.example', email_verified: true }));
    expect((await t.client(env, { cookie: first }).get('/me')).statusCode).toBe(200);
    expect(await t.outbox(env, 'sam@oidc-takeover.example')).toHaveLength(1);
  });

  it('refuses with email_invalid an email the API would refuse, even at the verified domain, creating nobody', async () => {
    const { env } = await givenConnection('oidc-syntax.example');

    const res = await signIn(env, 'x@oidc-syntax.example', { sub: 'odd', email: 'a@b.test@oidc-syntax.example', email_verified: true });

    expect(errorOf(res)).toBe('email_invalid');
    expect(await usersOf(env)).toEqual([]);
    expect(await identitiesOf(env)).toEqual([]);
    expectProblem(await t.server(env).post('/users', { email: 'a@b.test@oidc-syntax.example' }), 400, 'invalid_request');
  });

  it('sends the browser back with sso_connection_not_found for a domain without a connection, and 400 for a redirect URL not allowed', async () => {
    const { env, org } = await givenConnection('oidc-routing.example');
    expect(errorOf(await authorize(env, 'email=someone%40unknown.example'))).toBe('sso_connection_not_found');
    const anotherOrganization = org.id.replace(/.$/, (last: string) => (last === '0' ? '1' : '0'));
    expect(errorOf(await authorize(env, `organization_id=${anotherOrganization}`))).toBe('sso_connection_not_found');
    expect((await authorize(env, `organization_id=${org.id}`)).statusCode).toBe(302);
    expectProblem(await t.client(env).get('/auth/sso/authorize?email=a%40oidc-routing.example&redirect_url=https%3A%2F%2Fevil.example%2F'), 400, 'redirect_url_not_allowed');
    expectProblem(await t.client(env).get(`/auth/sso/authorize?redirect_url=${encodeURIComponent(LANDING)}`), 400, 'invalid_request');
  });

  it('uses a state once, binds it to the browser that started it, and to its environment', async () => {
    const { env } = await givenConnection('oidc-state.example');
    const other = await t.given.environment();
    await op.nextAccount({ sub: 's-1', email: 's@oidc-state.example' });
    const started = await authorize(env, 'email=s%40oidc-state.example');
    const browser = started.cookies.find((c) => c.name === BROWSER_COOKIE)!.value;
    const back = await loginAtProvider(started.headers.location as string);
    const path = `${back.pathname.replace(/^\/_svc/, '')}${back.search}`;

    expectProblem(await t.client(other).get(path, { headers: { cookie: `${BROWSER_COOKIE}=${browser}` } }), 400, 'invalid_state');
    expect(errorOf(await t.client(env).get(path, { headers: { cookie: `${BROWSER_COOKIE}=another-browser` } }))).toBe('state_mismatch');
    expectProblem(await t.client(env).get(path, { headers: { cookie: `${BROWSER_COOKIE}=${browser}` } }), 400, 'invalid_state');
  });

  it('lets a linked user with a password keep it when the connection is not enforced, and refuses it once it is', async () => {
    const { env, org, connection } = await givenConnection('oidc-enforce.example');
    const user = await t.given.user(env, { email: 'lin@oidc-enforce.example' });
    expect((await t.client(env).post('/auth/sign-in', { email: user.email, password: PASSWORD })).statusCode).toBe(200);
    await t.server(env).patch(`${connectionsPath(org.id)}/${connection.id}`, { enforced: true });
    expectProblem(await t.client(env).post('/auth/sign-in', { email: user.email, password: PASSWORD }), 403, 'sso_required');
    sessionCookieOf(await signIn(env, 'lin@oidc-enforce.example', { sub: 'lin', email: 'lin@oidc-enforce.example' }));
  });
});

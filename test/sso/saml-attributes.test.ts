import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import { startSamlIdp, type SamlIdp, type SamlUser } from '../helpers/saml-idp.js';
import { LANDING } from '../oauth/support.js';
import { storedRoles } from '../organizations/support.js';
import { givenSamlConnection, postToAcs, sessionCookieIn, startSamlSignIn } from './saml-support.js';
import { startAppWithDns } from './support.js';

/** The claim names Microsoft Entra ID gives a SAML enterprise application by default, and its groups claim. */
const ENTRA = {
  email: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  givenName: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname',
  surname: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname',
  upn: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
  displayName: 'http://schemas.microsoft.com/identity/claims/displayname',
  tenantId: 'http://schemas.microsoft.com/identity/claims/tenantid',
  objectId: 'http://schemas.microsoft.com/identity/claims/objectidentifier',
  groups: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups',
};
const ADMINS_OBJECT_ID = '07dd8a60-bf6d-4e17-8844-230b77145381';
const STAFF_OBJECT_ID = '5a0b5c6f-1d2e-4f3a-9b8c-7d6e5f4a3b2c';
const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

/** What Entra ID sends for Ada with the default claims: the UPN as NameID and as the `name` claim, her groups by object ID. */
const entraUser = (domain: string): SamlUser => ({
  nameId: `ada.lovelace@${domain}`,
  attributes: {
    [ENTRA.tenantId]: ['72f988bf-86f1-41af-91ab-2d7cd011db47'],
    [ENTRA.objectId]: ['b3f1c2d4-0000-4000-8000-000000000001'],
    [ENTRA.displayName]: ['Ada Lovelace (Analytics)'],
    [ENTRA.email]: [`ada@${domain}`],
    [ENTRA.givenName]: ['Ada'],
    [ENTRA.surname]: ['Lovelace'],
    [ENTRA.upn]: [`ada.lovelace@${domain}`],
    [ENTRA.groups]: [STAFF_OBJECT_ID, ADMINS_OBJECT_ID],
  },
});

describe('the SAML attribute names Okta and Microsoft Entra ID send', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let idp: SamlIdp;
  beforeAll(async () => {
    ({ t, dns } = await startAppWithDns());
    idp = await startSamlIdp();
  });
  afterAll(async () => { await t?.close(); await dns?.close(); await idp?.stop(); });

  /** The whole exchange for one user, started by `email`: the ACS's answer. */
  async function signIn(env: TestEnv, connection: { id: string; acsUrl: string; spEntityId: string }, email: string, user: SamlUser) {
    const { request, browser } = await startSamlSignIn(t, env, email);
    const samlResponse = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id, user });
    return postToAcs(t, env, connection.id, samlResponse, browser);
  }

  async function signedInUser(env: TestEnv, res: Awaited<ReturnType<typeof signIn>>) {
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(LANDING);
    return (await t.client(env, { cookie: sessionCookieIn(res)!.value }).get('/me')).json();
  }

  const usersOf = (env: TestEnv) => t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).execute();

  it("reads Entra ID's claim URIs for email, names and display name, and maps a group object ID under its groups URI to admin", async () => {
    const { env, org, connection } = await givenSamlConnection(t, dns, idp, 'entra-claims.example', {
      groupsAttribute: ENTRA.groups, groupRoles: { [ADMINS_OBJECT_ID.toUpperCase()]: 'admin' },
    });

    const me = await signedInUser(env, await signIn(env, connection, 'ada@entra-claims.example', entraUser('entra-claims.example')));

    // The email is the emailaddress claim, not the UPN in the NameID; the name is the display name, not the UPN `name` claim.
    expect(me).toMatchObject({ email: 'ada@entra-claims.example', firstName: 'Ada', lastName: 'Lovelace', name: 'Ada Lovelace (Analytics)' });
    expect(await storedRoles(t, env, org.id)).toEqual({ [me.id]: 'admin' });
    expect(await t.db.selectFrom('sso_identities').select('subject').where('environment_id', '=', env.id).execute())
      .toEqual([{ subject: 'ada.lovelace@entra-claims.example' }]);
  });

  it("maps nothing from Entra ID's groups URI while groupsAttribute stays groups: the user joins with the default role", async () => {
    const { env, org, connection } = await givenSamlConnection(t, dns, idp, 'entra-default.example', { groupRoles: { [ADMINS_OBJECT_ID]: 'admin' } });

    const me = await signedInUser(env, await signIn(env, connection, 'ada@entra-default.example', entraUser('entra-default.example')));

    expect(me.email).toBe('ada@entra-default.example');
    expect(await storedRoles(t, env, org.id)).toEqual({ [me.id]: 'member' });
  });

  it("reads Okta's attribute statements email, firstName, lastName and its group attribute statement groups", async () => {
    const { env, org, connection } = await givenSamlConnection(t, dns, idp, 'okta-claims.example', { groupRoles: { 'acme admins': 'admin' } });
    const user: SamlUser = {
      nameId: 'grace@okta-claims.example',
      attributes: { email: ['grace@okta-claims.example'], firstName: ['Grace'], lastName: ['Hopper'], groups: ['Everyone', 'Acme Admins'] },
    };

    const me = await signedInUser(env, await signIn(env, connection, 'grace@okta-claims.example', user));

    expect(me).toMatchObject({ email: 'grace@okta-claims.example', firstName: 'Grace', lastName: 'Hopper', name: 'Grace Hopper' });
    expect(await storedRoles(t, env, org.id)).toEqual({ [me.id]: 'admin' });
  });

  it('takes the email from a NameID in the emailAddress format when the assertion has no attributes', async () => {
    const { env, org, connection } = await givenSamlConnection(t, dns, idp, 'nameid-only.example');

    const me = await signedInUser(env, await signIn(env, connection, 'lin@nameid-only.example', { nameId: 'Lin@NameID-Only.example', attributes: {} }));

    expect(me).toMatchObject({ email: 'lin@nameid-only.example', firstName: null, lastName: null, name: null });
    expect(await storedRoles(t, env, org.id)).toEqual({ [me.id]: 'member' });
  });

  it('sends the browser back with email_invalid for an email the API would refuse (a quoted local part), creating nobody', async () => {
    const { env, connection } = await givenSamlConnection(t, dns, idp, 'quoted-local-part.example');

    const res = await signIn(env, connection, 'x@quoted-local-part.example', {
      nameId: 'c1d2e3f4-0000-4000-8000-000000000002', nameIdFormat: PERSISTENT, attributes: { email: ['"a b"@quoted-local-part.example'] },
    });

    expect(res.statusCode, res.body).toBe(303);
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('email_invalid');
    expect(sessionCookieIn(res)).toBeUndefined();
    expect(await usersOf(env)).toEqual([]);
  });

  it('sends the browser back with email_required for a persistent NameID without an email attribute, creating nobody', async () => {
    const { env, connection } = await givenSamlConnection(t, dns, idp, 'nameid-persistent.example');

    const res = await signIn(env, connection, 'kim@nameid-persistent.example', {
      nameId: 'a5f3c1e0-7b2d-4e8f-9c1a-2b3c4d5e6f70', nameIdFormat: PERSISTENT, attributes: { firstName: ['Kim'] },
    });

    expect(res.statusCode, res.body).toBe(303);
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('email_required');
    expect(sessionCookieIn(res)).toBeUndefined();
    expect(await usersOf(env)).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import { RESPONSE_VARIANTS, startSamlIdp, type ResponseVariant, type SamlIdp } from '../helpers/saml-idp.js';
import { LANDING } from '../oauth/support.js';
import { storedRoles } from '../organizations/support.js';
import { givenSamlConnection, postToAcs, sessionCookieIn, startSamlSignIn } from './saml-support.js';
import { expectProblem, startAppWithDns } from './support.js';

/** Every forgery the IdP can make: each must be refused before it names anybody. */
const FORGED: ResponseVariant[] = RESPONSE_VARIANTS.filter((v) => v !== 'valid' && v !== 'xsw_comment_injection');

describe('enterprise sign-in through a SAML connection (SP-initiated, HTTP-POST to the ACS)', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let idp: SamlIdp;
  beforeAll(async () => {
    ({ t, dns } = await startAppWithDns());
    idp = await startSamlIdp();
  });
  afterAll(async () => { await t?.close(); await dns?.close(); await idp?.stop(); });

  const users = (envId: string) => t.db.selectFrom('users').select(['id', 'email']).where('environment_id', '=', envId).execute();

  it('creates the user and the membership with the role its groups map to, and lands on the redirect URL signed in', async () => {
    const { env, org, connection } = await givenSamlConnection(t, dns, idp, 'saml-jit.example', { groupRoles: { Engineering: 'admin' } });
    const { request, browser } = await startSamlSignIn(t, env, 'alice@saml-jit.example');
    expect(request).toMatchObject({ acsUrl: connection.acsUrl, issuer: connection.spEntityId });

    const samlResponse = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id,
      user: { nameId: 'alice@saml-jit.example', email: 'alice@saml-jit.example', firstName: 'Alice', lastName: 'Liddell', groups: ['Everyone', 'engineering'] } });
    const res = await postToAcs(t, env, connection.id, samlResponse, browser);

    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(LANDING);
    const me = (await t.client(env, { cookie: sessionCookieIn(res)!.value }).get('/me')).json();
    expect(me).toMatchObject({ email: 'alice@saml-jit.example', firstName: 'Alice', lastName: 'Liddell', status: 'active' });
    expect(await storedRoles(t, env, org.id)).toEqual({ [me.id]: 'admin' });
    const [session] = await t.db.selectFrom('sessions').select('amr').where('environment_id', '=', env.id).execute();
    expect(session.amr).toEqual(['fed']);
    expect(await t.db.selectFrom('sso_identities').select(['subject', 'user_id']).where('environment_id', '=', env.id).execute())
      .toEqual([{ subject: 'alice@saml-jit.example', user_id: me.id }]);
  });

  it('accepts a response answered once: a replay of it, or a second answer to its request, is 400 invalid_state', async () => {
    const { env, connection } = await givenSamlConnection(t, dns, idp, 'saml-replay.example');
    const { request, browser } = await startSamlSignIn(t, env, 'bob@saml-replay.example');
    const user = { nameId: 'bob@saml-replay.example', email: 'bob@saml-replay.example' };
    const samlResponse = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id, user });
    const another = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id, user });

    expect((await postToAcs(t, env, connection.id, samlResponse, browser)).statusCode).toBe(303);
    expectProblem(await postToAcs(t, env, connection.id, samlResponse, browser), 400, 'invalid_state');
    expectProblem(await postToAcs(t, env, connection.id, another, browser), 400, 'invalid_state');
    expect(await t.db.selectFrom('sessions').select('id').where('environment_id', '=', env.id).execute()).toHaveLength(1);
  });

  it.each(FORGED)('refuses the %s response with 400 invalid_state, signing nobody in and using nothing up', async (variant) => {
    const { env, connection } = await givenSamlConnection(t, dns, idp, `saml-${variant.replace(/_/g, '-')}.example`);
    const { request, browser } = await startSamlSignIn(t, env, `victim@saml-${variant.replace(/_/g, '-')}.example`);
    const user = { nameId: `victim@saml-${variant.replace(/_/g, '-')}.example`, email: `victim@saml-${variant.replace(/_/g, '-')}.example` };

    const forged = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id, user, variant });
    const res = await postToAcs(t, env, connection.id, forged, browser);

    expectProblem(res, 400, 'invalid_state');
    expect(sessionCookieIn(res)).toBeUndefined();
    expect(await users(env.id)).toEqual([]);
    // The request is still live: the genuine answer that follows a forgery signs in.
    const genuine = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id, user });
    expect((await postToAcs(t, env, connection.id, genuine, browser)).statusCode).toBe(303);
  });

  it('reads a comment-truncated NameID whole (CVE-2017-11427), so it names nobody of the domain', async () => {
    const { env, connection } = await givenSamlConnection(t, dns, idp, 'saml-comment.example');
    const victim = await t.given.user(env, { email: 'admin@saml-comment.example' });
    const { request, browser } = await startSamlSignIn(t, env, 'admin@saml-comment.example');
    const forged = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id,
      user: { nameId: 'admin@saml-comment.example', email: 'admin@saml-comment.example' }, variant: 'xsw_comment_injection' });

    const res = await postToAcs(t, env, connection.id, forged, browser);

    expect(res.statusCode).toBe(303);
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('email_domain_not_verified');
    expect(sessionCookieIn(res)).toBeUndefined();
    expect(await users(env.id)).toEqual([{ id: victim.id, email: 'admin@saml-comment.example' }]);
  });

  it('refuses an unsolicited (IdP-initiated) response and one for another connection\'s audience', async () => {
    const { env, org, connection } = await givenSamlConnection(t, dns, idp, 'saml-unsolicited.example');
    const user = { nameId: 'carol@saml-unsolicited.example', email: 'carol@saml-unsolicited.example' };
    const unsolicited = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: null, user });
    expectProblem(await postToAcs(t, env, connection.id, unsolicited, undefined), 400, 'invalid_state');

    const second = (await t.server(env).post(`/organizations/${org.id}/sso-connections`, { type: 'saml', idpMetadataXml: idp.metadataXml })).json();
    const { request, browser } = await startSamlSignIn(t, env, 'carol@saml-unsolicited.example');
    const forFirst = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id, user });
    expectProblem(await postToAcs(t, env, second.id, forFirst, browser), 400, 'invalid_state');
    expect(await users(env.id)).toEqual([]);
  });

  it('sends a response posted from another browser back with state_mismatch, and answers another environment 400', async () => {
    const { env, connection } = await givenSamlConnection(t, dns, idp, 'saml-browser.example');
    const other = await t.given.environment();
    const { request } = await startSamlSignIn(t, env, 'dan@saml-browser.example');
    const user = { nameId: 'dan@saml-browser.example', email: 'dan@saml-browser.example' };
    const samlResponse = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id, user });

    expectProblem(await postToAcs(t, other, connection.id, samlResponse, undefined), 400, 'invalid_state');
    const res = await postToAcs(t, env, connection.id, samlResponse, 'someone-else');
    expect(res.statusCode).toBe(303);
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('state_mismatch');
    expect(sessionCookieIn(res)).toBeUndefined();
  });

  it('serves the service provider metadata: entity ID, the ACS for HTTP-POST, signed assertions wanted', async () => {
    const { env, connection } = await givenSamlConnection(t, dns, idp, 'saml-metadata.example');
    const res = await t.client(env).get(`/auth/sso/${connection.id}/metadata`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/samlmetadata\+xml/);
    expect(res.body).toContain(`entityID="${connection.spEntityId}"`);
    expect(res.body).toMatch(new RegExp(`AssertionConsumerService[^>]*Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"[^>]*Location="${connection.acsUrl}"`));
    expect(res.body).toContain('WantAssertionsSigned="true"');
    expectProblem(await t.client(env).get('/auth/sso/00000000-0000-7000-8000-000000000000/metadata'), 404, 'resource_not_found');
  });
});

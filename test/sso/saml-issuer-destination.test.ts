import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import { startSamlIdp, type SamlIdp } from '../helpers/saml-idp.js';
import type { ResponseRequest } from '../helpers/saml-responses.js';
import { givenSamlConnection, postToAcs, sessionCookieIn, startAppWithRefusalLog, startSamlSignIn } from './saml-support.js';
import { createConnection, expectProblem } from './support.js';

const OTHER_IDP = 'https://other-tenant.idp.example/metadata';

describe("a SAML response is the connection's IdP's, sent to this connection's ACS (issue 42)", () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let idp: SamlIdp;
  let refusalsOf: Awaited<ReturnType<typeof startAppWithRefusalLog>>['refusalsOf'];
  beforeAll(async () => {
    ({ t, dns, refusalsOf } = await startAppWithRefusalLog());
    idp = await startSamlIdp();
  });
  afterAll(async () => { await t?.close(); await dns?.close(); await idp?.stop(); });

  const users = (env: TestEnv) => t.db.selectFrom('users').select('email').where('environment_id', '=', env.id).execute();

  /** A started sign-in at a new connection, and the IdP's answer to it signed with its trusted key, with `changes`. */
  async function answered(domain: string, changes: Partial<ResponseRequest>) {
    const { env, org, connection } = await givenSamlConnection(t, dns, idp, domain);
    const { request, browser } = await startSamlSignIn(t, env, `victim@${domain}`);
    const answer = (more: Partial<ResponseRequest> = {}) => idp.response({
      acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id, user: { nameId: `victim@${domain}` }, ...changes, ...more,
    });
    return { env, org, connection, browser, answer };
  }

  it('refuses an assertion another IdP issued (Response and Assertion Issuers), though signed with the trusted key', async () => {
    const { env, connection, browser, answer } = await answered('saml-other-issuer.example', { issuer: OTHER_IDP });

    const res = await postToAcs(t, env, connection.id, await answer(), browser);

    expectProblem(res, 400, 'invalid_state');
    expect(refusalsOf(res)).toEqual([`the assertion's Issuer is "${OTHER_IDP}", not the IdP's entity ID "${idp.entityId}"`]);
    expect(sessionCookieIn(res)).toBeUndefined();
    expect(await users(env)).toEqual([]);
    // The request is still live: the IdP's own answer signs in.
    expect((await postToAcs(t, env, connection.id, await answer({ issuer: idp.entityId }), browser)).statusCode).toBe(303);
  });

  it("refuses a signed Response another IdP issued around this IdP's assertion", async () => {
    const { env, connection, browser, answer } = await answered('saml-other-response-issuer.example', { responseIssuer: OTHER_IDP, signResponse: true });

    const res = await postToAcs(t, env, connection.id, await answer(), browser);

    expectProblem(res, 400, 'invalid_state');
    expect(refusalsOf(res)).toEqual([`the Response's Issuer is "${OTHER_IDP}", not the IdP's entity ID "${idp.entityId}"`]);
    expect(await users(env)).toEqual([]);
  });

  it("refuses a signed Response whose Destination is another connection's ACS", async () => {
    const { env, org, connection, browser, answer } = await answered('saml-other-destination.example', { signResponse: true });
    const other = await createConnection(t, env, org.id, { type: 'saml', name: 'Second IdP', idpMetadataXml: idp.metadataXml });

    const res = await postToAcs(t, env, connection.id, await answer({ destination: other.acsUrl }), browser);

    expectProblem(res, 400, 'invalid_state');
    expect(refusalsOf(res)).toEqual([`the Response's Destination is "${other.acsUrl}", not this ACS "${connection.acsUrl}"`]);
    expect(await users(env)).toEqual([]);
    expect((await postToAcs(t, env, connection.id, await answer(), browser)).statusCode).toBe(303);
  });

  it('accepts a Response that names neither its Issuer nor its Destination (both are optional)', async () => {
    const { env, connection, browser, answer } = await answered('saml-no-header.example', { responseIssuer: null, destination: null });

    const res = await postToAcs(t, env, connection.id, await answer(), browser);

    expect(res.statusCode, res.body).toBe(303);
    expect(sessionCookieIn(res)).toBeDefined();
    expect(await users(env)).toEqual([{ email: 'victim@saml-no-header.example' }]);
  });
});

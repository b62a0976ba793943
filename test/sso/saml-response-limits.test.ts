import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import { startSamlIdp, type SamlIdp } from '../helpers/saml-idp.js';
import { LANDING } from '../oauth/support.js';
import { givenSamlConnection, paddedWithSiblings, postToAcs, sessionCookieIn, startAppWithRefusalLog, startSamlSignIn } from './saml-support.js';
import { expectProblem } from './support.js';

const TOO_MANY_CHILDREN = 'the response is beyond the limits: an element has more than 1000 children';
const TOO_MANY_NODES = 'the response is beyond the limits: it has more than 5000 nodes (elements, attributes, comments)';

describe('the limits a posted SAML response is held to before any XML library reads it (issue 42)', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let idp: SamlIdp;
  let refusalsOf: Awaited<ReturnType<typeof startAppWithRefusalLog>>['refusalsOf'];
  beforeAll(async () => {
    ({ t, dns, refusalsOf } = await startAppWithRefusalLog());
    idp = await startSamlIdp();
  });
  afterAll(async () => { await t?.close(); await dns?.close(); await idp?.stop(); });

  it.each([20_000, 60_000])('refuses a response padded with %i empty siblings by its size and shape, before its signature, while /healthz and the Server API answer', async (count) => {
    const domain = `saml-flood-${count}.example`;
    const { env, org, connection } = await givenSamlConnection(t, dns, idp, domain);
    const { request, browser } = await startSamlSignIn(t, env, `anyone@${domain}`);
    const user = { nameId: `victim@${domain}`, email: `victim@${domain}` };
    const unsigned = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id, user, variant: 'unsigned' });

    const [flood, ...others] = await Promise.all([
      postToAcs(t, env, connection.id, paddedWithSiblings(unsigned, count), browser),
      ...Array.from({ length: 5 }, () => t.app.inject({ method: 'GET', url: '/healthz' })),
      ...Array.from({ length: 5 }, () => t.server(env).get(`/organizations/${org.id}`)),
    ]);

    expectProblem(flood, 400, 'invalid_state');
    // The reason names the limit, not the missing signature: node-saml never parsed it.
    expect(refusalsOf(flood)).toEqual([TOO_MANY_CHILDREN]);
    expect(others.map((res) => res.statusCode)).toEqual(Array(10).fill(200));
    expect(await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
    // The request is still live: the genuine answer that follows signs in.
    const genuine = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id, user });
    expect((await postToAcs(t, env, connection.id, genuine, browser)).statusCode).toBe(303);
  });

  it('refuses a response with its padding spread out, in comments, or with a document type declaration, before reading it', async () => {
    const { env, connection } = await givenSamlConnection(t, dns, idp, 'saml-flood-markup.example');
    const { request, browser } = await startSamlSignIn(t, env, 'anyone@saml-flood-markup.example');
    const user = { nameId: 'victim@saml-flood-markup.example' };
    const xml = Buffer.from(await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id, user }), 'base64').toString('utf8');
    const spread = Buffer.from(xml.replace('<samlp:Status>', `${`<g>${'<p/>'.repeat(1_000)}</g>`.repeat(5)}<samlp:Status>`)).toString('base64');
    const comments = Buffer.from(xml.replace('<samlp:Status>', `${'<!---->'.repeat(1_001)}<samlp:Status>`)).toString('base64');
    const doctype = Buffer.from(`<!DOCTYPE r [<!ENTITY a "aaaa">]>${xml}`).toString('base64');

    const bySpread = await postToAcs(t, env, connection.id, spread, browser);
    const byComments = await postToAcs(t, env, connection.id, comments, browser);
    const byDoctype = await postToAcs(t, env, connection.id, doctype, browser);

    expectProblem(bySpread, 400, 'invalid_state');
    expect(refusalsOf(bySpread)).toEqual([TOO_MANY_NODES]);
    expectProblem(byComments, 400, 'invalid_state');
    expect(refusalsOf(byComments)).toEqual([TOO_MANY_CHILDREN]);
    expectProblem(byDoctype, 400, 'invalid_state');
    expect(refusalsOf(byDoctype)).toEqual(['the response is beyond the limits: it has a document type declaration']);
  });

  it('signs in a user with 1,000 groups, each value with its xsi:type as Okta sends it', async () => {
    const { env, connection } = await givenSamlConnection(t, dns, idp, 'saml-many-groups.example');
    const { request, browser } = await startSamlSignIn(t, env, 'grace@saml-many-groups.example');
    const groups = Array.from({ length: 1_000 }, (_, i) => `00g${String(i).padStart(17, '0')}`);
    const samlResponse = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: request.id,
      user: { nameId: 'grace@saml-many-groups.example', groups } });

    const res = await postToAcs(t, env, connection.id, samlResponse, browser);

    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(LANDING);
    expect(sessionCookieIn(res)).toBeDefined();
  });
});

import { inflateRawSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import type { SamlIdp } from '../helpers/saml-idp.js';
import { APP_ORIGIN, LANDING } from '../oauth/support.js';
import { createConnection, givenOrganizationWithDomain } from './support.js';

export const BROWSER_COOKIE = '__sso_browser';

/** An environment whose app origin is allowed, and an organization that verified `domain` with a SAML connection to the IdP (by its metadata). */
export async function givenSamlConnection(t: TestApp, dns: TestDnsServer, idp: SamlIdp, domain: string, fields: Record<string, unknown> = {}) {
  const env = await t.given.environment();
  expect((await t.server(env).put('/allowed-origins', { origins: [APP_ORIGIN] })).statusCode).toBe(200);
  const org = await givenOrganizationWithDomain(t, env, dns, domain);
  const connection = await createConnection(t, env, org.id, { type: 'saml', name: 'Test IdP', idpMetadataXml: idp.metadataXml, ...fields });
  return { env, org, connection };
}

/** The AuthnRequest an HTTP-Redirect URL carries (base64 of raw DEFLATE). */
export function authnRequestOf(location: string) {
  const xml = inflateRawSync(Buffer.from(new URL(location).searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
  return { xml, id: /\sID="([^"]+)"/.exec(xml)![1]!, acsUrl: /AssertionConsumerServiceURL="([^"]+)"/.exec(xml)![1]!, issuer: /<saml:Issuer[^>]*>([^<]+)</.exec(xml)![1]! };
}

/** Starts a sign-in by email as a browser would: the AuthnRequest sent to the IdP and this browser's binding cookie. */
export async function startSamlSignIn(t: TestApp, env: TestEnv, email: string) {
  const res = await t.client(env).get(`/auth/sso/authorize?email=${encodeURIComponent(email)}&redirect_url=${encodeURIComponent(LANDING)}`);
  expect(res.statusCode, res.body).toBe(302);
  return { request: authnRequestOf(res.headers.location as string), location: res.headers.location as string, browser: res.cookies.find((c) => c.name === BROWSER_COOKIE)!.value };
}

/** Posts a SAMLResponse to the connection's ACS as the IdP's page makes the browser do (from the IdP's origin). */
export const postToAcs = (t: TestApp, env: TestEnv, connectionId: string, samlResponse: string, browser: string | undefined, origin = 'http://127.0.0.1:1') =>
  t.client(env).post(`/auth/sso/${connectionId}/acs`, new URLSearchParams({ SAMLResponse: samlResponse, RelayState: '' }).toString(), {
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin, ...(browser && { cookie: `${BROWSER_COOKIE}=${browser}` }) },
  });

export const sessionCookieIn = (res: LightMyRequestResponse) => res.cookies.find((c) => c.name === '__session');

/**
 * The app with the test DNS server, as startAppWithDns, keeping its warnings: `refusalsOf(res)` are the reasons
 * the ACS logged for refusing the response `res` answers (the browser only ever gets 400 invalid_state).
 */
export async function startAppWithRefusalLog() {
  const lines: { reqId?: string; msg?: string; samlRefusal?: string }[] = [];
  const dns = await startDnsServer();
  const t = await startTestApp({
    dns: { servers: [dns.address], timeoutMs: PATIENCE_MS }, logLevel: 'warn', logStream: { write: (line) => { lines.push(JSON.parse(line)); } },
  });
  const refusalsOf = (res: LightMyRequestResponse) => {
    const requestId = (res.json() as { instance: string }).instance.replace('urn:uuid:', '');
    return lines.filter((line) => line.reqId === requestId && line.msg === 'SAML response refused').map((line) => line.samlRefusal);
  };
  return { t, dns, refusalsOf };
}

/**
 * The response with `count` empty elements added as siblings of its Assertion (what the audit of issue 42
 * posted: 20,000 of them held the event loop for 19 s). Nothing of it is signed any more; it never gets that far.
 */
export function paddedWithSiblings(samlResponse: string, count: number) {
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  const at = xml.indexOf('<samlp:Status>');
  return Buffer.from(`${xml.slice(0, at)}${'<p/>'.repeat(count)}${xml.slice(at)}`).toString('base64');
}

/**
 * A SAML 2.0 identity provider for the SSO tests, run as its own process on loopback:
 * `node --import tsx test/helpers/saml-idp-process.ts` prints `listening <port>`. SAML_IDP_SIGN_RESPONSE=1
 * signs the Response as well as the Assertion.
 *
 * - GET /metadata: its EntityDescriptor (entityID = that URL), built by samlify, with a signing key and
 *   self-signed certificate made at start.
 * - GET /sso (HTTP-Redirect: deflated, base64 SAMLRequest) and POST /sso (HTTP-POST: base64 SAMLRequest):
 *   answers the page a browser auto-submits to the request's AssertionConsumerServiceURL, with a signed
 *   Response for the user last set with POST /_test/next-user.
 * - POST /_test/response `{acsUrl, audience, inResponseTo, user, variant?}`: `{samlResponse}` built directly,
 *   valid or one of the forgeries of saml-responses.ts, for tests that post to the ACS without a browser.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inflateRawSync } from 'node:zlib';
// @peculiar/x509 resolves its algorithms through tsyringe, which needs this polyfill loaded first.
import 'reflect-metadata';
import { DOMParser } from '@xmldom/xmldom';
import * as x509 from '@peculiar/x509';
import samlify from 'samlify';
import { buildResponse, type ResponseRequest, type SamlUser, type SigningKey } from './saml-responses.js';

// We build every message ourselves and the SP under test validates; samlify's schema check is not needed here.
samlify.setSchemaValidator({ validate: () => Promise.resolve('skipped') });

/** An RSA key and a self-signed certificate for it, both PEM (WebCrypto: what @peculiar/x509 signs with). */
async function generateSigningKey(): Promise<SigningKey> {
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 };
  const keys = await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01', name: 'CN=Gatehouse test IdP', keys, signingAlgorithm: algorithm,
    notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000),
  }, crypto);
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  return {
    privateKeyPem: `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`,
    certificatePem: certificate.toString('pem'),
  };
}

const key = await generateSigningKey();
// 'signed_by_other_key' needs a key nobody trusts; one per process is enough.
const otherKey = await generateSigningKey();
const signResponse = process.env.SAML_IDP_SIGN_RESPONSE === '1';
let nextUser: SamlUser = { nameId: 'default@example.com' };

const server = http.createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const entityId = `${origin}/metadata`;
const metadataXml = samlify.IdentityProvider({
  entityID: entityId,
  signingCert: key.certificatePem,
  nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'],
  singleSignOnService: [
    { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: `${origin}/sso` },
    { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', Location: `${origin}/sso` },
  ],
}).getMetadata();

const readBody = (req: http.IncomingMessage) => new Promise<string>((resolve, reject) => {
  let body = '';
  req.setEncoding('utf8').on('data', (chunk: string) => { body += chunk; }).on('end', () => resolve(body)).on('error', reject);
});
const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The AuthnRequest's ID, ACS URL and Issuer; the Redirect binding deflates it, the POST binding does not. */
function parseAuthnRequest(samlRequest: string, deflated: boolean) {
  const bytes = Buffer.from(samlRequest, 'base64');
  const doc = new DOMParser().parseFromString((deflated ? inflateRawSync(bytes) : bytes).toString('utf8'), 'text/xml');
  const request = doc.documentElement!;
  const issuer = request.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'Issuer')[0]?.textContent ?? '';
  const acsUrl = request.getAttribute('AssertionConsumerServiceURL');
  if (request.localName !== 'AuthnRequest' || !acsUrl) throw new Error('not an AuthnRequest with an AssertionConsumerServiceURL');
  return { id: request.getAttribute('ID')!, acsUrl, issuer };
}

/** What a browser gets back from the IdP: a form to the ACS that submits itself (and a button, should scripts be off). */
function autoPostPage(params: URLSearchParams, deflated: boolean) {
  const request = parseAuthnRequest(params.get('SAMLRequest') ?? '', deflated);
  const samlResponse = Buffer.from(buildResponse(entityId, key, () => otherKey, {
    acsUrl: request.acsUrl, audience: request.issuer, inResponseTo: request.id, user: nextUser, signResponse,
  })).toString('base64');
  const relayState = params.get('RelayState');
  return '<!doctype html><title>Test SAML IdP</title>'
    + `<form id="saml" method="post" action="${attr(request.acsUrl)}">`
    + `<input type="hidden" name="SAMLResponse" value="${samlResponse}">`
    + (relayState === null ? '' : `<input type="hidden" name="RelayState" value="${attr(relayState)}">`)
    + '<button type="submit">Continue</button></form>'
    + '<script>document.getElementById("saml").submit()</script>';
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
  const url = new URL(req.url ?? '/', origin);
  const route = `${req.method} ${url.pathname}`;
  if (route === 'GET /metadata') {
    res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(metadataXml);
  } else if (route === 'GET /sso') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(autoPostPage(url.searchParams, true));
  } else if (route === 'POST /sso') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(autoPostPage(new URLSearchParams(await readBody(req)), false));
  } else if (route === 'POST /_test/next-user') {
    nextUser = JSON.parse(await readBody(req)) as SamlUser;
    res.writeHead(204).end();
  } else if (route === 'POST /_test/response') {
    const request = { signResponse, ...JSON.parse(await readBody(req)) as ResponseRequest };
    const samlResponse = Buffer.from(buildResponse(entityId, key, () => otherKey, request)).toString('base64');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ samlResponse }));
  } else {
    res.writeHead(404).end();
  }
}

server.on('request', (req, res) => {
  handle(req, res).catch((error: Error) => res.writeHead(400, { 'content-type': 'text/plain' }).end(error.message));
});
process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));

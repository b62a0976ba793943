/**
 * The test IdP (test/helpers/saml-idp.ts) checked against a real SP library, @node-saml/node-saml: what it
 * signs validates, and each forgery it makes is one a careful SP refuses. The Gatehouse SP tests rely on
 * both: a rejection there must come from the SP, never from a broken IdP.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inflateRawSync } from 'node:zlib';
import { SAML, ValidateInResponseTo, type SamlConfig } from '@node-saml/node-saml';
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from '../helpers/browser.js';
import { RESPONSE_VARIANTS, startSamlIdp, type ResponseVariant, type SamlIdp } from '../helpers/saml-idp.js';

const SP = { issuer: 'https://sp.example/metadata', acs: 'https://sp.example/acs' };
const alice = { nameId: 'alice@victim.example', email: 'alice@victim.example', firstName: 'Alice', lastName: 'Liddell', groups: ['engineering', 'admins'] };

let idp: SamlIdp;
beforeAll(async () => { idp = await startSamlIdp(); });
afterAll(() => idp.stop());

const sp = (config: Partial<SamlConfig> = {}) => new SAML({
  idpCert: idp.certificatePem, issuer: SP.issuer, callbackUrl: SP.acs, audience: SP.issuer, entryPoint: idp.ssoUrl,
  wantAssertionsSigned: true, wantAuthnResponseSigned: false, validateInResponseTo: ValidateInResponseTo.never, ...config,
});

const responseFor = (variant: ResponseVariant, signResponse = false) =>
  idp.response({ acsUrl: SP.acs, audience: SP.issuer, inResponseTo: null, user: alice, variant, signResponse });

/**
 * What a naive SP does: check each signature's digest and value wherever its reference points, without asking
 * whether the signed element is the one it then reads. True means every signature in the message is intact.
 */
function signaturesVerifyNaively(base64: string) {
  const xml = Buffer.from(base64, 'base64').toString();
  const signatures = new DOMParser().parseFromString(xml, 'text/xml').getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature');
  return signatures.length > 0 && Array.from(signatures).every((signature) => {
    const verifier = new SignedXml({ publicCert: idp.certificatePem });
    verifier.loadSignature(signature);
    try { return verifier.checkSignature(xml); } catch { return false; }
  });
}

describe('the test SAML IdP', () => {
  it('publishes metadata naming itself, its signing certificate and /sso for both bindings', () => {
    expect(idp.metadataXml).toContain(`entityID="${idp.entityId}"`);
    expect(idp.metadataXml).toContain(`Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${idp.ssoUrl}"`);
    expect(idp.metadataXml).toContain(`Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${idp.ssoUrl}"`);
    const body = idp.certificatePem.replace(/-----[A-Z ]+-----|\s/g, '');
    expect(idp.metadataXml).toMatch(new RegExp(`<KeyDescriptor use="signing">.*${body.slice(0, 40).replace(/[+/]/g, '\\$&')}`));
  });

  it('signs a valid response that node-saml accepts, with the user, the email and every group', async () => {
    const { profile } = await sp().validatePostResponseAsync({ SAMLResponse: await responseFor('valid') });
    expect(profile).toMatchObject({
      issuer: idp.entityId, nameID: alice.nameId, nameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      email: alice.email, firstName: 'Alice', lastName: 'Liddell', groups: ['engineering', 'admins'],
    });
    expect(profile!.sessionIndex).toMatch(/^_[0-9a-f]{32}$/);
  });

  it('signs the Response too when asked, which an SP wanting both signatures accepts', async () => {
    const { profile } = await sp({ wantAuthnResponseSigned: true }).validatePostResponseAsync({ SAMLResponse: await responseFor('valid', true) });
    expect(profile!.nameID).toBe(alice.nameId);
  });

  // Each forgery, and what node-saml says about it: the reason proves the variant broke what it names.
  const rejected: [ResponseVariant, RegExp][] = [
    ['expired', /SAML assertion expired/],
    ['wrong_audience', /SAML assertion audience mismatch/],
    ['tampered', /Invalid (document )?signature/],
    ['unsigned', /Invalid (document )?signature/],
    ['signed_by_other_key', /Invalid (document )?signature/],
    ['xsw_response_wrap', /Invalid (document )?signature/],
    ['xsw_response_in_extensions', /Invalid (document )?signature/],
    ['xsw_assertion_sibling', /Invalid (document )?signature/],
    ['xsw_assertion_nested', /Invalid (document )?signature/],
    ['xsw_assertion_signature_moved', /Invalid (document )?signature/],
    ['xsw_assertion_in_extensions', /Invalid (document )?signature/],
    ['xsw_assertion_wrapped_in_signature_object', /Invalid (document )?signature/],
  ];
  const wrapping = RESPONSE_VARIANTS.filter((v) => v.startsWith('xsw_') && v !== 'xsw_comment_injection');
  for (const [variant, reason] of rejected) {
    it(`makes a '${variant}' response that node-saml rejects`, async () => {
      await expect(sp().validatePostResponseAsync({ SAMLResponse: await responseFor(variant) })).rejects.toThrow(reason);
    });
    it(`makes a '${variant}' response that node-saml rejects when it wants the Response signed too`, async () => {
      await expect(sp({ wantAuthnResponseSigned: true }).validatePostResponseAsync({ SAMLResponse: await responseFor(variant, true) }))
        .rejects.toThrow(reason);
    });
  }

  it('checks every variant it makes in one of the tests here', () => {
    const checked = ['valid', 'wrong_recipient', 'xsw_comment_injection', ...rejected.map(([variant]) => variant)];
    expect([...checked].sort()).toEqual([...RESPONSE_VARIANTS].sort());
  });

  // Were a wrapping forgery's signature broken, node-saml's rejection would prove nothing about wrapping.
  for (const variant of wrapping) {
    it(`keeps the genuine signatures of a '${variant}' response intact, so only the wrapping is wrong`, async () => {
      expect(signaturesVerifyNaively(await responseFor(variant))).toBe(true);
      expect(signaturesVerifyNaively(await responseFor(variant, true))).toBe(true);
      const xml = Buffer.from(await responseFor(variant), 'base64').toString();
      expect(xml).toContain('<saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">attacker@evil.example</saml:NameID>');
    });
  }

  it("breaks the signature of a 'tampered' or 'signed_by_other_key' response for anyone holding the IdP's certificate", async () => {
    expect(signaturesVerifyNaively(await responseFor('valid'))).toBe(true);
    expect(signaturesVerifyNaively(await responseFor('tampered'))).toBe(false);
    expect(signaturesVerifyNaively(await responseFor('signed_by_other_key'))).toBe(false);
    expect(Buffer.from(await responseFor('tampered'), 'base64').toString()).toContain('>attacker@evil.example</saml:NameID>');
  });

  it("makes an 'xsw_comment_injection' response whose NameID node-saml reads whole, not as the victim", async () => {
    const xml = Buffer.from(await responseFor('xsw_comment_injection'), 'base64').toString();
    expect(xml).toContain(`>${alice.nameId}<!---->.evil.example<`);
    const { profile } = await sp().validatePostResponseAsync({ SAMLResponse: await responseFor('xsw_comment_injection') });
    expect(profile!.nameID).toBe(`${alice.nameId}.evil.example`);
    expect(profile!.email).toBe(`${alice.email}.evil.example`);
  });

  // node-saml does not compare SubjectConfirmationData/@Recipient with its callbackUrl (nor Response/@Destination):
  // the response validates. Gatehouse's SP must check the Recipient itself; its tests use this variant for that.
  it("makes a 'wrong_recipient' response that differs from a valid one only in its Recipient, which node-saml does not check", async () => {
    const xml = Buffer.from(await responseFor('wrong_recipient'), 'base64').toString();
    expect(xml).toContain('Recipient="https://other-sp.example/acs"');
    expect(xml).not.toContain(`Recipient="${SP.acs}"`);
    const { profile } = await sp().validatePostResponseAsync({ SAMLResponse: await responseFor('wrong_recipient') });
    expect(profile!.nameID).toBe(alice.nameId);
  });

  it('answers GET /sso with a deflated AuthnRequest by a page that posts a response to the ACS for that request', async () => {
    await idp.nextUser({ nameId: 'bob@example.com', email: 'bob@example.com', groups: ['sales'] });
    // One SP instance for both steps: it remembers the request's ID and checks InResponseTo against it.
    const client = sp({ validateInResponseTo: ValidateInResponseTo.always });
    const authorizeUrl = new URL(await client.getAuthorizeUrlAsync('relay-123', undefined, {}));
    expect(`${authorizeUrl.origin}${authorizeUrl.pathname}`).toBe(idp.ssoUrl);
    const requestXml = inflateRawSync(Buffer.from(authorizeUrl.searchParams.get('SAMLRequest')!, 'base64')).toString();
    const requestId = /ID="([^"]+)"/.exec(requestXml)![1];

    const res = await fetch(authorizeUrl);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain(`<form id="saml" method="post" action="${SP.acs}">`);
    expect(page).toContain('<input type="hidden" name="RelayState" value="relay-123">');
    expect(page).toContain('<button type="submit">Continue</button>');
    const samlResponse = /name="SAMLResponse" value="([^"]+)"/.exec(page)![1]!;

    const { profile } = await client.validatePostResponseAsync({ SAMLResponse: samlResponse })
      .catch((error: Error) => { throw new Error(`node-saml refused the /sso response: ${error.message}`); });
    expect(profile).toMatchObject({ nameID: 'bob@example.com', email: 'bob@example.com', groups: 'sales', inResponseTo: requestId });
  });

  it('answers POST /sso with an AuthnRequest in the form the same way', async () => {
    await idp.nextUser({ nameId: 'carol@example.com' });
    const requestXml = `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_post1" Version="2.0" IssueInstant="${new Date().toISOString()}" AssertionConsumerServiceURL="${SP.acs}"><saml:Issuer>${SP.issuer}</saml:Issuer></samlp:AuthnRequest>`;
    const res = await fetch(idp.ssoUrl, { method: 'POST', body: new URLSearchParams({ SAMLRequest: Buffer.from(requestXml).toString('base64') }) });
    const samlResponse = /name="SAMLResponse" value="([^"]+)"/.exec(await res.text())![1]!;
    const { profile } = await sp().validatePostResponseAsync({ SAMLResponse: samlResponse });
    expect(profile).toMatchObject({ nameID: 'carol@example.com', inResponseTo: '_post1' });
  });
});

describe('a test SAML IdP started with signResponse', () => {
  it('signs the Response of a /sso sign-in as well as its Assertion', async () => {
    const signing = await startSamlIdp({ signResponse: true });
    try {
      await signing.nextUser({ nameId: 'erin@example.com' });
      const client = new SAML({
        idpCert: signing.certificatePem, issuer: SP.issuer, callbackUrl: SP.acs, audience: SP.issuer, entryPoint: signing.ssoUrl,
        wantAssertionsSigned: true, wantAuthnResponseSigned: true,
      });
      const page = await (await fetch(await client.getAuthorizeUrlAsync('', undefined, {}))).text();
      const samlResponse = /name="SAMLResponse" value="([^"]+)"/.exec(page)![1]!;
      expect(Buffer.from(samlResponse, 'base64').toString().match(/<ds:Signature /g)).toHaveLength(2);
      const { profile } = await client.validatePostResponseAsync({ SAMLResponse: samlResponse });
      expect(profile!.nameID).toBe('erin@example.com');
    } finally {
      await signing.stop();
    }
  });
});

describe.skipIf(!hasChromium)('the test SAML IdP in a browser', () => {
  it('sends Chromium on to the ACS with a form post that carries the response and the RelayState', async () => {
    await idp.nextUser({ nameId: 'dave@example.com' });
    // The ACS is a real server: the auto-submitted form is a top-level navigation Playwright cannot intercept.
    let received: (body: URLSearchParams) => void;
    const posted = new Promise<URLSearchParams>((resolve) => { received = resolve; });
    const acs = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => { body += chunk; }).on('end', () => {
        received(new URLSearchParams(body));
        res.writeHead(200, { 'content-type': 'text/plain' }).end('signed in');
      });
    });
    await new Promise<void>((resolve) => acs.listen(0, '127.0.0.1', resolve));
    const browser = await launchChromium();
    try {
      const client = sp({ callbackUrl: `http://127.0.0.1:${(acs.address() as AddressInfo).port}/acs`, validateInResponseTo: ValidateInResponseTo.always });
      const page = await browser.newPage();
      await page.goto(await client.getAuthorizeUrlAsync('relay-browser', undefined, {}));
      const form = await posted;
      expect(form.get('RelayState')).toBe('relay-browser');
      const { profile } = await client.validatePostResponseAsync({ SAMLResponse: form.get('SAMLResponse')! });
      expect(profile!.nameID).toBe('dave@example.com');
      await expect.poll(() => page.textContent('body')).toBe('signed in');
    } finally {
      await browser.close();
      await new Promise<void>((resolve) => { acs.close(() => resolve()); });
    }
  });
});

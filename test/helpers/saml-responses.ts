/**
 * SAML 2.0 Responses as an IdP signs them, and the forged ones the SP must refuse: the builders behind
 * test/helpers/saml-idp-process.ts. The XML is written here from one template (so every variant differs from
 * the valid one only where it says), signed with samlify's SamlLib (xml-crypto underneath: RSA-SHA256,
 * exclusive c14n), and the signature-wrapping variants are cut and pasted with @xmldom/xmldom after signing,
 * as an attacker holding a genuine signed Response would (Somorovsky et al., "On Breaking SAML", 2012).
 */
import { randomBytes } from 'node:crypto';
import { DOMParser, XMLSerializer } from '@xmldom/xmldom';
import samlify from 'samlify';

// samlify is CommonJS: its named exports are not visible to ESM imports.
const { SamlLib } = samlify;

export const RESPONSE_VARIANTS = [
  'valid', 'expired', 'wrong_audience', 'wrong_recipient', 'tampered', 'unsigned', 'signed_by_other_key',
  'xsw_response_wrap', 'xsw_response_in_extensions', 'xsw_assertion_sibling', 'xsw_assertion_nested', 'xsw_assertion_signature_moved',
  'xsw_assertion_in_extensions', 'xsw_assertion_wrapped_in_signature_object', 'xsw_comment_injection',
] as const;
export type ResponseVariant = typeof RESPONSE_VARIANTS[number];

export interface SamlUser {
  nameId: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  groups?: string[];
  /**
   * The assertion's whole attribute statement, by attribute name (as Okta or Entra ID name them), replacing the
   * default `email`, `firstName`, `lastName` and `groups`; an empty record sends no AttributeStatement at all.
   */
  attributes?: Record<string, string[]>;
  /** The NameID's Format [urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress]. */
  nameIdFormat?: string;
  /** Who the forged assertion of a wrapping variant names instead (default attacker@evil.example). */
  evilNameId?: string;
  evilEmail?: string;
}

export interface ResponseRequest {
  acsUrl: string;
  audience: string;
  inResponseTo: string | null;
  user: SamlUser;
  variant?: ResponseVariant;
  /** Sign the Response element too, not only the Assertion. */
  signResponse?: boolean;
  /** The Issuer of the Assertion and of the Response [the IdP's entity ID], signed with the IdP's own key all the same. */
  issuer?: string;
  /** The Response's Issuer alone [`issuer`]; null sends none (not with `signResponse`: its signature goes after that Issuer). */
  responseIssuer?: string | null;
  /** The Response's Destination [acsUrl]; null sends none. */
  destination?: string | null;
}

export interface SigningKey { privateKeyPem: string; certificatePem: string }

const NS = {
  samlp: 'urn:oasis:names:tc:SAML:2.0:protocol',
  saml: 'urn:oasis:names:tc:SAML:2.0:assertion',
  ds: 'http://www.w3.org/2000/09/xmldsig#',
};
const MINUTE = 60_000;
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';

/** samlify puts the certificate into KeyInfo as given: the base64 body, without the PEM armour. */
const certificateBody = (key: SigningKey) => key.certificatePem.replace(/-----[A-Z ]+-----|\s/g, '');
const newId = () => `_${randomBytes(16).toString('hex')}`;
const iso = (ms: number) => new Date(ms).toISOString();
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

interface AssertionFields {
  id: string; issuer: string; nameId: string; email: string; user: SamlUser;
  recipient: string; audience: string; inResponseTo: string | null; now: number; expiresAt: number;
}

function attribute(name: string, values: string[]) {
  return `<saml:Attribute Name="${name}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${
    values.map((v) => `<saml:AttributeValue xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="xs:string">${esc(v)}</saml:AttributeValue>`).join('')
  }</saml:Attribute>`;
}

function assertionXml(f: AssertionFields) {
  const irt = f.inResponseTo === null ? '' : ` InResponseTo="${esc(f.inResponseTo)}"`;
  const attributes = f.user.attributes ? Object.entries(f.user.attributes).map(([name, values]) => attribute(name, values)) : [
    attribute('email', [f.email]),
    ...(f.user.firstName === undefined ? [] : [attribute('firstName', [f.user.firstName])]),
    ...(f.user.lastName === undefined ? [] : [attribute('lastName', [f.user.lastName])]),
    ...(f.user.groups === undefined ? [] : [attribute('groups', f.user.groups)]),
  ];
  const format = f.user.nameIdFormat ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
  return `<saml:Assertion xmlns:saml="${NS.saml}" ID="${f.id}" Version="2.0" IssueInstant="${iso(f.now)}">`
    + `<saml:Issuer>${esc(f.issuer)}</saml:Issuer>`
    + `<saml:Subject><saml:NameID Format="${esc(format)}">${esc(f.nameId)}</saml:NameID>`
    + `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${iso(f.expiresAt)}" Recipient="${esc(f.recipient)}"${irt}/></saml:SubjectConfirmation></saml:Subject>`
    + `<saml:Conditions NotBefore="${iso(f.now - MINUTE)}" NotOnOrAfter="${iso(f.expiresAt)}"><saml:AudienceRestriction><saml:Audience>${esc(f.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>`
    + `<saml:AuthnStatement AuthnInstant="${iso(f.now)}" SessionIndex="${newId()}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`
    + (attributes.length === 0 ? '' : `<saml:AttributeStatement>${attributes.join('')}</saml:AttributeStatement>`)
    + '</saml:Assertion>';
}

function responseXml(issuer: string | null, destination: string | null, inResponseTo: string | null, now: number, assertion: string) {
  const irt = inResponseTo === null ? '' : ` InResponseTo="${esc(inResponseTo)}"`;
  const to = destination === null ? '' : ` Destination="${esc(destination)}"`;
  return `<samlp:Response xmlns:samlp="${NS.samlp}" xmlns:saml="${NS.saml}" ID="${newId()}" Version="2.0" IssueInstant="${iso(now)}"${to}${irt}>`
    + (issuer === null ? '' : `<saml:Issuer>${esc(issuer)}</saml:Issuer>`)
    + `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>`
    + assertion
    + '</samlp:Response>';
}

/** The Assertion's signature goes after its Issuer, the Response's after its own Issuer: where the schema wants them. */
function signAssertion(xml: string, key: SigningKey) {
  return SamlLib.constructSAMLSignature({
    rawSamlMessage: xml, privateKey: key.privateKeyPem, signingCert: certificateBody(key), signatureAlgorithm: RSA_SHA256, isBase64Output: false,
    referenceTagXPath: "/*[local-name(.)='Response']/*[local-name(.)='Assertion']",
    signatureConfig: { prefix: 'ds', location: { reference: "/*[local-name(.)='Response']/*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' } },
  });
}

function signResponse(xml: string, key: SigningKey) {
  return SamlLib.constructSAMLSignature({
    rawSamlMessage: xml, privateKey: key.privateKeyPem, signingCert: certificateBody(key), signatureAlgorithm: RSA_SHA256, isBase64Output: false,
    isMessageSigned: true,
    signatureConfig: { prefix: 'ds', location: { reference: "/*[local-name(.)='Response']/*[local-name(.)='Issuer']", action: 'after' } },
  });
}

const parse = (xml: string) => new DOMParser().parseFromString(xml, 'text/xml');
const child = (parent: Element, ns: string, name: string) =>
  Array.from(parent.childNodes).find((n): n is Element => n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === name);

/**
 * A signed Response for `req`, or the forged one its variant names. `otherKey` is a key the SP does not
 * trust, for 'signed_by_other_key'.
 */
export function buildResponse(idpEntityId: string, key: SigningKey, otherKey: () => SigningKey, req: ResponseRequest): string {
  const variant = req.variant ?? 'valid';
  const issuer = req.issuer ?? idpEntityId;
  const now = Date.now() - (variant === 'expired' ? 20 * MINUTE : 0);
  const user = req.user;
  const fields: AssertionFields = {
    id: newId(), issuer, nameId: user.nameId, email: user.email ?? user.nameId, user,
    recipient: variant === 'wrong_recipient' ? 'https://other-sp.example/acs' : req.acsUrl,
    audience: variant === 'wrong_audience' ? 'https://evil.example/sp' : req.audience,
    inResponseTo: req.inResponseTo,
    // Expired: NotOnOrAfter 10 minutes ago, with IssueInstant 20 minutes ago.
    now, expiresAt: variant === 'expired' ? Date.now() - 10 * MINUTE : now + 5 * MINUTE,
  };
  const evilNameId = user.evilNameId ?? 'attacker@evil.example';
  const evil: AssertionFields = { ...fields, id: newId(), nameId: evilNameId, email: user.evilEmail ?? evilNameId };
  if (variant === 'xsw_comment_injection') { fields.nameId += '.evil.example'; fields.email += '.evil.example'; }

  const responseIssuer = req.responseIssuer === undefined ? issuer : req.responseIssuer;
  const unsigned = responseXml(responseIssuer, req.destination === undefined ? req.acsUrl : req.destination, req.inResponseTo, now, assertionXml(fields));
  if (variant === 'unsigned') return unsigned;
  let signed = signAssertion(unsigned, variant === 'signed_by_other_key' ? otherKey() : key);
  if (req.signResponse || variant.startsWith('xsw_response_')) signed = signResponse(signed, key);

  switch (variant) {
    case 'tampered':
      // Changed after signing: the digest over the Assertion no longer matches.
      return signed.split(esc(user.nameId)).join(esc(evilNameId)).split(esc(fields.email)).join(esc(evil.email));
    case 'xsw_comment_injection':
      // CVE-2017-11427: comments are outside exclusive c14n, so the signature still covers
      // "victim.evil.example" while a parser that reads only the first text node sees "victim".
      return signed.split(`>${esc(fields.nameId)}<`).join(`>${esc(user.nameId)}<!---->.evil.example<`)
        .split(`>${esc(fields.email)}<`).join(`>${esc(user.email ?? user.nameId)}<!---->.evil.example<`);
    case 'xsw_response_wrap':
    case 'xsw_response_in_extensions':
      return wrapResponse(signed, evil, variant);
    default:
      return variant.startsWith('xsw_assertion_') ? wrapAssertion(signed, evil, variant) : signed;
  }
}

/**
 * XSW1 ('xsw_response_wrap'): the genuine signed Response goes inside the Object of its own Signature, which
 * now sits in an evil Response (new ID) carrying an unsigned Assertion about someone else. XSW2-like
 * ('xsw_response_in_extensions'): the copy goes into the evil Response's Extensions instead. The signature
 * still verifies against the copy; an SP that does not check what the reference points at reads the evil one.
 */
function wrapResponse(signedXml: string, evil: AssertionFields, variant: ResponseVariant) {
  const doc = parse(signedXml);
  const original = doc.documentElement!;
  const evilResponse = original.cloneNode(true) as Element;
  evilResponse.setAttribute('ID', newId());
  const signature = child(evilResponse, NS.ds, 'Signature')!;
  // The copy goes without its own Signature: the enveloped transform left it out of the digest anyway, and
  // two Signatures for one reference is something even a lax verifier (xml-crypto 6) refuses outright.
  const copy = original.cloneNode(true) as Element;
  copy.removeChild(child(copy, NS.ds, 'Signature')!);
  if (variant === 'xsw_response_wrap') {
    const object = doc.createElementNS(NS.ds, 'ds:Object');
    object.appendChild(copy);
    signature.appendChild(object);
  } else {
    const extensions = doc.createElementNS(NS.samlp, 'samlp:Extensions');
    extensions.appendChild(copy);
    evilResponse.insertBefore(extensions, child(evilResponse, NS.samlp, 'Status')!);
  }
  const oldAssertion = child(evilResponse, NS.saml, 'Assertion')!;
  evilResponse.replaceChild(parse(assertionXml(evil)).documentElement!, oldAssertion);
  return new XMLSerializer().serializeToString(evilResponse);
}

/** XSW3 to XSW8 (the assertion-level ones): the signed Assertion stays in the message, an evil one beside it. */
function wrapAssertion(signedXml: string, evil: AssertionFields, variant: ResponseVariant) {
  const doc = parse(signedXml);
  const response = doc.documentElement!;
  const signedAssertion = child(response, NS.saml, 'Assertion')!;
  // A Response signature no longer matches once the assertions move: the attacker drops it, counting on an
  // SP that requires only the Assertion's.
  const responseSignature = child(response, NS.ds, 'Signature');
  if (responseSignature) response.removeChild(responseSignature);
  const evilAssertion = doc.importNode(parse(assertionXml(evil)).documentElement!, true) as Element;
  if (variant === 'xsw_assertion_sibling') {
    // XSW3: the evil Assertion first, the signed one after it; an SP reading the first Assertion reads the evil one.
    response.insertBefore(evilAssertion, signedAssertion);
  } else if (variant === 'xsw_assertion_nested') {
    // XSW4: the signed Assertion becomes a child of the evil one, which takes its place.
    response.replaceChild(evilAssertion, signedAssertion);
    evilAssertion.appendChild(signedAssertion);
  } else if (variant === 'xsw_assertion_signature_moved') {
    // XSW5: the evil Assertion carries the genuine Signature; the original, without it, follows as a sibling.
    const signature = child(signedAssertion, NS.ds, 'Signature')!;
    signedAssertion.removeChild(signature);
    evilAssertion.insertBefore(signature, child(evilAssertion, NS.saml, 'Subject')!);
    response.insertBefore(evilAssertion, signedAssertion);
  } else if (variant === 'xsw_assertion_in_extensions') {
    // XSW7: the signed Assertion hidden in Extensions (schema allows any content there), the evil one in its place.
    const extensions = doc.createElementNS(NS.samlp, 'samlp:Extensions');
    response.replaceChild(evilAssertion, signedAssertion);
    extensions.appendChild(signedAssertion);
    response.insertBefore(extensions, child(response, NS.samlp, 'Status')!);
  } else {
    // XSW8: the evil Assertion carries the genuine Signature, whose Object holds the original Assertion
    // without its signature (the enveloped transform drops it anyway, so the digest still matches).
    const signature = child(signedAssertion, NS.ds, 'Signature')!;
    signedAssertion.removeChild(signature);
    const object = doc.createElementNS(NS.ds, 'ds:Object');
    object.appendChild(signedAssertion.cloneNode(true));
    signature.appendChild(object);
    evilAssertion.insertBefore(signature, child(evilAssertion, NS.saml, 'Subject')!);
    response.replaceChild(evilAssertion, signedAssertion);
  }
  return new XMLSerializer().serializeToString(doc);
}

import type * as NodeSaml from '@node-saml/node-saml';
import { DOMParser } from '@xmldom/xmldom';
import type { IdpDescription } from './metadata.js';
import { beyondXmlLimits } from './xml-limits.js';

/** A connection as the service provider runs it: who we are to the IdP, and the IdP. */
export interface SamlSettings { spEntityId: string; acsUrl: string; idp: IdpDescription; groupsAttribute: string }

/** What an accepted assertion says, and what its single use is tracked by. */
export interface SamlAssertion {
  subject: string; email: string | null; firstName: string | null; lastName: string | null; name: string | null; groups: string[];
  assertionId: string; inResponseTo: string; notOnOrAfter: Date;
}

/** A response the service refuses: the reason goes to the log, never to the browser. */
export class SamlRefusal extends Error {}

// node-saml and its XML stack are loaded by the first SAML exchange: a service without SAML connections never holds them.
let library: typeof NodeSaml | undefined;
const load = async () => (library ??= await import('@node-saml/node-saml'));

/** Assertions are short-lived; a clock a minute apart from the IdP's still works. */
const CLOCK_SKEW_MS = 60_000;
/** An assertion older than this is refused even when the IdP gave it a longer life. */
const MAX_ASSERTION_AGE_MS = 10 * 60_000;

const ATTRIBUTE_NAMES = {
  email: ['email', 'mail', 'emailaddress', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress', 'urn:oid:0.9.2342.19200300.100.1.3', 'user.email'],
  firstName: ['firstname', 'givenname', 'given_name', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname', 'urn:oid:2.5.4.42', 'user.firstname'],
  lastName: ['lastname', 'surname', 'sn', 'family_name', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname', 'urn:oid:2.5.4.4', 'user.lastname'],
  name: ['name', 'displayname', 'http://schemas.microsoft.com/identity/claims/displayname', 'urn:oid:2.16.840.1.113730.3.1.241'],
};
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

const texts = (value: unknown): string[] =>
  (Array.isArray(value) ? value : [value]).flatMap((v) => (typeof v === 'string' && v.trim() !== '' ? [v.trim()] : []));

/** The first value of the first attribute with one of the names (compared case-insensitively, as IdPs spell them variously). */
function attribute(attributes: Record<string, unknown>, names: string[]): string | null {
  const byName = new Map(Object.entries(attributes).map(([key, value]) => [key.toLowerCase(), value]));
  for (const name of names) {
    const [first] = texts(byName.get(name.toLowerCase()));
    if (first) return first;
  }
  return null;
}

/** A value from the message, as a log line quotes it: an unsigned Response can say anything, at any length. */
const quoted = (value: string | null | undefined) => (value == null ? 'none' : JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value));

const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';

/** The Response's own Issuer and Destination, when it has them: node-saml reads neither (its `idpIssuer` checks logout messages only). */
function responseHeader(xml: string) {
  const response = new DOMParser().parseFromString(xml, 'text/xml').documentElement!;
  const issuer = Array.from(response.childNodes)
    .find((node): node is Element => node.nodeType === 1 && (node as Element).namespaceURI === ASSERTION_NS && (node as Element).localName === 'Issuer');
  return { issuer: issuer ? issuer.textContent : null, destination: response.hasAttribute('Destination') ? response.getAttribute('Destination') : null };
}

/**
 * The assertion must be the connection's IdP's (an IdP that signs for many tenants with one key signs their
 * assertions too), and so must the Response when it names an issuer. A Destination, when there is one, must
 * be this ACS (SAML bindings §3.5.5.2): a response the IdP sent to another connection is not this one's.
 */
function checkIssuersAndDestination(settings: SamlSettings, assertionIssuer: string | undefined, responseXml: string) {
  const expected = settings.idp.entityId;
  if (assertionIssuer !== expected) throw new SamlRefusal(`the assertion's Issuer is ${quoted(assertionIssuer)}, not the IdP's entity ID ${quoted(expected)}`);
  const { issuer, destination } = responseHeader(responseXml);
  if (issuer !== null && issuer !== expected) throw new SamlRefusal(`the Response's Issuer is ${quoted(issuer)}, not the IdP's entity ID ${quoted(expected)}`);
  if (destination !== null && destination !== settings.acsUrl) throw new SamlRefusal(`the Response's Destination is ${quoted(destination)}, not this ACS ${quoted(settings.acsUrl)}`);
}

type XmlNode = { $?: Record<string, string>; [child: string]: unknown };
const children = (node: XmlNode | undefined, name: string) => (node?.[name] as XmlNode[] | undefined) ?? [];

/**
 * The checks node-saml leaves to its caller, on the signed assertion only: a bearer SubjectConfirmation whose
 * Recipient is this ACS URL (an assertion for another service provider is refused here even when its
 * audience matched), and the assertion's ID and end of life, which the replay cache keeps.
 */
function confirmedAssertion(assertion: XmlNode, acsUrl: string) {
  const id = assertion.$?.ID;
  if (!id) throw new SamlRefusal('the assertion has no ID');
  const confirmations = children(children(assertion, 'Subject')[0], 'SubjectConfirmation').flatMap((c) => children(c, 'SubjectConfirmationData'));
  const confirmed = confirmations.find((data) => data.$?.Recipient === acsUrl);
  if (!confirmed) throw new SamlRefusal(`no SubjectConfirmationData has Recipient ${acsUrl}`);
  const ends = [confirmed.$?.NotOnOrAfter, children(assertion, 'Conditions')[0]?.$?.NotOnOrAfter].filter((v): v is string => v !== undefined).map((v) => Date.parse(v));
  const notOnOrAfter = new Date(Math.max(...ends, Date.now() + MAX_ASSERTION_AGE_MS) + CLOCK_SKEW_MS);
  return { id, notOnOrAfter };
}

/** The service provider side of SAML 2.0 Web Browser SSO (SP-initiated, HTTP-Redirect out, HTTP-POST back), over node-saml. */
export function createSamlServiceProvider() {
  async function sp(settings: SamlSettings, extra: Partial<NodeSaml.SamlConfig> = {}) {
    const { SAML, ValidateInResponseTo } = await load();
    return new SAML({
      issuer: settings.spEntityId, callbackUrl: settings.acsUrl, audience: settings.spEntityId,
      entryPoint: settings.idp.ssoUrl, idpIssuer: settings.idp.entityId, idpCert: settings.idp.certificates,
      wantAssertionsSigned: true, wantAuthnResponseSigned: false, signatureAlgorithm: 'sha256',
      acceptedClockSkewMs: CLOCK_SKEW_MS, maxAssertionAgeMs: MAX_ASSERTION_AGE_MS,
      identifierFormat: null, disableRequestedAuthnContext: true,
      validateInResponseTo: ValidateInResponseTo.always, requestIdExpirationPeriodMs: MAX_ASSERTION_AGE_MS,
      ...extra,
    });
  }

  return {
    /** The IdP's URL carrying a new AuthnRequest with this ID (HTTP-Redirect binding). */
    async authorizeUrl(settings: SamlSettings, requestId: string): Promise<string> {
      const saml = await sp(settings, { generateUniqueId: () => requestId, cacheProvider: NO_CACHE });
      return saml.getAuthorizeUrlAsync('', undefined, {});
    },

    /**
     * Validates a posted SAMLResponse: its size and shape first (xml-limits.ts, before any XML library
     * reads it), then the assertion's signature by one of the IdP's certificates (only signed XML is read,
     * which is what defeats signature wrapping), its issuer and the Response's, audience, time window (with
     * skew), recipient and destination, and that it answers a request this service made and that still lives.
     */
    async validate(settings: SamlSettings, samlResponse: string, isLiveRequest: (requestId: string) => Promise<boolean>): Promise<SamlAssertion> {
      const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
      const beyond = beyondXmlLimits(xml);
      if (beyond) throw new SamlRefusal(`the response is beyond the limits: ${beyond}`);
      const cacheProvider: NodeSaml.CacheProvider = {
        ...NO_CACHE,
        getAsync: async (requestId) => ((await isLiveRequest(requestId)) ? new Date().toISOString() : null),
      };
      const saml = await sp(settings, { cacheProvider });
      let profile: NodeSaml.Profile | null;
      try {
        ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
      } catch (err) {
        throw new SamlRefusal((err as Error).message, { cause: err });
      }
      if (!profile?.nameID) throw new SamlRefusal('the assertion names no subject');
      if (typeof profile.inResponseTo !== 'string') throw new SamlRefusal('the response answers no request of this service (IdP-initiated sign-in is off)');
      checkIssuersAndDestination(settings, profile.issuer, xml);
      const { id, notOnOrAfter } = confirmedAssertion((profile.getAssertion!() as { Assertion: XmlNode }).Assertion, settings.acsUrl);
      const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
      const email = attribute(attributes, ATTRIBUTE_NAMES.email) ?? (profile.nameIDFormat === EMAIL_FORMAT ? profile.nameID : null);
      return {
        subject: profile.nameID, email, groups: texts(Object.entries(attributes).find(([key]) => key.toLowerCase() === settings.groupsAttribute.toLowerCase())?.[1]),
        firstName: attribute(attributes, ATTRIBUTE_NAMES.firstName), lastName: attribute(attributes, ATTRIBUTE_NAMES.lastName), name: attribute(attributes, ATTRIBUTE_NAMES.name),
        assertionId: id, inResponseTo: profile.inResponseTo, notOnOrAfter,
      };
    },

    /** The service provider's metadata XML, for IdPs that import it. */
    async metadata(settings: SamlSettings): Promise<string> {
      return (await sp(settings, { cacheProvider: NO_CACHE })).generateServiceProviderMetadata(null);
    },
  };
}
export type SamlServiceProvider = ReturnType<typeof createSamlServiceProvider>;

/** node-saml's request cache, unused: the service keeps its requests in the database (sso_requests), for every process. */
const NO_CACHE: NodeSaml.CacheProvider = { saveAsync: async () => null, getAsync: async () => null, removeAsync: async () => null };

import { X509Certificate } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import xpath from 'xpath';
import { identityProviderFetch } from '../platform/net/outbound.js';

/** What the service needs of a SAML IdP: who it is, where browsers go, and the certificates its signatures verify with. */
export interface IdpDescription { entityId: string; ssoUrl: string; certificates: string[] }

const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const select = xpath.useNamespaces({ md: 'urn:oasis:names:tc:SAML:2.0:metadata', ds: 'http://www.w3.org/2000/09/xmldsig#' });
const MAX_METADATA_BYTES = 256 * 1024;

/** A certificate as PEM, from PEM or bare base64 DER; undefined when it is not an X.509 certificate. */
export function toPem(text: string): string | undefined {
  const base64 = text.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+=*$/.test(base64)) return undefined;
  const pem = `-----BEGIN CERTIFICATE-----\n${base64.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----`;
  try {
    new X509Certificate(pem);
    return pem;
  } catch {
    return undefined;
  }
}

/**
 * Reads an IdP's EntityDescriptor: its entityID, its SingleSignOnService for the HTTP-Redirect binding (the
 * one the service sends AuthnRequests by), and its signing certificates (a KeyDescriptor with use="signing"
 * or without a use). Answers what is missing or wrong instead, in words an operator can act on.
 */
export function parseIdpMetadata(xml: string): IdpDescription | { problem: string } {
  const errors: string[] = [];
  const doc = new DOMParser({ errorHandler: (level: string, message: unknown) => { if (level !== 'warning') errors.push(String(message)); } }).parseFromString(xml, 'text/xml');
  if (errors.length > 0 || !doc.documentElement) return { problem: `is not well-formed XML (${errors[0] ?? 'empty'})` };
  const entity = select('//md:EntityDescriptor[md:IDPSSODescriptor]', doc as unknown as Node, true) as Element | undefined;
  if (!entity) return { problem: 'has no EntityDescriptor with an IDPSSODescriptor' };
  const entityId = entity.getAttribute('entityID');
  if (!entityId) return { problem: 'has no entityID' };
  const sso = select(`md:IDPSSODescriptor/md:SingleSignOnService[@Binding='${REDIRECT_BINDING}']/@Location`, entity, true) as Attr | undefined;
  if (!sso?.value) return { problem: 'has no SingleSignOnService for the HTTP-Redirect binding' };
  const certificates = (select("md:IDPSSODescriptor/md:KeyDescriptor[not(@use) or @use='signing']//ds:X509Certificate", entity) as Node[])
    .map((node) => toPem(node.textContent ?? ''));
  if (certificates.length === 0) return { problem: 'has no signing certificate (KeyDescriptor use="signing")' };
  if (certificates.some((pem) => pem === undefined)) return { problem: 'has a signing certificate that is not a valid X.509 certificate' };
  return { entityId, ssoUrl: sso.value, certificates: certificates as string[] };
}

/** The metadata document at the URL, within the time limit and size; the reason otherwise. */
export async function fetchMetadata(url: string, timeoutMs: number): Promise<{ xml: string } | { reason: string }> {
  try {
    const response = await identityProviderFetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error', headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } });
    if (!response.ok) return { reason: `it answered ${response.status}` };
    const text = await response.text();
    if (text.length > MAX_METADATA_BYTES) return { reason: 'it is larger than 256 KB' };
    return { xml: text };
  } catch (err) {
    return { reason: (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (err as Error).message };
  }
}

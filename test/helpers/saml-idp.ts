import { startHelperProcess } from './helper-process.js';
import type { ResponseRequest, SamlUser } from './saml-responses.js';

export { RESPONSE_VARIANTS, type ResponseVariant, type SamlUser } from './saml-responses.js';


export interface SamlIdp {
  /** Also the URL of its metadata. */
  entityId: string;
  /** The SingleSignOnService, for both the HTTP-Redirect and the HTTP-POST binding. */
  ssoUrl: string;
  metadataUrl: string;
  /** The EntityDescriptor, fetched once at start. */
  metadataXml: string;
  /** The certificate the IdP signs with, PEM. */
  certificatePem: string;
  /** Who the next sign-in through /sso is. */
  nextUser(user: SamlUser): Promise<void>;
  /** A base64 SAMLResponse for posting to an ACS directly: valid, or the forgery its variant names. */
  response(request: ResponseRequest): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts test/helpers/saml-idp-process.ts as its own process on loopback. `signResponse` makes /sso sign
 * the Response element as well as the Assertion (a request to `response()` can still say otherwise).
 */
export async function startSamlIdp(options: { signResponse?: boolean } = {}): Promise<SamlIdp> {
  const { port, stop } = await startHelperProcess('test/helpers/saml-idp-process.ts', 'SAML IdP', { ...process.env, SAML_IDP_SIGN_RESPONSE: options.signResponse ? '1' : '0' });
  const origin = `http://127.0.0.1:${port}`;
  const metadataXml = await (await fetch(`${origin}/metadata`)).text();
  const certificate = /<ds:X509Certificate>([^<]+)</.exec(metadataXml)![1]!;

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res;
  };
  return {
    entityId: `${origin}/metadata`,
    ssoUrl: `${origin}/sso`,
    metadataUrl: `${origin}/metadata`,
    metadataXml,
    certificatePem: `-----BEGIN CERTIFICATE-----\n${certificate.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`,
    async nextUser(user) { await post('/_test/next-user', user); },
    async response(request) { return ((await (await post('/_test/response', request)).json()) as { samlResponse: string }).samlResponse; },
    stop: () => stop(),
  };
}

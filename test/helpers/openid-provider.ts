import { startHelperProcess } from './helper-process.js';


/** The account the provider signs in as next: OpenID Connect claims. */
export interface ProviderAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  name?: string;
  groups?: string[];
}

export interface OpenIdProvider {
  issuer: string;
  /** Who the next login at the provider signs in as. */
  nextAccount(account: ProviderAccount): Promise<void>;
  /** Registers a relying party (RFC 7591) with these redirect URIs; answers its credentials. */
  register(redirectUris: string[]): Promise<{ clientId: string; clientSecret: string }>;
  stop(): Promise<void>;
}

/** Starts test/helpers/openid-provider-process.ts (oidc-provider) as its own process on loopback. */
export async function startOpenIdProvider(): Promise<OpenIdProvider> {
  const { port, stop } = await startHelperProcess('test/helpers/openid-provider-process.ts', 'OpenID provider');
  const issuer = `http://127.0.0.1:${port}`;
  return {
    issuer,
    async nextAccount(account) {
      const res = await fetch(`${issuer}/test/next-account`, { method: 'POST', body: JSON.stringify(account) });
      if (res.status !== 204) throw new Error(`next-account: ${res.status}`);
    },
    async register(redirectUris) {
      const res = await fetch(`${issuer}/reg`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: redirectUris, token_endpoint_auth_method: 'client_secret_basic' }),
      });
      const body = await res.json() as { client_id: string; client_secret: string };
      if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(body)}`);
      return { clientId: body.client_id, clientSecret: body.client_secret };
    },
    stop: () => stop(),
  };
}

/** A cookie jar for fetch: what the provider set, sent back on the next request to it. */
export function cookieJar() {
  const cookies = new Map<string, string>();
  return {
    header: () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
    store(response: Response) {
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair.indexOf('=');
        cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
      }
    },
  };
}

/**
 * What a browser does at the provider after our authorize redirect: opens the authorization URL, submits
 * the login page, follows the redirects, and answers the URL the provider sends the browser back to.
 */
export async function loginAtProvider(authorizationUrl: string): Promise<URL> {
  const jar = cookieJar();
  let url = new URL(authorizationUrl);
  let method = 'GET';
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(url, { method, redirect: 'manual', headers: { cookie: jar.header() } });
    jar.store(res);
    if (res.status === 200 && url.pathname.startsWith('/interaction/')) {
      url = new URL(`${url.pathname}/login`, url);
      method = 'POST';
      continue;
    }
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) throw new Error(`the provider answered ${res.status} at ${url.href}: ${await res.text()}`);
    url = new URL(location, url);
    method = 'GET';
    if (url.origin !== new URL(authorizationUrl).origin) return url;
  }
  throw new Error('too many redirects at the provider');
}

/** Schemes that run code or read local data when navigated to: never an origin, never a redirect target. */
const DANGEROUS_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:', 'filesystem:']);

/** Exactly `scheme://host[:port]`: no path (not even "/"), query, fragment, credentials, wildcard or backslash. */
const ORIGIN_SHAPE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@\\*\s]+$/;

/**
 * Normalises a full origin (`scheme://host[:port]`), http or not (`capacitor://localhost`,
 * `chrome-extension://abc`). Returns undefined for anything that is not exactly an origin:
 * paths, queries, fragments, credentials, wildcards, and schemes that run code (`javascript:`).
 */
export function normalizeOrigin(input: string): string | undefined {
  if (!ORIGIN_SHAPE.test(input)) return undefined;
  let url: URL;
  try { url = new URL(input); } catch { return undefined; }
  if (!url.host || DANGEROUS_SCHEMES.has(url.protocol)) return undefined;
  if (url.username || url.password || url.search || url.hash) return undefined;
  if (url.pathname !== '' && url.pathname !== '/') return undefined;
  return originOf(url);
}

function originOf(url: URL): string {
  // URL.origin is "null" for non-special schemes, so build it the same way for every scheme.
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : `${url.protocol}//${url.host}`.toLowerCase();
}

/**
 * Printable ASCII, no space. The URL parser drops tabs and line breaks and maps fullwidth letters to ASCII,
 * so a URL outside this set is judged as another string than the one that would go into a Location header,
 * where Node refuses it (a 500 after the password was accepted). Browsers send URLs percent-encoded anyway.
 */
const URL_CHARACTERS = /^[\x21-\x7e]+$/;

/** Whether a URL is written in the characters a Location header carries as they are (see URL_CHARACTERS). */
export const isHeaderSafeUrl = (value: string) => URL_CHARACTERS.test(value);

/** Whether a redirect URL's parsed origin is one of the allowed origins (never a string prefix match), written as a header carries it. */
export function isAllowedRedirect(redirectUrl: string, allowedOrigins: string[]): boolean {
  if (!isHeaderSafeUrl(redirectUrl)) return false;
  let url: URL;
  try { url = new URL(redirectUrl); } catch { return false; }
  if (!url.host || url.username || url.password || DANGEROUS_SCHEMES.has(url.protocol)) return false;
  return allowedOrigins.includes(originOf(url));
}

/** An absolute URL with a host and a scheme that does not run code, in header-safe characters; for URLs the service links or redirects to. */
export function isSafeAbsoluteUrl(value: string): boolean {
  if (!isHeaderSafeUrl(value)) return false;
  let url: URL;
  try { url = new URL(value); } catch { return false; }
  return url.host !== '' && !DANGEROUS_SCHEMES.has(url.protocol) && !url.username && !url.password;
}

/** The origin of an absolute URL (`scheme://host[:port]`), or undefined when it has none. */
export function urlOrigin(value: string): string | undefined {
  try { return originOf(new URL(value)); } catch { return undefined; }
}

/** Hosts browsers treat as secure contexts over plain http: localhost, *.localhost and the loopback addresses. */
const LOCAL_HOST = /^(localhost|[^:]+\.localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/i;

/**
 * The environment's frontend URL (`{frontend_url}`): http for a local host, which is served without TLS in
 * development, and https for any other, which a real deployment serves behind TLS.
 */
export const frontendUrl = (frontendHost: string) => `${LOCAL_HOST.test(frontendHost) ? 'http' : 'https'}://${frontendHost}`;

/**
 * Normalises a full origin (`scheme://host[:port]`), http or not (`capacitor://localhost`,
 * `chrome-extension://abc`). Returns undefined for anything that is not exactly an origin:
 * paths, queries, fragments, credentials, wildcards.
 */
export function normalizeOrigin(input: string): string | undefined {
  if (input.includes('*') || /\s/.test(input)) return undefined;
  let url: URL;
  try { url = new URL(input); } catch { return undefined; }
  if (!url.host || url.username || url.password || url.search || url.hash) return undefined;
  if (url.pathname !== '' && url.pathname !== '/') return undefined;
  if (input.endsWith('/') || input.includes('?') || input.includes('#')) return undefined;
  return originOf(url);
}

function originOf(url: URL): string {
  // URL.origin is "null" for non-special schemes, so build it the same way for every scheme.
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : `${url.protocol}//${url.host}`.toLowerCase();
}

/** Whether a redirect URL's parsed origin is one of the allowed origins (never a string prefix match). */
export function isAllowedRedirect(redirectUrl: string, allowedOrigins: string[]): boolean {
  let url: URL;
  try { url = new URL(redirectUrl); } catch { return false; }
  if (!url.host || url.username || url.password) return false;
  return allowedOrigins.includes(originOf(url));
}

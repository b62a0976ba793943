import type { LightMyRequestResponse } from 'fastify';
import type { TestApp, TestEnv } from '../helpers/app.js';

/** The form's CSRF token in a rendered page. */
export const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1];

/** The value of a hidden field in a rendered page. */
export const hiddenValue = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1];

/** The text of the page's alert (the refusal shown beside a form). */
export const alertOf = (html: string) => /<p class="alert" role="alert">([^<]*)<\/p>/.exec(html)?.[1];

/** The cookies an answer sets, by name (the value; empty when it expires one). */
export function setCookies(res: LightMyRequestResponse): Record<string, string> {
  const header = res.headers['set-cookie'];
  const lines = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return Object.fromEntries(lines.map((line) => {
    const [pair = ''] = line.split(';');
    const at = pair.indexOf('=');
    return [pair.slice(0, at), pair.slice(at + 1)];
  }));
}

/**
 * A browser on the environment's frontend host, for inject tests: it keeps the cookies the pages set, sends
 * the frontend origin on posts as browsers do, and fills in the CSRF token of the page it last loaded.
 */
export function pageBrowser(t: TestApp, env: TestEnv, headers: Record<string, string> = {}) {
  const jar = new Map<string, string>();
  let lastPage = '';
  const origin = `http://${env.frontendHost}`;
  const cookieHeader = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
  function keep(res: LightMyRequestResponse) {
    for (const [name, value] of Object.entries(setCookies(res))) {
      if (value) jar.set(name, value); else jar.delete(name);
    }
    if (String(res.headers['content-type']).startsWith('text/html')) lastPage = res.body;
    return res;
  }
  return {
    jar,
    get page() { return lastPage; },
    get: async (url: string, extra: Record<string, string> = {}) =>
      keep(await t.app.inject({ method: 'GET', url, headers: { host: env.frontendHost, cookie: cookieHeader(), ...headers, ...extra } })),
    /** Posts the fields as a form would, with the last page's CSRF token unless `csrf` is given. */
    post: async (url: string, fields: Record<string, string>, extra: Record<string, string> = {}) => keep(await t.app.inject({
      method: 'POST', url,
      headers: { host: env.frontendHost, cookie: cookieHeader(), origin, 'content-type': 'application/x-www-form-urlencoded', ...headers, ...extra },
      payload: new URLSearchParams({ csrf: csrfOf(lastPage) ?? '', ...fields }).toString(),
    })),
  };
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { alertOf, csrfOf, pageBrowser, setCookies } from './support.js';

const APP = 'https://app.example.com';
const LANDING = `${APP}/dashboard?tab=1`;
const signInUrl = (redirect = LANDING, extra = '') => `/sign-in?redirect_url=${encodeURIComponent(redirect)}${extra}`;
/**
 * Allowed once parsed, but not as written: the URL parser drops line breaks and maps fullwidth letters to ASCII,
 * and Node refuses them in the Location header (the post used to answer 500 after the password was accepted).
 */
const UNWRITABLE = [`${APP}/dashboard\r\nSet-Cookie: x=1`, 'https://ａｐｐ.example.com/dashboard', `${APP}/ｄａｓｈｂｏａｒｄ`, '/ｓｉｇｎｅｄ-ｉｎ', `${APP}/a b`];

let t: TestApp;
let env: TestEnv;

beforeAll(async () => {
  t = await startTestApp();
  env = await t.given.environment({ lockout: { maxFailedAttempts: 3 } });
  await t.server(env).put('/allowed-origins', { origins: [APP] });
});
afterAll(() => t.close());

/** Whether a session token is live on the client plane. */
const sessionWorks = async (token: string) => (await t.client(env, { cookie: token }).get('/me')).statusCode === 200;

describe('GET /sign-in', () => {
  it('renders a form whose fields and button are labelled, with a CSRF token bound to a cookie', async () => {
    const browser = pageBrowser(t, env);
    const res = await browser.get(signInUrl());
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toMatch(/^<!doctype html><html lang="en">/);
    expect(res.body).toContain('<label for="email">Email</label><input id="email" name="email" type="email"');
    expect(res.body).toContain('<label for="password">Password</label><input id="password" name="password" type="password"');
    expect(res.body).toContain('<button type="submit">Sign in</button>');
    expect(res.body).toContain(`<form method="post" action="/sign-in?redirect_url=${encodeURIComponent(LANDING).replace(/%3D/g, '%3D')}`);
    expect(csrfOf(res.body)).toMatch(/^[\w-]{43}$/);
    expect(browser.jar.get('__hosted_csrf')).toMatch(/^[\w-]{43}$/);
    expect(res.headers['set-cookie']).toContain('HttpOnly');
    expect(String(res.headers['set-cookie'])).toContain('SameSite=Strict');
  });

  it('may not be framed and loads nothing but its own stylesheets and passkeys script, with forms ending on the allowed origins only', async () => {
    const res = await pageBrowser(t, env).get(signInUrl());
    expect(res.headers['content-security-policy']).toBe(
      `default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self' ${APP}; base-uri 'none'; frame-ancestors 'none'`);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.match(/<script[^>]*>/g)).toEqual(['<script src="/hosted-assets/passkeys.js" defer>']);
    expect(res.body).toContain('<link rel="stylesheet" href="/hosted-assets/pages.css"/>');
    expect(res.body).not.toContain('theme.css');
  });

  it('refuses a redirect_url off the allowed origins with a 400 page, whatever its disguise', async () => {
    for (const bad of ['https://evil.example', 'https://app.example.com.evil.example/', 'javascript:alert(1)', '//evil.example', `https://user@${APP.slice(8)}/`]) {
      const res = await pageBrowser(t, env).get(signInUrl(bad));
      expect(res.statusCode, bad).toBe(400);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(alertOf(res.body), bad).toBe('This link would send you to an address this service does not trust.');
      expect(res.body).not.toContain('evil.example');
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    }
  });

  it('refuses with the 400 page a redirect_url a Location header cannot carry as written, on every page that takes one', async () => {
    const paths = ['/sign-in', '/sign-up', '/verify-email', '/forgot-password', '/reset-password', '/sign-out', '/accept-invitation', '/accept-organization-invitation'];
    for (const path of paths) {
      for (const bad of UNWRITABLE) {
        const res = await pageBrowser(t, env).get(`${path}?redirect_url=${encodeURIComponent(bad)}`);
        expect(res.statusCode, `${path} ${bad}`).toBe(400);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(alertOf(res.body), bad).toBe('This link would send you to an address this service does not trust.');
      }
    }
  });

  it('answers an unknown host as the other planes do: 404 problem+json, no page', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/sign-in', headers: { host: 'nobody.example.com' } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json().properties.code).toBe('resource_not_found');
  });

  it('escapes what the link carries into the page', async () => {
    const res = await pageBrowser(t, env).get(signInUrl(`${APP}/"><script>alert(1)</script>`));
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('<script>');
  });
});

describe('POST /sign-in', () => {
  it('signs in with the client plane\'s cookie and answers 303 to redirect_url', async () => {
    const user = await t.given.user(env);
    const browser = pageBrowser(t, env);
    await browser.get(signInUrl());
    const res = await browser.post(signInUrl(), { email: user.email!, password: PASSWORD });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(LANDING);
    const cookie = String([res.headers['set-cookie']].flat().find((line) => String(line).startsWith('__session=')));
    expect(cookie).toMatch(/^__session=sess_[\w-]+; .*Path=\/; .*HttpOnly; Secure; SameSite=Lax$/);
    expect(await sessionWorks(setCookies(res).__session)).toBe(true);
  });

  it('shows a wrong password beside the form with the email kept, and counts it toward the API\'s lockout', async () => {
    const user = await t.given.user(env);
    const browser = pageBrowser(t, env);
    await browser.get(signInUrl());
    for (let i = 0; i < 3; i++) {
      const res = await browser.post(signInUrl(), { email: user.email!, password: 'wrong password' });
      expect(res.statusCode).toBe(401);
      expect(alertOf(res.body)).toBe('The email or password is wrong.');
      expect(res.body).toContain(`value="${user.email}"`);
      expect(setCookies(res).__session).toBeUndefined();
    }
    // The third failure locked the account, exactly as on POST /_svc/auth/sign-in: the right password is refused too.
    await t.app.settled();
    const locked = await browser.post(signInUrl(), { email: user.email!, password: PASSWORD });
    expect(locked.statusCode).toBe(401);
    expect((await t.client(env).post('/auth/sign-in', { email: user.email, password: PASSWORD })).statusCode).toBe(401);
  });

  it('refuses a post without the CSRF token, with a wrong one, or with another browser\'s, and signs nobody in', async () => {
    const user = await t.given.user(env);
    const victim = pageBrowser(t, env);
    await victim.get(signInUrl());
    const attacker = pageBrowser(t, env);
    await attacker.get(signInUrl());
    for (const csrf of ['', 'x'.repeat(43), csrfOf(attacker.page)!]) {
      const res = await victim.post(signInUrl(), { email: user.email!, password: PASSWORD, csrf });
      expect(res.statusCode).toBe(403);
      expect(alertOf(res.body)).toBe('This form has expired. Reload the page and try again.');
      expect(setCookies(res).__session).toBeUndefined();
    }
    const noCookie = pageBrowser(t, env);
    const res = await noCookie.post(signInUrl(), { email: user.email!, password: PASSWORD, csrf: csrfOf(victim.page)! });
    expect(res.statusCode).toBe(403);
  });

  it('refuses a post from a foreign origin even with a valid token', async () => {
    const user = await t.given.user(env);
    const browser = pageBrowser(t, env);
    await browser.get(signInUrl());
    const res = await browser.post(signInUrl(), { email: user.email!, password: PASSWORD }, { origin: 'https://evil.example' });
    expect(res.statusCode).toBe(403);
    expect(setCookies(res).__session).toBeUndefined();
  });

  it('refuses an open redirect on the post too, before any password is tried', async () => {
    const user = await t.given.user(env);
    const browser = pageBrowser(t, env);
    await browser.get(signInUrl());
    const res = await browser.post(signInUrl('https://evil.example/'), { email: user.email!, password: PASSWORD });
    expect(res.statusCode).toBe(400);
    expect(setCookies(res).__session).toBeUndefined();
  });

  it('refuses a redirect_url a Location header cannot carry on the post too, before any password is tried', async () => {
    const user = await t.given.user(env);
    const browser = pageBrowser(t, env);
    for (const bad of UNWRITABLE) {
      await browser.get(signInUrl());
      const res = await browser.post(signInUrl(bad), { email: user.email!, password: PASSWORD });
      expect(res.statusCode, bad).toBe(400);
      expect(alertOf(res.body), bad).toBe('This link would send you to an address this service does not trust.');
      expect(setCookies(res).__session).toBeUndefined();
    }
    expect(await t.db.selectFrom('sessions').select('id').where('environment_id', '=', env.id).where('user_id', '=', user.id).execute()).toEqual([]);
  });

  it('lands on a percent-encoded redirect_url exactly as the link wrote it', async () => {
    const user = await t.given.user(env);
    const landing = `${APP}/caf%C3%A9/%EF%BD%84?q=a%20b#top`;
    const browser = pageBrowser(t, env);
    expect((await browser.get(signInUrl(landing))).statusCode).toBe(200);
    const res = await browser.post(signInUrl(landing), { email: user.email!, password: PASSWORD });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(landing);
    expect(await sessionWorks(setCookies(res).__session)).toBe(true);
  });

  it('lands on hostedPages.afterSignInUrl without a redirect_url, else on the "signed in" page', async () => {
    const user = await t.given.user(env);
    const browser = pageBrowser(t, env);
    await browser.get('/sign-in');
    expect((await browser.post('/sign-in', { email: user.email!, password: PASSWORD })).headers.location).toBe('/signed-in');
    const configured = await t.given.environment({ hostedPages: { afterSignInUrl: 'https://home.example.com/welcome' } });
    const other = await t.given.user(configured);
    const elsewhere = pageBrowser(t, configured);
    await elsewhere.get('/sign-in');
    const res = await elsewhere.post('/sign-in', { email: other.email!, password: PASSWORD });
    expect(res.headers.location).toBe('https://home.example.com/welcome');
    expect((await elsewhere.get('/signed-in')).body).toContain('<h1>You are signed in</h1>');
  });
});

describe('languages', () => {
  it('speaks Danish by ?locale=da, then by Accept-Language; ?locale= wins over the header', async () => {
    const danish = await pageBrowser(t, env).get(signInUrl(LANDING, '&locale=da'));
    expect(danish.body).toMatch(/^<!doctype html><html lang="da">/);
    expect(danish.body).toContain('<label for="password">Adgangskode</label>');
    expect(danish.body).toContain('<button type="submit">Log ind</button>');
    expect(danish.body).toContain('&amp;locale=da');
    const byHeader = await pageBrowser(t, env, { 'accept-language': 'de;q=0.9, da-DK;q=0.8, en;q=0.5' }).get(signInUrl());
    expect(byHeader.body).toContain('<label for="email">E-mail</label>');
    const forced = await pageBrowser(t, env, { 'accept-language': 'da' }).get(signInUrl(LANDING, '&locale=en'));
    expect(forced.body).toContain('<label for="email">Email</label>');
  });

  it('follows the signed-in user\'s locale over Accept-Language', async () => {
    const user = await t.given.user(env);
    expect((await t.server(env).patch(`/users/${user.id}`, { locale: 'da' })).statusCode).toBe(200);
    const session = await t.given.session(env, user);
    const res = await t.app.inject({ method: 'GET', url: '/sign-out', headers: { host: env.frontendHost, cookie: `__session=${session.token}`, 'accept-language': 'en' } });
    expect(res.body).toContain('<button type="submit">Log ud</button>');
  });
});

describe('the hostedPages setting', () => {
  it('turned off, the pages are not there', async () => {
    const off = await t.given.environment({ hostedPages: { enabled: false } });
    expect((await pageBrowser(t, off).get('/sign-in')).statusCode).toBe(404);
  });

  it('brands the pages with the product name, logo and colour', async () => {
    const branded = await t.given.environment({ hostedPages: { branding: { productName: 'Acme <Books>', logoUrl: 'https://cdn.acme.example/logo.png', primaryColor: '#0b5e2e' } } });
    const browser = pageBrowser(t, branded);
    const res = await browser.get('/sign-in');
    expect(res.body).toContain('<h1>Sign in to Acme &lt;Books></h1>');
    expect(res.body).toContain('<link rel="stylesheet" href="/hosted-assets/theme.css"/>');
    expect(res.body).toContain('<img src="https://cdn.acme.example/logo.png" alt="Acme &lt;Books>" class="logo"/>');
    expect(res.headers['content-security-policy']).toContain("img-src 'self' https://cdn.acme.example;");
    const theme = await browser.get('/hosted-assets/theme.css');
    expect(theme.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(theme.body).toBe(':root { --primary: #0b5e2e; }\n');
  });

  it('is validated: a colour is #rrggbb and URLs are absolute and safe', async () => {
    const res = await t.admin.patch(`/environments/${env.id}`, { settings: { hostedPages: { afterSignInUrl: 'javascript:alert(1)', branding: { primaryColor: 'red' } } } });
    expect(res.statusCode).toBe(400);
    expect(res.json().properties.errors.map((e: { path: string }) => e.path).sort())
      .toEqual(['/body/settings/hostedPages/afterSignInUrl', '/body/settings/hostedPages/branding/primaryColor']);
  });
});

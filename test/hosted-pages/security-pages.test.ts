import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD, type TestUser } from '../helpers/given.js';
import { codeAt, eventsOf, STEP_MS } from '../factors/support.js';
import { givenCast, minted, redeem } from '../impersonation/support.js';
import { alertOf, csrfOf, hiddenValue, pageBrowser, setCookies } from './support.js';

const APP = 'https://app.example.com';
const TAB = '/account/security';
const RECENT_MS = 10 * 60_000;

let t: TestApp;
let env: TestEnv;

beforeAll(async () => {
  t = await startTestApp();
  env = await t.given.environment();
  await t.server(env).put('/allowed-origins', { origins: [APP] });
});
afterAll(() => t.close());

/** A browser signed in on /sign-in (so its session counts as recently authenticated), on the security tab. */
async function signedInBrowser(user: TestUser, query = '', targetEnv = env) {
  const browser = pageBrowser(t, targetEnv);
  await browser.get(`/sign-in${query}`);
  const res = await browser.post(`/sign-in${query}`, { email: user.email!, password: PASSWORD });
  expect(res.statusCode, res.body).toBe(303);
  const tab = await browser.get(`${TAB}${query}`);
  expect(tab.statusCode, tab.body).toBe(200);
  return browser;
}

const noticeOf = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1];
const statusOf = async (token: string) => (await t.client(env, { token }).get('/me')).statusCode;
const cookieStatus = async (token: string) => (await t.client(env, { cookie: token }).get('/me')).statusCode;

describe('GET /account/security', () => {
  it('sends a browser without a session to sign in, coming back to the tab', async () => {
    const res = await pageBrowser(t, env).get(`${TAB}?locale=da`);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/sign-in?redirect_url=${encodeURIComponent(`${TAB}?locale=da`)}&locale=da`);
  });

  it('refuses a redirect_url off the allowed origins, as every page does', async () => {
    const res = await pageBrowser(t, env).get(`${TAB}?redirect_url=${encodeURIComponent('https://evil.example/')}`);
    expect(res.statusCode).toBe(400);
    expect(alertOf(res.body)).toBe('This link would send you to an address this service does not trust.');
  });

  it('shows the password form, second factors, passkeys and the sessions with this device marked', async () => {
    const user = await t.given.user(env);
    const other = await t.given.session(env, user);
    const browser = await signedInBrowser(user);
    const html = browser.page;
    expect(html).toContain('<a href="/account/security" aria-current="page">Security</a>');
    expect(html).toContain('<label for="currentPassword">Current password</label>');
    expect(html).toContain('<label for="newPassword">New password</label>');
    expect(html).toContain('<h2 id="factors-heading">Two-step verification</h2>');
    expect(html).toContain('<button type="submit">Set up an authenticator app</button>');
    expect(html).toContain('<h2 id="passkeys-heading">Passkeys</h2>');
    expect(html).toContain('<p class="notice" data-passkey-fallback>Adding a passkey needs JavaScript and a browser that supports passkeys.</p>');
    expect(html).toContain('<form data-passkey="register" data-back="/account/security"');
    // Two sessions: this one marked, the other with a button to end it.
    expect(html.match(/<li data-session="/g)).toHaveLength(2);
    expect(html).toContain(' · <strong>This device</strong>');
    expect(html).toContain(`action="/account/security/sessions/${other.id}/revoke"`);
    expect(html.match(/\/revoke"/g)).toHaveLength(1);
    expect(html).toMatch(/IP address 127\.0\.0\.1 · last active \d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC/);
  });
});

describe('the CSP', () => {
  const scriptCsp = `default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self' ${APP}; base-uri 'none'; frame-ancestors 'none'`;
  const plainCsp = `default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self' ${APP}; base-uri 'none'; frame-ancestors 'none'`;

  it('allows Gatehouse\'s own passkeys script on the security tab and /sign-in only, and only while passkeys are on', async () => {
    const user = await t.given.user(env);
    const browser = await signedInBrowser(user);
    const tab = await browser.get(TAB);
    expect(tab.headers['content-security-policy']).toBe(scriptCsp);
    expect(tab.body).toContain('<script src="/hosted-assets/passkeys.js" defer></script>');
    const signIn = await pageBrowser(t, env).get('/sign-in');
    expect(signIn.headers['content-security-policy']).toBe(scriptCsp);
    expect(signIn.body).toContain('<script src="/hosted-assets/passkeys.js" defer></script>');
    for (const path of ['/sign-up', '/forgot-password', '/sign-out']) {
      const page = await pageBrowser(t, env).get(path);
      expect(page.headers['content-security-policy'], path).toBe(plainCsp);
      expect(page.body, path).not.toContain('<script');
    }
    const script = await browser.get('/hosted-assets/passkeys.js');
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.body).toContain("fetch(path, { method: 'POST', credentials: 'same-origin'");
  });

  it('has no script at all where passkeys are turned off', async () => {
    const off = await t.given.environment({ passkeys: { enabled: false } });
    const user = await t.given.user(off);
    const browser = await signedInBrowser(user, '', off);
    const tab = await browser.get(TAB);
    expect(tab.headers['content-security-policy']).not.toContain('script-src');
    expect(tab.body).not.toContain('<script');
    expect(tab.body).not.toContain('data-passkey');
    const signIn = await pageBrowser(t, off).get('/sign-in');
    expect(signIn.headers['content-security-policy']).not.toContain('script-src');
    expect(signIn.body).not.toContain('<script');
  });
});

describe('changing the password', () => {
  it('refuses a wrong current password beside the form, then changes it with the right one and ends the other sessions when asked', async () => {
    const user = await t.given.user(env);
    const other = await t.given.session(env, user);
    const browser = await signedInBrowser(user);
    const wrong = await browser.post(`${TAB}/password`, { currentPassword: 'not it', newPassword: 'a new long passphrase' });
    expect(wrong.statusCode).toBe(400);
    expect(alertOf(wrong.body)).toBe('The password is wrong.');
    expect(await statusOf(other.token)).toBe(200);

    const weak = await browser.post(`${TAB}/password`, { currentPassword: PASSWORD, newPassword: 'short' });
    expect(weak.statusCode).toBe(400);
    expect(alertOf(weak.body)).toBe('Choose a longer or less common password.');

    const res = await browser.post(`${TAB}/password`, { currentPassword: PASSWORD, newPassword: 'a new long passphrase', signOutOtherSessions: 'true' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${TAB}?done=password_changed`);
    expect(noticeOf((await browser.get(res.headers.location as string)).body)).toBe('Your password was changed.');
    expect(await statusOf(other.token)).toBe(401);
    expect(await cookieStatus(browser.jar.get('__session')!)).toBe(200);
    expect((await t.client(env).post('/auth/sign-in', { email: user.email, password: 'a new long passphrase' })).statusCode).toBe(200);
    expect((await eventsOf(t, env, 'user.password_changed')).filter((e) => e.actor_id === user.id)).toHaveLength(1);
  });

  it('refuses a post without the page\'s CSRF token and changes nothing', async () => {
    const user = await t.given.user(env);
    const browser = await signedInBrowser(user);
    for (const csrf of ['', 'x'.repeat(43)]) {
      const res = await browser.post(`${TAB}/password`, { currentPassword: PASSWORD, newPassword: 'a new long passphrase', csrf });
      expect(res.statusCode).toBe(403);
      expect(alertOf(res.body)).toBe('This form has expired. Reload the page and try again.');
    }
    const foreign = await browser.post(`${TAB}/password`, { currentPassword: PASSWORD, newPassword: 'a new long passphrase' }, { origin: 'https://evil.example' });
    expect(foreign.statusCode).toBe(403);
    expect((await t.client(env).post('/auth/sign-in', { email: user.email, password: PASSWORD })).statusCode).toBe(200);
  });
});

describe('second factors', () => {
  it('enrols an authenticator app: QR code and key shown, a wrong code refused, the right one answers 10 backup codes once', async () => {
    const user = await t.given.user(env);
    const browser = await signedInBrowser(user);
    const started = await browser.post(`${TAB}/totp`, {});
    expect(started.statusCode).toBe(200);
    expect(started.body).toMatch(/<svg class="qr" role="img" aria-label="QR code for your authenticator app" viewBox="0 0 (\d+) \1"/);
    expect(started.body).toMatch(/<path d="(M\d+ \d+h\d+v1h-\d+z)+" fill="#000"/);
    const secret = /<code class="secret" data-totp-secret>([A-Z2-7]+)<\/code>/.exec(started.body)![1];
    expect(started.body).toContain(`<code class="secret">otpauth://totp/${encodeURIComponent(env.name)}:`);
    expect(started.body).toContain(`secret=${secret}`);
    const factorId = hiddenValue(started.body, 'factorId')!;

    const wrong = await browser.post(`${TAB}/totp/confirm`, { factorId, code: '000000' === codeAt(t, secret) ? '111111' : '000000' });
    expect(wrong.statusCode).toBe(400);
    expect(alertOf(wrong.body)).toBe('The code is wrong or has expired.');
    expect(wrong.body).not.toContain(secret);
    expect(hiddenValue(wrong.body, 'factorId')).toBe(factorId);

    const confirmed = await browser.post(`${TAB}/totp/confirm`, { factorId, code: codeAt(t, secret) });
    expect(confirmed.statusCode).toBe(200);
    const codes = [...confirmed.body.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]);
    expect(codes).toHaveLength(10);
    t.clock.advance(STEP_MS);

    const tab = await browser.get(TAB);
    expect(tab.body).toContain('<strong>Authenticator app</strong>');
    expect(tab.body).toContain('Backup codes left: 10');
    expect(tab.body).not.toContain(codes[0]);
    const mfa = await t.client(env, { cookie: browser.jar.get('__session')! }).get('/me/mfa');
    expect(mfa.json().factors).toEqual([expect.objectContaining({ id: factorId, type: 'totp' })]);
    // A backup code from the page passes the sign-in's second step.
    const challenge = (await t.client(env).post('/auth/sign-in?_is_native=true', { email: user.email, password: PASSWORD })).json().challengeToken;
    expect((await t.client(env).post('/auth/mfa/verify?_is_native=true', { challengeToken: challenge, code: codes[0] })).statusCode).toBe(200);
  });

  it('makes new backup codes (the old ones stop working), and removes the factor after the password is confirmed again', async () => {
    const user = await t.given.user(env);
    const browser = await signedInBrowser(user);
    const started = await browser.post(`${TAB}/totp`, {});
    const secret = /data-totp-secret>([A-Z2-7]+)</.exec(started.body)![1];
    const first = await browser.post(`${TAB}/totp/confirm`, { factorId: hiddenValue(started.body, 'factorId')!, code: codeAt(t, secret) });
    const oldCode = /<li><code>([\w-]+)<\/code><\/li>/.exec(first.body)![1];
    await browser.get(TAB);
    const renewed = await browser.post(`${TAB}/backup-codes`, {});
    expect(renewed.statusCode).toBe(200);
    expect(renewed.body).toContain('<h1>Your backup codes</h1>');
    expect(renewed.body).not.toContain(oldCode);
    const challenge = (await t.client(env).post('/auth/sign-in?_is_native=true', { email: user.email, password: PASSWORD })).json().challengeToken;
    expect((await t.client(env).post('/auth/mfa/verify?_is_native=true', { challengeToken: challenge, code: oldCode })).statusCode).toBe(400);

    // Past the 10 minutes of the sign-in, removing the factor asks for the password, as DELETE /_svc/me/mfa/:id does.
    t.clock.advance(RECENT_MS + 1000);
    const tab = await browser.get(TAB);
    const factorId = /action="\/account\/security\/factors\/([\w-]+)\/remove"/.exec(tab.body)![1];
    const refused = await browser.post(`${TAB}/factors/${factorId}/remove`, {});
    expect(refused.statusCode).toBe(403);
    expect(alertOf(refused.body)).toBe('Confirm your password to do this.');
    expect(refused.body).toContain('<h2 id="reauth-heading">Confirm your password</h2>');
    expect(refused.body).toContain('<label for="reauth-password">Password</label>');

    const wrong = await browser.post(`${TAB}/reauthenticate`, { password: 'not it' });
    expect(wrong.statusCode).toBe(400);
    expect(alertOf(wrong.body)).toBe('The password is wrong.');
    expect(wrong.body).toContain('<label for="reauth-password">Password</label>');
    const confirmed = await browser.post(`${TAB}/reauthenticate`, { password: PASSWORD });
    expect(confirmed.statusCode).toBe(303);
    expect(confirmed.headers.location).toBe(`${TAB}?done=reauthenticated`);
    await browser.get(confirmed.headers.location as string);

    const removed = await browser.post(`${TAB}/factors/${factorId}/remove`, {});
    expect(removed.statusCode).toBe(303);
    expect(removed.headers.location).toBe(`${TAB}?done=factor_removed`);
    expect(noticeOf((await browser.get(removed.headers.location as string)).body)).toBe('The authenticator app was removed.');
    expect((await t.client(env, { cookie: browser.jar.get('__session')! }).get('/me/mfa')).json()).toEqual({ factors: [], backupCodesRemaining: 0 });
    expect((await eventsOf(t, env, 'user.mfa_factor_removed')).map((e) => e.actor_id)).toContain(user.id);
  });
});

describe('sessions', () => {
  it('ends another session of the user: its token gets 401 on /_svc/me, this one stays', async () => {
    const user = await t.given.user(env);
    const other = await t.given.session(env, user);
    const browser = await signedInBrowser(user);
    const res = await browser.post(`${TAB}/sessions/${other.id}/revoke`, {});
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${TAB}?done=session_revoked`);
    expect(await statusOf(other.token)).toBe(401);
    expect(await cookieStatus(browser.jar.get('__session')!)).toBe(200);
    const tab = await browser.get(res.headers.location as string);
    expect(noticeOf(tab.body)).toBe('That session was signed out.');
    expect(tab.body.match(/<li data-session="/g)).toHaveLength(1);
  });

  it('cannot end a session of another user', async () => {
    const stranger = await t.given.session(env, await t.given.user(env));
    const browser = await signedInBrowser(await t.given.user(env));
    const res = await browser.post(`${TAB}/sessions/${stranger.id}/revoke`, {});
    expect(res.statusCode).toBe(404);
    expect(await statusOf(stranger.token)).toBe(200);
  });
});

describe('an impersonated session', () => {
  it('may look but not act, as on the API: 403 impersonation_restricted beside the forms', async () => {
    const cast = await givenCast(t);
    const own = await t.given.session(cast.env, cast.target);
    const redeemed = await redeem(t, cast.env, (await minted(t, cast)).token);
    expect(redeemed.statusCode, redeemed.body).toBe(200);
    const support = pageBrowser(t, cast.env);
    support.jar.set('__session', redeemed.json().sessionToken);
    expect((await support.get(TAB)).statusCode).toBe(200);
    const revoke = await support.post(`${TAB}/sessions/${own.id}/revoke`, {});
    expect(revoke.statusCode).toBe(403);
    expect(alertOf(revoke.body)).toBe('Only the account holder can do this, not support acting as them.');
    const password = await support.post(`${TAB}/password`, { currentPassword: PASSWORD, newPassword: 'a new long passphrase' });
    expect(password.statusCode).toBe(403);
    expect((await t.client(cast.env, { token: own.token }).get('/me')).statusCode).toBe(200);
  });
});

describe('passkey sign-in (POST /sign-in/passkey)', () => {
  const assertion = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', clientExtensionResults: {},
    response: { clientDataJSON: Buffer.from(JSON.stringify({ challenge: 'nope' })).toString('base64url'), authenticatorData: 'AAAA', signature: 'AAAA' } };
  const postJson = (browser: ReturnType<typeof pageBrowser>, url: string, body: object) => t.app.inject({
    method: 'POST', url, payload: body,
    headers: { host: env.frontendHost, origin: `http://${env.frontendHost}`, cookie: [...browser.jar].map(([k, v]) => `${k}=${v}`).join('; ') },
  });

  it('refuses an assertion the API refuses, in the page\'s language, and sets no cookie', async () => {
    const browser = pageBrowser(t, env);
    await browser.get(`/sign-in?locale=da&redirect_url=${encodeURIComponent(`${APP}/home`)}`);
    const res = await postJson(browser, `/sign-in/passkey?locale=da&redirect_url=${encodeURIComponent(`${APP}/home`)}`, { csrf: csrfOf(browser.page), response: assertion });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code: 'invalid_passkey_challenge', error: 'Anmodningen om adgangsnøglen er udløbet. Prøv igen.' });
    expect(setCookies(res).__session).toBeUndefined();
  });

  it('refuses a post without the CSRF token or with a redirect_url off the allowed origins', async () => {
    const browser = pageBrowser(t, env);
    await browser.get('/sign-in');
    expect((await postJson(browser, '/sign-in/passkey', { csrf: 'x'.repeat(43), response: assertion })).statusCode).toBe(403);
    const open = await postJson(browser, `/sign-in/passkey?redirect_url=${encodeURIComponent('https://evil.example/')}`, { csrf: csrfOf(browser.page), response: assertion });
    expect(open.statusCode).toBe(400);
    expect(open.body).toContain('This link would send you to an address this service does not trust.');
  });
});

describe('in Danish', () => {
  it('speaks Danish by ?locale=da and keeps it through Post/Redirect/Get', async () => {
    const user = await t.given.user(env);
    const other = await t.given.session(env, user);
    const browser = await signedInBrowser(user, '?locale=da');
    const html = browser.page;
    expect(html).toMatch(/^<!doctype html><html lang="da">/);
    expect(html).toContain('<h1>Sikkerhed</h1>');
    expect(html).toContain('<label for="currentPassword">Nuværende adgangskode</label>');
    expect(html).toContain('<button type="submit">Sæt en godkendelsesapp op</button>');
    expect(html).toContain('<h2 id="sessions-heading">Hvor du er logget ind</h2>');
    expect(html).toContain(' · <strong>Denne enhed</strong>');
    expect(html).toContain(`action="/account/security/sessions/${other.id}/revoke?locale=da"`);
    const res = await browser.post(`${TAB}/sessions/${other.id}/revoke?locale=da`, {});
    expect(res.headers.location).toBe(`${TAB}?locale=da&done=session_revoked`);
    expect(noticeOf((await browser.get(res.headers.location as string)).body)).toBe('Den session er logget ud.');
    const enrol = await browser.post(`${TAB}/totp?locale=da`, {});
    expect(enrol.body).toContain('<h1>Sæt en godkendelsesapp op</h1>');
    expect(enrol.body).toContain('aria-label="QR-kode til din godkendelsesapp"');
    expect(enrol.body).toContain('<button type="submit">Slå totrinsbekræftelse til</button>');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { codeAt, userWithTotp } from '../factors/support.js';
import { randomEmail } from '../invitations/support.js';
import { alertOf, hiddenValue, pageBrowser, setCookies } from './support.js';

const APP = 'https://app.example.com';
const LANDING = `${APP}/home`;
const q = `?redirect_url=${encodeURIComponent(LANDING)}`;
const NEW_PASSWORD = 'a brand new passphrase';

let t: TestApp;
let env: TestEnv;

beforeAll(async () => {
  t = await startTestApp();
  env = await t.given.environment();
  await t.server(env).put('/allowed-origins', { origins: [APP] });
});
afterAll(() => t.close());

const sessionWorks = async (target: TestEnv, token: string) => (await t.client(target, { cookie: token }).get('/me')).statusCode === 200;
const mailedCode = async (to: string, subject: RegExp) => {
  const mail = (await t.outbox(env, to)).find((m) => subject.test(m.subject));
  expect(mail, `no mail to ${to} matching ${subject}`).toBeDefined();
  return subject.exec(mail!.subject)![1];
};

describe('sign-up, then the emailed code', () => {
  it('creates a pending account, shows the code step, and the mailed code signs the user in on redirect_url', async () => {
    const email = randomEmail('signup');
    const browser = pageBrowser(t, env);
    const form = await browser.get(`/sign-up${q}`);
    expect(form.body).toContain('<button type="submit">Sign up</button>');
    expect(form.body).not.toContain('for="name"');
    const pending = await browser.post(`/sign-up${q}`, { email, password: PASSWORD });
    expect(pending.statusCode).toBe(200);
    expect(pending.body).toContain('<h1>Check your email</h1>');
    expect(pending.body).toContain(`action="/verify-email${q}"`);
    expect(setCookies(pending).__session).toBeUndefined();
    const code = await mailedCode(email, /^Your verification code is (\d{6})$/);
    const wrong = await browser.post(`/verify-email${q}`, { email, code: code === '000000' ? '111111' : '000000' });
    expect(wrong.statusCode).toBe(400);
    expect(alertOf(wrong.body)).toBe('The code is wrong or has expired.');
    const done = await browser.post(`/verify-email${q}`, { email, code });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe(LANDING);
    expect(await sessionWorks(env, setCookies(done).__session)).toBe(true);
  });

  it('asks for the name when the environment requires it, and refuses a taken email beside the form', async () => {
    const named = await t.given.environment({ requiredFields: ['email', 'name'], emailVerificationRequired: false });
    const user = await t.given.user(named, { firstName: 'Ada', lastName: 'Lovelace' });
    const browser = pageBrowser(t, named);
    expect((await browser.get('/sign-up')).body).toContain('<label for="name">Name</label>');
    const taken = await browser.post('/sign-up', { email: user.email!, password: PASSWORD, name: 'Ada' });
    expect(taken.statusCode).toBe(409);
    expect(alertOf(taken.body)).toBe('An account with this email already exists.');
    const res = await browser.post('/sign-up', { email: randomEmail(), password: PASSWORD, name: 'Ada' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/signed-in');
  });
});

describe('sign-up with the environment\'s terms', () => {
  const TERMS = 'https://app.example.com/terms';
  const userOf = (target: TestEnv, email: string) =>
    t.db.selectFrom('users').select(['locale', 'registration_state']).where('environment_id', '=', target.id).where('email', '=', email).executeTakeFirst();

  it('asks for consent to hostedPages.termsUrl, and refuses a sign-up without it, storing nothing', async () => {
    const withTerms = await t.given.environment({ hostedPages: { termsUrl: TERMS } });
    const browser = pageBrowser(t, withTerms);
    const form = await browser.get('/sign-up');
    expect(form.body).toContain('<input id="legalConsentAccepted" name="legalConsentAccepted" type="checkbox" value="true" required/>');
    expect(form.body).toContain(`<label for="legalConsentAccepted"><a href="${TERMS}" target="_blank" rel="noopener noreferrer">I accept the terms of service</a></label>`);
    const email = randomEmail('terms');
    const refused = await browser.post('/sign-up', { email, password: PASSWORD });
    expect(refused.statusCode).toBe(400);
    expect(alertOf(refused.body)).toBe('Accept the terms of service to continue.');
    expect(await userOf(withTerms, email)).toBeUndefined();
    const accepted = await browser.post('/sign-up', { email, password: PASSWORD, legalConsentAccepted: 'true' });
    expect(accepted.statusCode).toBe(200);
    expect(await userOf(withTerms, email)).toEqual({ locale: 'en', registration_state: 'pending_email_verification' });
  });

  it('asks for no consent without terms, and the new user keeps the page\'s language as their locale', async () => {
    const browser = pageBrowser(t, env);
    expect((await browser.get('/sign-up?locale=da')).body).not.toContain('legalConsentAccepted');
    const email = randomEmail('dansk');
    expect((await browser.post('/sign-up?locale=da', { email, password: PASSWORD })).statusCode).toBe(200);
    expect(await userOf(env, email)).toEqual({ locale: 'da', registration_state: 'pending_email_verification' });
  });
});

describe('sign-in with a second factor', () => {
  it('asks for the code after the password, refuses a wrong one on the same step, and signs in with the right one', async () => {
    const { user, secret } = await userWithTotp(t, env);
    const browser = pageBrowser(t, env);
    await browser.get(`/sign-in${q}`);
    const step = await browser.post(`/sign-in${q}`, { email: user.email!, password: PASSWORD });
    expect(step.statusCode).toBe(200);
    expect(setCookies(step).__session).toBeUndefined();
    expect(step.body).toContain('<h1>Two-step verification</h1>');
    expect(step.body).toContain('<label for="code">Code</label>');
    const challengeToken = hiddenValue(step.body, 'challengeToken')!;
    expect(challengeToken).toMatch(/^mfa_/);
    const wrong = await browser.post(`/sign-in${q}`, { challengeToken, code: '000000' === codeAt(t, secret) ? '111111' : '000000' });
    expect(wrong.statusCode).toBe(400);
    expect(alertOf(wrong.body)).toBe('The code is wrong or has expired.');
    expect(hiddenValue(wrong.body, 'challengeToken')).toBe(challengeToken);
    const done = await browser.post(`/sign-in${q}`, { challengeToken, code: codeAt(t, secret) });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe(LANDING);
    expect(await sessionWorks(env, setCookies(done).__session)).toBe(true);
  });
});

describe('forgot and reset the password', () => {
  it('mails a code, and the code with a new password signs in and ends the other sessions', async () => {
    const user = await t.given.user(env);
    const old = await t.given.session(env, user);
    const browser = pageBrowser(t, env);
    await browser.get(`/forgot-password${q}`);
    const sent = await browser.post(`/forgot-password${q}`, { email: user.email! });
    expect(sent.statusCode).toBe(200);
    expect(sent.body).toContain('<label for="newPassword">New password</label>');
    await t.app.settled();
    const code = await mailedCode(user.email!, /^Your password reset code is (\d{6})$/);
    const weak = await browser.post(`/reset-password${q}`, { email: user.email!, code, newPassword: 'short' });
    expect(weak.statusCode).toBe(400);
    expect(alertOf(weak.body)).toBe('Choose a longer or less common password.');
    const done = await browser.post(`/reset-password${q}`, { email: user.email!, code, newPassword: NEW_PASSWORD });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe(LANDING);
    expect(await sessionWorks(env, setCookies(done).__session)).toBe(true);
    expect(await sessionWorks(env, old.token)).toBe(false);
    expect((await t.client(env).post('/auth/sign-in', { email: user.email, password: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it('answers alike for an unknown email', async () => {
    const browser = pageBrowser(t, env);
    await browser.get('/forgot-password');
    const res = await browser.post('/forgot-password', { email: randomEmail('nobody') });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<h1>Choose a new password</h1>');
  });
});

describe('accepting an environment invitation', () => {
  it('with no signUpUrl configured, the mail links to the hosted page, which signs the invitee up', async () => {
    const email = randomEmail();
    const created = await t.server(env).post('/invitations', { email, redirectUrl: LANDING, publicMetadata: {}, privateMetadata: {} });
    expect(created.statusCode, created.body).toBe(201);
    const [mail] = await t.outbox(env, email);
    const link = new URL(/http:\/\/\S+/.exec(mail.text)![0]);
    expect(`${link.origin}${link.pathname}`).toBe(`http://${env.frontendHost}/accept-invitation`);
    expect(link.searchParams.get('redirect_url')).toBe(LANDING);
    const browser = pageBrowser(t, env);
    const page = await browser.get(`${link.pathname}${link.search}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(email);
    const token = link.searchParams.get('invitation_token')!;
    const noConsent = await browser.post(`/accept-invitation${q}`, { token, password: PASSWORD });
    expect(noConsent.statusCode).toBe(400);
    expect(alertOf(noConsent.body)).toBe('Accept the terms of service to continue.');
    const done = await browser.post(`/accept-invitation${q}`, { token, password: PASSWORD, legalConsentAccepted: 'true' });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe(LANDING);
    expect(await sessionWorks(env, setCookies(done).__session)).toBe(true);
    const used = await browser.get(`${link.pathname}${link.search}`);
    expect(used.statusCode).toBe(409);
  });

  it('shows an unknown token as a page, not a form', async () => {
    const res = await pageBrowser(t, env).get('/accept-invitation?invitation_token=inv_nope');
    expect(res.statusCode).toBe(404);
    expect(alertOf(res.body)).toBe('This invitation is not valid.');
  });
});

describe('sign-out', () => {
  it('ends the session, clears the cookie and goes to hostedPages.afterSignOutUrl', async () => {
    const out = await t.given.environment({ hostedPages: { afterSignOutUrl: 'https://www.example.com/bye' } });
    const user = await t.given.user(out);
    const session = await t.given.session(out, user);
    const browser = pageBrowser(t, out);
    browser.jar.set('__session', session.token);
    expect((await browser.get('/sign-out')).body).toContain('<button type="submit">Sign out</button>');
    const res = await browser.post('/sign-out', {});
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('https://www.example.com/bye');
    expect(setCookies(res).__session).toBe('');
    expect(await sessionWorks(out, session.token)).toBe(false);
  });

  it('without the setting, goes back to the sign-in page in the same language', async () => {
    const browser = pageBrowser(t, env);
    await browser.get('/sign-out?locale=da');
    const res = await browser.post('/sign-out?locale=da', {});
    expect(res.headers.location).toBe('/sign-in?locale=da');
  });
});

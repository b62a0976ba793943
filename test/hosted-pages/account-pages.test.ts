import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD, type TestUser } from '../helpers/given.js';
import { startScriptableProvider, type ScriptableProvider } from '../helpers/scriptable-provider.js';
import { givenCast, minted, redeem } from '../impersonation/support.js';
import { randomEmail } from '../invitations/support.js';
import { givenScriptedEnvironment, scriptedSignIn, sessionCookieOf } from '../oauth/support.js';
import { addMember, createOrganization } from '../organizations/support.js';
import { alertOf, pageBrowser, setCookies } from './support.js';

const TEN_MINUTES = 10 * 60_000;

let t: TestApp;
let fake: ScriptableProvider;
let env: TestEnv;

// Jobs run only when the test says (data exports), on a database of the file's own, as test/data-requests do.
beforeAll(async () => {
  [t, fake] = await Promise.all([startTestApp({ jobsInBackground: false }, { ownDatabase: true }), startScriptableProvider()]);
  env = await t.given.environment();
});
afterAll(async () => { await t?.close(); await fake?.close(); });
beforeEach(() => fake.reset());

/** A browser on the frontend host holding a fresh (recently authenticated) session of the user. */
async function signedInBrowser(user: TestUser, target = env, headers: Record<string, string> = {}) {
  const session = await t.given.session(target, user);
  const browser = pageBrowser(t, target, headers);
  browser.jar.set('__session', session.token);
  return { browser, session, api: t.client(target, { token: session.token }) };
}

const noticeOf = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1];
const storedUser = (userId: string) => t.db.selectFrom('users').selectAll().where('environment_id', '=', env.id).where('id', '=', userId).executeTakeFirstOrThrow();
const mailedCode = async (to: string) => {
  const mail = (await t.outbox(env, to)).find((m) => /^Your email verification code is \d{6}$/.test(m.subject));
  expect(mail, `no code mailed to ${to}`).toBeDefined();
  return /(\d{6})$/.exec(mail!.subject)![1];
};

describe('without a session', () => {
  it('sends each page to /sign-in and back, keeping the language', async () => {
    const browser = pageBrowser(t, env);
    const res = await browser.get('/account');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/sign-in?redirect_url=%2Faccount');
    const data = await browser.get('/account/data?locale=da');
    expect(data.headers.location).toBe(`/sign-in?${new URLSearchParams({ redirect_url: '/account/data?locale=da', locale: 'da' })}`);
  });

  it('sends a form post to sign in and back to the tab it came from, changing nothing', async () => {
    const browser = pageBrowser(t, env);
    await browser.get('/sign-in');
    const res = await browser.post('/account/email-addresses', { email: randomEmail() });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/sign-in?redirect_url=%2Faccount');
    const deletion = await browser.post('/account/delete', { confirm: 'true' });
    expect(deletion.headers.location).toBe('/sign-in?redirect_url=%2Faccount%2Fdelete');
  });
});

describe('GET /account', () => {
  it('shows the profile, the addresses, identities and organizations, with labelled fields and no script', async () => {
    const user = await t.given.user(env, { firstName: 'Ada', lastName: 'Lovelace' });
    const org = await createOrganization(t, env, { name: 'Analytical Engines', createdBy: user.id });
    const { browser } = await signedInBrowser(user);
    const res = await browser.get('/account');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.body).not.toContain('<script');
    expect(res.body).toContain('<h1>Your account</h1>');
    expect(res.body).toContain('<a href="/account" aria-current="page">Profile</a>');
    expect(res.body).toContain(`Signed in as ${user.email}`);
    expect(res.body).toContain('<label for="firstName">First name</label><input id="firstName" name="firstName" type="text" value="Ada"');
    expect(res.body).toContain('<label for="lastName">Last name</label>');
    expect(res.body).toContain('<label for="locale-choice">Language</label>');
    expect(res.body).toContain('<label for="newEmail">New email address</label>');
    expect(res.body).toContain('<button type="submit">Add email address</button>');
    expect(res.body).toContain(`<span>${user.email}</span><span class="badge">Primary</span><span class="badge">Verified</span>`);
    expect(res.body).toContain('No external accounts are linked.');
    expect(res.body).toContain('<span>Analytical Engines</span><span class="badge">Role: Owner</span>');
    expect(res.body).toContain(`action="/account/organizations/${org.id}/leave"`);
    expect(res.body.match(/name="csrf" value="[\w-]{43}"/g)?.length).toBe(res.body.match(/<form /g)?.length);
  });

  it('speaks Danish with ?locale=da, and with the user\'s own locale', async () => {
    const user = await t.given.user(env);
    const { browser, api } = await signedInBrowser(user);
    const chosen = await browser.get('/account?locale=da');
    expect(chosen.body).toMatch(/^<!doctype html><html lang="da">/);
    expect(chosen.body).toContain('<h1>Din konto</h1>');
    expect(chosen.body).toContain('<label for="newEmail">Ny e-mailadresse</label>');
    expect(chosen.body).toContain('<button type="submit">Tilføj e-mailadresse</button>');
    expect(chosen.body).toContain('action="/account/email-addresses?locale=da"');
    expect((await browser.get('/account')).body).toContain('<h1>Your account</h1>');
    expect((await api.patch('/me', { locale: 'da' })).statusCode).toBe(200);
    const own = await browser.get('/account');
    expect(own.body).toMatch(/^<!doctype html><html lang="da">/);
    expect(own.body).toContain('<h2 id="emails-heading">E-mailadresser</h2>');
  });
});

describe('the profile form', () => {
  it('saves the name and the language as PATCH /_svc/me does, then shows the page in that language', async () => {
    const user = await t.given.user(env);
    const { browser, api } = await signedInBrowser(user);
    await browser.get('/account');
    const res = await browser.post('/account/profile', { firstName: ' Grace ', lastName: 'Hopper', locale: 'da' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account?notice=profileSaved');
    expect((await api.get('/me')).json()).toMatchObject({ firstName: 'Grace', lastName: 'Hopper', name: 'Grace Hopper', locale: 'da' });
    const after = await browser.get(res.headers.location as string);
    expect(noticeOf(after.body)).toBe('Din profil er gemt.');
    expect(after.body).toContain('<option value="da" selected>Dansk</option>');
    const cleared = await browser.post('/account/profile', { firstName: '', lastName: '', locale: '' });
    expect(cleared.statusCode).toBe(303);
    expect((await api.get('/me')).json()).toMatchObject({ firstName: null, lastName: null, locale: null });
    const event = await t.db.selectFrom('audit_events').select(['actor_id', 'producer']).where('environment_id', '=', env.id)
      .where('action', '=', 'user.updated').where('actor_id', '=', user.id).orderBy('sequence').executeTakeFirstOrThrow();
    expect(event.producer).toEqual({ type: 'gatehouse', via: 'client_api' });
  });

  it('refuses a form without the CSRF token, changing nothing', async () => {
    const user = await t.given.user(env, { firstName: 'Ada' });
    const { browser, api } = await signedInBrowser(user);
    await browser.get('/account');
    const res = await browser.post('/account/profile', { csrf: 'forged', firstName: 'Mallory', lastName: '', locale: '' });
    expect(res.statusCode).toBe(403);
    expect(alertOf(res.body)).toBe('This form has expired. Reload the page and try again.');
    const added = await browser.post('/account/email-addresses', { csrf: '', email: randomEmail() });
    expect(added.statusCode).toBe(403);
    expect((await api.get('/me')).json().firstName).toBe('Ada');
    expect((await api.get('/me/email-addresses')).json().items).toHaveLength(1);
  });
});

describe('email addresses', () => {
  it('adds an address, verifies it with the mailed code, makes it primary after the password, and removes the old one', async () => {
    const user = await t.given.user(env);
    const { browser, api } = await signedInBrowser(user);
    const email = randomEmail('second');
    await browser.get('/account');
    const added = await browser.post('/account/email-addresses', { email });
    expect(added.statusCode).toBe(303);
    expect(added.headers.location).toBe('/account?notice=emailAdded');
    const [, address] = (await api.get('/me/email-addresses')).json().items;
    expect(address).toMatchObject({ email, verified: false, primary: false });
    const listed = await browser.get('/account?notice=emailAdded');
    expect(noticeOf(listed.body)).toBe('We sent a code to the new address. Enter it below to verify the address.');
    expect(listed.body).toContain(`<span>${email}</span><span class="badge">Not verified</span>`);
    expect(listed.body).toContain(`<label for="code-${address.id}">Code</label>`);

    const code = await mailedCode(email);
    const wrong = await browser.post(`/account/email-addresses/${address.id}/verify`, { code: code === '000000' ? '111111' : '000000' });
    expect(wrong.statusCode).toBe(400);
    expect(alertOf(wrong.body)).toBe('The code is wrong or has expired.');
    const verified = await browser.post(`/account/email-addresses/${address.id}/verify`, { code });
    expect(verified.statusCode).toBe(303);
    expect(verified.headers.location).toBe('/account?notice=emailVerified');
    expect((await api.get('/me/email-addresses')).json().items[1]).toMatchObject({ id: address.id, verified: true, primary: false });

    // Making it primary needs a recent sign-in: the page asks for the password, then for the change again.
    t.clock.advance(TEN_MINUTES + 1);
    const stale = await browser.post(`/account/email-addresses/${address.id}/make-primary`, {});
    expect(stale.statusCode).toBe(403);
    expect(alertOf(stale.body)).toBe('This change needs a recent sign-in: confirm your password below.');
    expect(stale.body).toContain('<h2 id="reauth-heading">Confirm your password</h2>');
    expect(stale.body).toContain('<input type="hidden" name="then" value="/account"/>');
    const badPassword = await browser.post('/account/reauthenticate', { then: '/account', password: 'not the password' });
    expect(badPassword.statusCode).toBe(400);
    expect(alertOf(badPassword.body)).toBe('The password is wrong.');
    expect(badPassword.body).toContain('<h2 id="reauth-heading">Confirm your password</h2>');
    const confirmed = await browser.post('/account/reauthenticate', { then: '/account', password: PASSWORD });
    expect(confirmed.statusCode).toBe(303);
    expect(confirmed.headers.location).toBe('/account?notice=reauthenticated');
    const primary = await browser.post(`/account/email-addresses/${address.id}/make-primary`, {});
    expect(primary.statusCode).toBe(303);
    expect(primary.headers.location).toBe('/account?notice=primaryChanged');
    expect((await api.get('/me')).json().email).toBe(email);

    const [, old] = (await api.get('/me/email-addresses')).json().items;
    expect(old).toMatchObject({ email: user.email, primary: false });
    const refused = await browser.post(`/account/email-addresses/${address.id}/remove`, {});
    expect(refused.statusCode).toBe(409);
    expect(alertOf(refused.body)).toBe('Your primary address cannot be removed. Make another address primary first.');
    const removed = await browser.post(`/account/email-addresses/${old.id}/remove`, {});
    expect(removed.statusCode).toBe(303);
    expect(removed.headers.location).toBe('/account?notice=emailRemoved');
    expect((await api.get('/me/email-addresses')).json().items.map((a: { email: string }) => a.email)).toEqual([email]);
  });

  it('shows the API\'s refusal of an address another account has verified, in Danish on a Danish page', async () => {
    const [user, other] = [await t.given.user(env), await t.given.user(env)];
    const { browser } = await signedInBrowser(user);
    await browser.get('/account?locale=da');
    const res = await browser.post('/account/email-addresses?locale=da', { email: other.email! });
    expect(res.statusCode).toBe(409);
    expect(res.body).toMatch(/^<!doctype html><html lang="da">/);
    expect(alertOf(res.body)).toBe('Adressen tilhører en anden konto, eller den er allerede din.');
    expect(res.body).toContain('<h1>Din konto</h1>');
  });
});

describe('linked identities', () => {
  it('lists an identity by its provider\'s name and unlinks it, unless it is the only way to sign in', async () => {
    const scripted = await givenScriptedEnvironment(t, fake);
    const cookie = sessionCookieOf(await scriptedSignIn(t, scripted));
    const browser = pageBrowser(t, scripted);
    browser.jar.set('__session', cookie);
    const [identity] = (await t.client(scripted, { cookie }).get('/me/identities')).json().items;
    const page = await browser.get('/account');
    expect(page.body).toContain(`action="/account/identities/${identity.id}/unlink"`);
    expect(page.body).toContain('<p class="row-title"><span>Acme</span>');
    const refused = await browser.post(`/account/identities/${identity.id}/unlink`, {});
    expect(refused.statusCode).toBe(409);
    expect(alertOf(refused.body)).toBe('This is the only way left to sign in. Set a password or link another account first.');

    // A user with a password keeps a way to sign in: the identity the provider's sign-in linked goes.
    const linked = await givenScriptedEnvironment(t, fake);
    const user = await t.given.user(linked, { email: 'person@example.com' });
    const withPassword = sessionCookieOf(await scriptedSignIn(t, linked));
    expect((await t.client(linked, { cookie: withPassword }).get('/me')).json().id).toBe(user.id);
    const [own] = (await t.client(linked, { cookie: withPassword }).get('/me/identities')).json().items;
    const owner = pageBrowser(t, linked);
    owner.jar.set('__session', withPassword);
    await owner.get('/account');
    const unlinked = await owner.post(`/account/identities/${own.id}/unlink`, {});
    expect(unlinked.statusCode).toBe(303);
    expect(unlinked.headers.location).toBe('/account?notice=identityUnlinked');
    expect((await t.client(linked, { cookie: withPassword }).get('/me/identities')).json().items).toEqual([]);
  });
});

describe('organizations', () => {
  it('lets a member leave, and refuses the only owner with the API\'s last_owner', async () => {
    const [owner, member] = [await t.given.user(env), await t.given.user(env)];
    const org = await createOrganization(t, env, { name: 'Leavers', createdBy: owner.id });
    await addMember(t, env, org.id, member.id);
    const asMember = await signedInBrowser(member);
    expect((await asMember.browser.get('/account')).body).toContain('<span>Leavers</span><span class="badge">Role: Member</span>');
    const left = await asMember.browser.post(`/account/organizations/${org.id}/leave`, {});
    expect(left.statusCode).toBe(303);
    expect(left.headers.location).toBe('/account?notice=organizationLeft');
    expect((await asMember.api.get('/organizations')).json().items).toEqual([]);

    const asOwner = await signedInBrowser(owner);
    await asOwner.browser.get('/account');
    const refused = await asOwner.browser.post(`/account/organizations/${org.id}/leave`, {});
    expect(refused.statusCode).toBe(409);
    expect(alertOf(refused.body)).toBe('You are the only owner of an organization. Make another member owner first.');
    expect((await asOwner.api.get('/organizations')).json().items.map((o: { id: string }) => o.id)).toEqual([org.id]);
  });
});

describe('/account/data: data requests', () => {
  it('requests an export, lists it while prepared, then links its archive once the job ran', async () => {
    const user = await t.given.user(env);
    const { browser } = await signedInBrowser(user);
    const empty = await browser.get('/account/data');
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('<a href="/account/data" aria-current="page">Your data</a>');
    expect(empty.body).toContain('You have made no data requests.');
    const res = await browser.post('/account/data-requests', { type: 'export' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account/data?notice=exportRequested');
    const request = await t.db.selectFrom('data_requests').selectAll().where('environment_id', '=', env.id).where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(request).toMatchObject({ type: 'export', status: 'pending' });
    const pending = await browser.get(res.headers.location as string);
    expect(noticeOf(pending.body)).toBe('Your export is being prepared. Its download appears below when it is ready.');
    expect(pending.body).toContain('<td>Export</td><td>Being prepared</td>');
    const again = await browser.post('/account/data-requests', { type: 'export' });
    expect(again.statusCode).toBe(409);
    expect(alertOf(again.body)).toBe('A request of this kind is already in progress.');
    const early = await browser.get(`/account/data-requests/${request.id}/download`);
    expect(early.statusCode).toBe(409);
    expect(alertOf(early.body)).toBe('The export is not ready yet.');

    await t.app.runJobs();
    const ready = await browser.get('/account/data');
    expect(ready.body).toContain('<td>Export</td><td>Ready</td>');
    expect(ready.body).toContain(`<a href="/account/data-requests/${request.id}/download">Download the export</a>`);
    const archive = await browser.get(`/account/data-requests/${request.id}/download`);
    expect(archive.statusCode).toBe(200);
    expect(archive.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(archive.headers['content-disposition']).toBe(`attachment; filename="data-export-${request.id}.json"`);
    expect(archive.headers['cache-control']).toBe('no-store');
    expect(archive.json()).toMatchObject({ format: 'gatehouse.data-export.v1', requestId: request.id, userId: user.id });
  });

  it('schedules an erasure and cancels it during its grace period', async () => {
    const user = await t.given.user(env);
    const { browser } = await signedInBrowser(user);
    await browser.get('/account/data');
    const res = await browser.post('/account/data-requests', { type: 'erasure' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account/data?notice=erasureRequested');
    const request = await t.db.selectFrom('data_requests').selectAll().where('environment_id', '=', env.id).where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(request.status).toBe('scheduled');
    const listed = await browser.get('/account/data');
    expect(listed.body).toContain('<td>Erasure</td><td>Scheduled · Runs ');
    const cancelled = await browser.post(`/account/data-requests/${request.id}/cancel`, {});
    expect(cancelled.statusCode).toBe(303);
    expect(cancelled.headers.location).toBe('/account/data?notice=requestCancelled');
    expect((await t.db.selectFrom('data_requests').select('status').where('id', '=', request.id).executeTakeFirstOrThrow()).status).toBe('cancelled');
    expect((await browser.get('/account/data')).body).toContain('<td>Erasure</td><td>Cancelled</td>');
  });

  it('asks for the password when the sign-in is not recent, and comes back to the data tab', async () => {
    const user = await t.given.user(env);
    const { browser } = await signedInBrowser(user);
    t.clock.advance(TEN_MINUTES + 1);
    await browser.get('/account/data?locale=da');
    const stale = await browser.post('/account/data-requests?locale=da', { type: 'export' });
    expect(stale.statusCode).toBe(403);
    expect(alertOf(stale.body)).toBe('Denne ændring kræver, at du har logget ind for nylig: bekræft din adgangskode nedenfor.');
    expect(stale.body).toContain('<input type="hidden" name="then" value="/account/data"/>');
    const confirmed = await browser.post('/account/reauthenticate?locale=da', { then: '/account/data', password: PASSWORD });
    expect(confirmed.headers.location).toBe('/account/data?locale=da&notice=reauthenticated');
    expect((await browser.post('/account/data-requests?locale=da', { type: 'export' })).statusCode).toBe(303);
  });
});

describe('/account/delete: deleting the account', () => {
  it('asks to confirm, deletes the account as DELETE /_svc/me does, clears the cookie and goes to sign in', async () => {
    const user = await t.given.user(env);
    const { browser, session } = await signedInBrowser(user);
    const tab = await browser.get('/account/data?locale=da');
    expect(tab.body).toContain('<a class="button secondary inline" href="/account/delete?locale=da">Slet min konto</a>');
    const confirm = await browser.get('/account/delete?locale=da');
    expect(confirm.body).toContain('<label for="confirm-delete">Jeg forstår, at min konto bliver slettet</label>');
    const unticked = await browser.post('/account/delete?locale=da', {});
    expect(unticked.statusCode).toBe(400);
    expect(alertOf(unticked.body)).toBe('Sæt kryds for at bekræfte, at du vil have din konto slettet.');
    expect((await storedUser(user.id)).status).toBe('active');
    const res = await browser.post('/account/delete?locale=da', { confirm: 'true' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/sign-in?locale=da');
    expect(setCookies(res).__session).toBe('');
    expect((await storedUser(user.id)).status).toBe('deleted');
    expect((await t.client(env, { token: session.token }).get('/me')).statusCode).toBe(401);
  });

  it('goes to hostedPages.afterSignOutUrl when set, and refuses where self-deletion is off', async () => {
    const leaving = await t.given.environment({ hostedPages: { afterSignOutUrl: 'https://www.example.com/bye' } });
    const user = await t.given.user(leaving);
    const { browser } = await signedInBrowser(user, leaving);
    await browser.get('/account/delete');
    const res = await browser.post('/account/delete', { confirm: 'true' });
    expect(res.headers.location).toBe('https://www.example.com/bye');

    const kept = await t.given.environment({ selfDeletionEnabled: false });
    const keeper = await t.given.user(kept);
    const own = await signedInBrowser(keeper, kept);
    expect((await own.browser.get('/account/data')).body).toContain('Your account cannot be deleted here. Contact the support of');
    const refused = await own.browser.post('/account/delete', { confirm: 'true' });
    expect(refused.statusCode).toBe(403);
    expect(alertOf(refused.body)).toBe('Your account cannot be deleted here.');
    expect((await own.api.get('/me')).statusCode).toBe(200);
  });
});

describe('an impersonated session', () => {
  it('sees the account, and is refused what the API refuses it', async () => {
    const cast = await givenCast(t);
    const redeemed = await redeem(t, cast.env, (await minted(t, cast)).token);
    expect(redeemed.statusCode, redeemed.body).toBe(200);
    const browser = pageBrowser(t, cast.env);
    browser.jar.set('__session', redeemed.json().sessionToken);
    const page = await browser.get('/account');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`Signed in as ${cast.target.email}`);
    const res = await browser.post('/account/email-addresses', { email: randomEmail() });
    expect(res.statusCode).toBe(403);
    expect(alertOf(res.body)).toBe('Someone acting on your behalf cannot do this; only you can.');
    const deletion = await browser.post('/account/delete', { confirm: 'true' });
    expect(deletion.statusCode).toBe(403);
    expect((await t.client(cast.env, { token: redeemed.json().sessionToken }).get('/me/email-addresses')).json().items).toHaveLength(1);
  });
});

describe('a session held to enrolling a second factor (mfa policy "required")', () => {
  it('is told to set one up first, on the page and on every form, as the API answers mfa_enrolment_required', async () => {
    const strict = await t.given.environment({ mfa: { policy: 'required' } });
    const user = await t.given.user(strict, { firstName: 'Ada' });
    const { browser, api } = await signedInBrowser(user, strict);
    const page = await browser.get('/account');
    expect(page.statusCode).toBe(403);
    expect(alertOf(page.body)).toBe('This service requires a second factor: set one up under Security first.');
    expect(page.body).toContain('<a href="/account/security">Security</a>');
    expect(page.body).not.toContain('<form');
    await browser.get('/sign-in');
    const res = await browser.post('/account/profile', { firstName: 'Mallory', lastName: '', locale: '' });
    expect(res.statusCode).toBe(403);
    expect(alertOf(res.body)).toBe('This service requires a second factor: set one up under Security first.');
    expect((await api.get('/me')).json().firstName).toBe('Ada');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { codeAt, userWithTotp } from '../factors/support.js';
import { randomEmail } from '../invitations/support.js';
import { alertOf, hiddenValue, pageBrowser, setCookies } from './support.js';

const APP = 'https://app.example.com';
const LANDING = `${APP}/team`;
const q = `?redirect_url=${encodeURIComponent(LANDING)}`;
const PATH = '/accept-organization-invitation';

let t: TestApp;
let env: TestEnv;
let orgId: string;
let owner: ReturnType<TestApp['client']>;

beforeAll(async () => {
  t = await startTestApp();
  env = await t.given.environment();
  await t.server(env).put('/allowed-origins', { origins: [APP] });
  const ownerUser = await t.given.user(env);
  owner = t.client(env, { token: (await t.given.session(env, ownerUser)).token });
  orgId = (await owner.post('/organizations', { name: 'Acme' })).json().id;
});
afterAll(() => t.close());

/** Invites the email to Acme; with no invitationAcceptUrl the mail links to the hosted page. Returns the token. */
async function invite(email: string) {
  const res = await owner.post(`/organizations/${orgId}/invitations`, { email, role: 'member' });
  expect(res.json().emailDelivery).toBe('dispatched');
  const [mail] = await t.outbox(env, email);
  const link = new URL(/http:\/\/\S+/.exec(mail.text)![0]);
  expect(`${link.origin}${link.pathname}`).toBe(`http://${env.frontendHost}${PATH}`);
  return link.searchParams.get('invitation_token')!;
}
const isMember = async (email: string) => (await t.db.selectFrom('organization_memberships as m').innerJoin('users as u', 'u.id', 'm.user_id')
  .select('u.email').where('m.organization_id', '=', orgId).where('u.email', '=', email).execute()).length === 1;

describe('accepting an organization invitation on the hosted page', () => {
  it('signs a new invitee up and into the organization', async () => {
    const email = randomEmail('org-new');
    const token = await invite(email);
    const browser = pageBrowser(t, env);
    const page = await browser.get(`${PATH}${q}&invitation_token=${token}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`You were invited as ${email}.`);
    const res = await browser.post(`${PATH}${q}`, { token, intent: 'sign_up', password: PASSWORD, legalConsentAccepted: 'true' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(LANDING);
    expect(setCookies(res).__session).toMatch(/^sess_/);
    expect(await isMember(email)).toBe(true);
  });

  it('signs an existing user in, through the second factor, and joins', async () => {
    const { user, secret } = await userWithTotp(t, env);
    const token = await invite(user.email!);
    const browser = pageBrowser(t, env);
    await browser.get(`${PATH}${q}&invitation_token=${token}`);
    const step = await browser.post(`${PATH}${q}`, { token, intent: 'sign_in', email: user.email!, password: PASSWORD });
    expect(step.statusCode).toBe(200);
    expect(step.body).toContain(`action="${PATH}${q}"`);
    const res = await browser.post(`${PATH}${q}`, { token, challengeToken: hiddenValue(step.body, 'challengeToken')!, code: codeAt(t, secret) });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(LANDING);
    expect(await isMember(user.email!)).toBe(true);
  });

  it('lets a signed-in user join with one button', async () => {
    const user = await t.given.user(env);
    const token = await invite(user.email!);
    const browser = pageBrowser(t, env);
    browser.jar.set('__session', (await t.given.session(env, user)).token);
    const page = await browser.get(`${PATH}${q}&invitation_token=${token}`);
    expect(page.body).toContain('<button type="submit">Join</button>');
    const res = await browser.post(`${PATH}${q}`, { token, intent: 'join' });
    expect(res.statusCode).toBe(303);
    expect(await isMember(user.email!)).toBe(true);
  });

  it('refuses an account of another email, naming the invited one, and joins nobody', async () => {
    const invitee = randomEmail('org-invitee');
    const token = await invite(invitee);
    const other = await t.given.user(env);
    const browser = pageBrowser(t, env);
    await browser.get(`${PATH}?invitation_token=${token}`);
    const res = await browser.post(PATH, { token, intent: 'sign_in', email: other.email!, password: PASSWORD });
    expect(res.statusCode).toBe(403);
    expect(alertOf(res.body)).toBe(`This invitation is for another email address. Sign in with ${invitee}.`);
    expect(setCookies(res).__session).toBeUndefined();
    expect(await isMember(other.email!)).toBe(false);
  });
});

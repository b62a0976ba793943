import type { AddressInfo } from 'node:net';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { hasChromium, launchChromium } from '../helpers/browser.js';


/**
 * The app's accept page, as a customer would write it: it signs in with the cookie session, then posts the
 * `invitation_token` of its own URL to the accept endpoint, and shows the outcome.
 */
const ACCEPT_PAGE = `<!doctype html><title>accept</title><pre id="out">working</pre><script>
(async () => {
  const token = new URLSearchParams(location.search).get('invitation_token');
  const post = (path, body) => fetch('/_svc' + path, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await post('/auth/sign-in', { email: 'ada@example.com', password: ${JSON.stringify(PASSWORD)} });
  const res = await post('/organization-invitations/accept', { token });
  document.getElementById('out').textContent = res.status + ' ' + await res.text();
})();
</script>`;

describe.skipIf(!hasChromium)('accepting an organization invitation in a real browser (headless Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let env: TestEnv;
  let frontend: string;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    frontend = `http://orgs.localhost:${port}`;
    const created = await t.admin.post('/environments', { name: 'orgs', frontendHost: `orgs.localhost:${port}`, settings: { invitationAcceptUrl: `${frontend}/accept` } });
    env = { ...created.json(), name: 'orgs' };
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('follows the mailed link, signs in with the cookie and joins with the invited role', async () => {
    const owner = await t.given.user(env);
    const ownerSession = await t.given.session(env, owner);
    const org = (await t.client(env, { token: ownerSession.token }).post('/organizations', { name: 'Acme' })).json();
    await t.given.user(env, { email: 'ada@example.com' });
    const invited = await t.client(env, { token: ownerSession.token }).post(`/organizations/${org.id}/invitations`, { email: 'ada@example.com', role: 'admin' });
    expect(invited.json().emailDelivery).toBe('dispatched');
    const [mail] = await t.outbox(env, 'ada@example.com');
    const link = /https?:\/\/\S+/.exec(mail.text)![0];
    expect(link.startsWith(`${frontend}/accept?invitation_token=`)).toBe(true);

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.route(`${frontend}/accept*`, (route) => route.fulfill({ contentType: 'text/html', body: ACCEPT_PAGE }));
    await page.goto(link);
    await page.waitForFunction(() => document.getElementById('out')?.textContent !== 'working');
    const [status, body] = ((await page.textContent('#out')) ?? '').split(/ (.*)/s);
    expect(status).toBe('200');
    expect(JSON.parse(body!)).toMatchObject({ organizationId: org.id, role: 'admin', roleName: 'Admin' });
    expect((await context.cookies(frontend)).some((c) => c.name === '__session' && c.httpOnly)).toBe(true);
    const members = (await t.server(env).get(`/organizations/${org.id}/members`)).json().items;
    expect(members.map((m: { role: string }) => m.role).sort()).toEqual(['admin', 'owner']);
    await context.close();
  });
});

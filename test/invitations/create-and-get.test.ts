import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/platform/crypto/tokens.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { countInvitations, DAY_MS, expectProblem, invitationLink, invite, invitingEnvironment, MISSING_ID, objectOfSize, randomEmail, SIGN_UP_URL, storedInvitation, SUMMARY_KEYS } from './support.js';
import { PASSWORD } from '../helpers/given.js';

describe('POST /api/server/v1/invitations and GET /api/server/v1/invitations/{id}', () => {
  let t: TestApp;
  let env: TestEnv;
  beforeAll(async () => {
    t = await startTestApp();
    env = await invitingEnvironment(t);
    await t.server(env).put('/allowed-origins', { origins: ['https://shop.example.com'] });
  });
  afterAll(() => t.close());

  const create = (body: Record<string, unknown>, target = env) =>
    t.server(target).post('/invitations', { email: randomEmail(), publicMetadata: {}, privateMetadata: {}, ...body });

  describe('creating', () => {
    it('answers 201 with exactly the summary fields: PENDING, expiring in 30 days by default, email lower-cased', async () => {
      const now = t.clock.now();
      const res = await create({ email: 'Mixed.Case@Example.COM', publicMetadata: { plan: 'pro' }, privateMetadata: { crm: 1 } });
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(SUMMARY_KEYS);
      expect(body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/), environmentId: env.id, email: 'mixed.case@example.com', status: 'PENDING',
        expiresAt: new Date(now.getTime() + 30 * DAY_MS).toISOString(), createdAt: now.toISOString(), acceptedAt: null, revokedAt: null,
      });
    });

    it('honours expiresInDays from 1 to 365, and null means the default', async () => {
      const now = t.clock.now().getTime();
      for (const [days, expected] of [[1, 1], [365, 365], [null, 30]] as const) {
        const res = await create({ expiresInDays: days });
        expect(res.statusCode, res.body).toBe(201);
        expect(res.json().expiresAt).toBe(new Date(now + expected * DAY_MS).toISOString());
      }
    });

    it.each([0, 366, 1.5, '30', -1])('refuses expiresInDays %j with 400 and stores nothing', async (days) => {
      const before = await countInvitations(t, env);
      const body = expectProblem(await create({ expiresInDays: days }), 400, 'invalid_request');
      expect(body.properties.errors[0].path).toBe('/body/expiresInDays');
      expect(await countInvitations(t, env)).toBe(before);
    });

    it.each([
      ['a missing email', { email: undefined }, '/body/email'],
      ['a malformed email', { email: 'not-an-email' }, '/body/email'],
      ['missing publicMetadata', { publicMetadata: undefined }, '/body/publicMetadata'],
      ['privateMetadata that is not an object', { privateMetadata: [1] }, '/body/privateMetadata'],
      ['an unknown field', { role: 'admin' }, '/body/role'],
    ])('refuses %s with 400 naming the field', async (_case, override, path) => {
      const body = expectProblem(await create(override), 400, 'invalid_request');
      expect(body.properties.errors.map((e: { path: string }) => e.path)).toContain(path);
    });

    it('refuses metadata over 8 KB across both bags with 400 metadata_too_large, and accepts exactly 8192 bytes', async () => {
      const before = await countInvitations(t, env);
      expectProblem(await create({ publicMetadata: objectOfSize(4096), privateMetadata: objectOfSize(4097) }), 400, 'metadata_too_large');
      expect(await countInvitations(t, env)).toBe(before);
      expect((await create({ publicMetadata: objectOfSize(4096), privateMetadata: objectOfSize(4096) })).statusCode).toBe(201);
    });

    it('fails with 400 sign_up_url_not_configured while the environment has no signUpUrl and no hosted pages, storing and mailing nothing', async () => {
      const bare = await t.given.environment({ hostedPages: { enabled: false } });
      const email = randomEmail();
      expectProblem(await create({ email }, bare), 400, 'sign_up_url_not_configured');
      expect(await countInvitations(t, bare)).toBe(0);
      expect(await t.outbox(bare, email)).toEqual([]);
    });

    it('answers 409 email_taken when the email already has an account, but not for a deleted account', async () => {
      const user = await t.given.user(env);
      expectProblem(await create({ email: user.email!.toUpperCase() }), 409, 'email_taken');
      expect(await t.outbox(env, user.email!)).toEqual([]);
      await t.server(env).delete(`/users/${user.id}`);
      expect((await create({ email: user.email })).statusCode).toBe(201);
    });

    it('accepts a redirectUrl on an allowed origin or on the signUpUrl origin, and passes it on in the link', async () => {
      for (const redirectUrl of ['https://shop.example.com/welcome?x=1', 'https://app.example.com/after']) {
        const email = randomEmail();
        expect((await create({ email, redirectUrl })).statusCode).toBe(201);
        expect((await invitationLink(t, env, email)).searchParams.get('redirect_url')).toBe(redirectUrl);
      }
    });

    it.each([
      'https://evil.example.com/', '//shop.example.com/x', 'https://shop.example.com@evil.com/', 'https://shop.example.com.evil.com/',
      'javascript:alert(1)', 'http://shop.example.com/', 'not a url',
    ])('refuses redirectUrl %s with 400 redirect_url_not_allowed', async (redirectUrl) => {
      const before = await countInvitations(t, env);
      expectProblem(await create({ redirectUrl }), 400, 'redirect_url_not_allowed');
      expect(await countInvitations(t, env)).toBe(before);
    });
  });

  describe('the email', () => {
    it('mails a text and HTML message linking to signUpUrl with a 256-bit invitation_token that is stored only as its hash', async () => {
      const email = randomEmail();
      const res = await create({ email });
      const [mail] = await t.outbox(env, email);
      expect(mail.subject).toBe(`You're invited to join ${env.name}`);
      const link = await invitationLink(t, env, email);
      expect(`${link.origin}${link.pathname}`).toBe(SIGN_UP_URL);
      const token = link.searchParams.get('invitation_token')!;
      expect(token).toMatch(/^inv_[A-Za-z0-9_-]{43}$/);
      expect(mail.html).toContain(`href="${link.toString().replaceAll('&', '&amp;')}"`);
      const row = await storedInvitation(t, env, res.json().id);
      expect(Buffer.from(row.token_hash).equals(sha256(token))).toBe(true);
      expect(JSON.stringify(row)).not.toContain(token.slice(4));
    });

    it('escapes the environment name in the HTML part', async () => {
      const odd = await invitingEnvironment(t);
      await t.admin.patch(`/environments/${odd.id}`, { name: 'A&B <Corp>' });
      const email = randomEmail();
      expect((await create({ email }, odd)).statusCode).toBe(201);
      const [mail] = await t.outbox(odd, email);
      expect(mail.html).toContain('A&amp;B &lt;Corp&gt;');
      expect(mail.text).toContain('A&B <Corp>');
    });
  });

  describe('re-inviting an email with a pending invitation', () => {
    it('replaces it: the earlier invitation becomes REVOKED, its link stops working, the new one is PENDING', async () => {
      const email = randomEmail();
      const first = await invite(t, env, { email });
      t.clock.advance(1000);
      const second = await invite(t, env, { email, publicMetadata: { round: 2 } });
      expect(second.invitation.id).not.toBe(first.invitation.id);
      expect((await t.server(env).get(`/invitations/${first.invitation.id}`)).json()).toMatchObject({ status: 'REVOKED', revokedAt: t.clock.now().toISOString() });
      expect((await t.server(env).get(`/invitations/${second.invitation.id}`)).json()).toMatchObject({ status: 'PENDING', publicMetadata: { round: 2 } });
      expectProblem(await t.client(env).post('/auth/invitation/password-signup', { token: first.token, password: PASSWORD, legalConsentAccepted: true }), 410, 'invitation_revoked');
    });

    it('leaves an expired pending invitation EXPIRED rather than REVOKED', async () => {
      const email = randomEmail();
      const first = await invite(t, env, { email, expiresInDays: 1 });
      t.clock.advance(2 * DAY_MS);
      await invite(t, env, { email });
      expect((await t.server(env).get(`/invitations/${first.invitation.id}`)).json()).toMatchObject({ status: 'EXPIRED', revokedAt: null });
      expect((await storedInvitation(t, env, first.invitation.id)).status).toBe('EXPIRED');
    });

    it('keeps exactly one PENDING invitation per email under concurrent re-invites', async () => {
      const email = randomEmail();
      const results = await Promise.all(Array.from({ length: 8 }, () => create({ email })));
      expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
      const rows = await t.db.selectFrom('invitations').select('status').where('environment_id', '=', env.id).where('email', '=', email).execute();
      expect(rows.filter((r) => r.status === 'PENDING')).toHaveLength(1);
      expect(rows.filter((r) => r.status === 'REVOKED')).toHaveLength(7);
    });
  });

  describe('getting by id', () => {
    it('answers the summary fields plus both metadata bags', async () => {
      const { invitation } = await invite(t, env, { publicMetadata: { plan: 'pro', n: [1, 2] }, privateMetadata: { crm: { id: 'x' } } });
      const res = await t.server(env).get(`/invitations/${invitation.id}`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ...invitation, publicMetadata: { plan: 'pro', n: [1, 2] }, privateMetadata: { crm: { id: 'x' } } });
    });

    it("answers another environment's invitation exactly like a missing one", async () => {
      const { invitation } = await invite(t, env);
      const other = await invitingEnvironment(t);
      const foreign = expectProblem(await t.server(other).get(`/invitations/${invitation.id}`), 404, 'invitation_not_found');
      const missing = expectProblem(await t.server(other).get(`/invitations/${MISSING_ID}`), 404, 'invitation_not_found');
      expect({ ...foreign, instance: '' }).toEqual({ ...missing, instance: '' });
    });

    it('refuses an id that is not a uuid with 400', async () => {
      expectProblem(await t.server(env).get('/invitations/not-a-uuid'), 400, 'invalid_request');
    });

    it('requires the secret key', async () => {
      expectProblem(await t.app.inject({ method: 'GET', url: `/api/server/v1/invitations/${MISSING_ID}` }), 401, 'unauthenticated');
    });
  });
});

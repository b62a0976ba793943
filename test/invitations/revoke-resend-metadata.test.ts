import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { DAY_MS, expectProblem, invitationLink, invite, invitingEnvironment, MISSING_ID, objectOfSize, PASSWORD, SUMMARY_KEYS } from './support.js';

describe('revoke, resend and metadata merge of invitations', () => {
  let t: TestApp;
  let env: TestEnv;
  beforeAll(async () => {
    t = await startTestApp();
    env = await invitingEnvironment(t);
  });
  afterAll(() => t.close());

  const signUp = (token: string) => t.client(env).post('/auth/invitation/password-signup', { token, password: PASSWORD, legalConsentAccepted: true });

  describe('POST /invitations/{id}/revoke', () => {
    it('moves a PENDING invitation to REVOKED with revokedAt and answers the summary', async () => {
      const { invitation } = await invite(t, env);
      t.clock.advance(5000);
      const res = await t.server(env).post(`/invitations/${invitation.id}/revoke`);
      expect(res.statusCode, res.body).toBe(200);
      expect(Object.keys(res.json()).sort()).toEqual(SUMMARY_KEYS);
      expect(res.json()).toEqual({ ...invitation, status: 'REVOKED', revokedAt: t.clock.now().toISOString() });
    });

    it('answers 409 invitation_not_pending with the current status for revoked, accepted and expired invitations', async () => {
      const revoked = await invite(t, env);
      await t.server(env).post(`/invitations/${revoked.invitation.id}/revoke`);
      const accepted = await invite(t, env);
      await signUp(accepted.token);
      const expired = await invite(t, env, { expiresInDays: 1 });
      t.clock.advance(DAY_MS);
      for (const [{ invitation }, status] of [[revoked, 'REVOKED'], [accepted, 'ACCEPTED'], [expired, 'EXPIRED']] as const) {
        const body = expectProblem(await t.server(env).post(`/invitations/${invitation.id}/revoke`), 409, 'invitation_not_pending');
        expect(body.properties.status).toBe(status);
      }
      expect((await t.server(env).get(`/invitations/${expired.invitation.id}`)).json()).toMatchObject({ status: 'EXPIRED', revokedAt: null });
    });

    it("answers 404 for a missing invitation and for another environment's", async () => {
      const { invitation } = await invite(t, env);
      const other = await invitingEnvironment(t);
      expectProblem(await t.server(other).post(`/invitations/${invitation.id}/revoke`), 404, 'invitation_not_found');
      expectProblem(await t.server(env).post(`/invitations/${MISSING_ID}/revoke`), 404, 'invitation_not_found');
      expect((await t.server(env).get(`/invitations/${invitation.id}`)).json().status).toBe('PENDING');
    });
  });

  describe('POST /invitations/{id}/resend', () => {
    it('mails the same invitation again with a new token; the earlier link stops working, expiresAt stays', async () => {
      const { invitation, token } = await invite(t, env);
      t.clock.advance(60_000);
      const res = await t.server(env).post(`/invitations/${invitation.id}/resend`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual(invitation);
      const mails = await t.outbox(env, invitation.email);
      expect(mails).toHaveLength(2);
      const fresh = (await invitationLink(t, env, invitation.email)).searchParams.get('invitation_token')!;
      expect(fresh).not.toBe(token);
      expectProblem(await signUp(token), 404, 'invitation_not_found');
      expect((await signUp(fresh)).statusCode).toBe(201);
    });

    it('answers 409 invitation_not_pending for an invitation that is not pending, and mails nothing', async () => {
      const { invitation } = await invite(t, env);
      await t.server(env).post(`/invitations/${invitation.id}/revoke`);
      const body = expectProblem(await t.server(env).post(`/invitations/${invitation.id}/resend`), 409, 'invitation_not_pending');
      expect(body.properties.status).toBe('REVOKED');
      expect(await t.outbox(env, invitation.email)).toHaveLength(1);
    });

    it('answers 404 for a missing invitation', async () => {
      expectProblem(await t.server(env).post(`/invitations/${MISSING_ID}/resend`), 404, 'invitation_not_found');
    });
  });

  describe('PATCH /invitations/{id}/metadata', () => {
    it('deep-merges each bag: objects merge, arrays and scalars replace, null removes a key, and answers both bags', async () => {
      const { invitation } = await invite(t, env, {
        publicMetadata: { plan: 'free', team: { id: 1, tags: ['a', 'b'], region: 'eu' }, drop: true },
        privateMetadata: { crm: { id: 'x' } },
      });
      const res = await t.server(env).patch(`/invitations/${invitation.id}/metadata`, {
        publicMetadata: { plan: 'pro', team: { tags: ['c'], region: null }, drop: null },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        ...invitation, publicMetadata: { plan: 'pro', team: { id: 1, tags: ['c'] } }, privateMetadata: { crm: { id: 'x' } },
      });
      expect((await t.server(env).get(`/invitations/${invitation.id}`)).json()).toEqual(res.json());
    });

    it('refuses a merge whose result exceeds 8 KB across both bags, changing nothing', async () => {
      const { invitation } = await invite(t, env, { publicMetadata: objectOfSize(4096), privateMetadata: {} });
      expectProblem(await t.server(env).patch(`/invitations/${invitation.id}/metadata`, { privateMetadata: objectOfSize(4097) }), 400, 'metadata_too_large');
      expect((await t.server(env).get(`/invitations/${invitation.id}`)).json().privateMetadata).toEqual({});
    });

    it('keeps both of two concurrent merges', async () => {
      const { invitation } = await invite(t, env);
      await Promise.all(['a', 'b', 'c', 'd'].map((k) => t.server(env).patch(`/invitations/${invitation.id}/metadata`, { publicMetadata: { [k]: true } })));
      expect((await t.server(env).get(`/invitations/${invitation.id}`)).json().publicMetadata).toEqual({ a: true, b: true, c: true, d: true });
    });

    it('refuses unknown bags with 400 and answers 404 for a missing invitation', async () => {
      const { invitation } = await invite(t, env);
      expectProblem(await t.server(env).patch(`/invitations/${invitation.id}/metadata`, { unsafeMetadata: {} }), 400, 'invalid_request');
      expectProblem(await t.server(env).patch(`/invitations/${MISSING_ID}/metadata`, { publicMetadata: {} }), 404, 'invitation_not_found');
    });
  });
});

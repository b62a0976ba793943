import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { invite, invitingEnvironment, PASSWORD } from './support.js';

interface Event { action: string; sequence: number; actor: { type: string; id: string | null }; targets: unknown; metadata: Record<string, unknown>; producer: unknown }

describe("invitations in Gatehouse's own audit trail", () => {
  let t: TestApp;
  let env: TestEnv;
  let keyId: string;
  beforeAll(async () => {
    t = await startTestApp();
    env = await invitingEnvironment(t);
    const [created] = await log();
    expect(created.action).toBe('secret_key.created');
    keyId = (created.targets as { id: string }[])[0].id;
  });
  afterAll(() => t.close());

  async function log(): Promise<Event[]> {
    const res = await t.server(env).get('/audit-events/feed?limit=100');
    expect(res.statusCode).toBe(200);
    return res.json().items;
  }
  const byKey = () => ({ actor: { type: 'api_key', id: keyId, impersonatorId: null }, producer: { type: 'gatehouse', via: 'server_api' } });
  const target = (id: string) => [{ type: 'invitation', id }];

  it('records a create by the secret key, with the expiry and without the token or metadata', async () => {
    const before = (await log()).length;
    const { invitation, token } = await invite(t, env, { privateMetadata: { secret: 'crm-42' } });
    const added = (await log()).slice(before);
    expect(added).toEqual([expect.objectContaining({
      action: 'invitation.created', result: 'success', sequence: added[0].sequence, ...byKey(),
      targets: target(invitation.id), metadata: { expiresAt: invitation.expiresAt },
    })]);
    expect(JSON.stringify(added)).not.toContain(token);
    expect(JSON.stringify(added)).not.toContain('crm-42');
  });

  it('records a revoke, and a re-invite as the revoke of the replaced invitation then the create', async () => {
    const first = await invite(t, env);
    const before = (await log()).length;
    const second = await invite(t, env, { email: first.invitation.email });
    expect((await t.server(env).post(`/invitations/${second.invitation.id}/revoke`)).statusCode).toBe(200);
    expect((await t.server(env).post(`/invitations/${second.invitation.id}/revoke`)).statusCode).toBe(409);
    expect((await log()).slice(before)).toEqual([
      expect.objectContaining({ action: 'invitation.revoked', ...byKey(), targets: target(first.invitation.id), metadata: { reason: 'replaced', replacedBy: second.invitation.id } }),
      expect.objectContaining({ action: 'invitation.created', ...byKey(), targets: target(second.invitation.id) }),
      expect.objectContaining({ action: 'invitation.revoked', ...byKey(), targets: target(second.invitation.id), metadata: {} }),
    ]);
  });

  it('records a resend, and the acceptance by the new user', async () => {
    const { invitation } = await invite(t, env);
    const before = (await log()).length;
    expect((await t.server(env).post(`/invitations/${invitation.id}/resend`)).statusCode).toBe(200);
    const [mail] = await t.outbox(env, invitation.email);
    const token = new URL(/https:\/\/\S+/.exec(mail.text)![0]).searchParams.get('invitation_token');
    const res = await t.client(env).post('/auth/invitation/password-signup?_is_native=true', { token, password: PASSWORD, legalConsentAccepted: true });
    expect(res.statusCode).toBe(201);
    const userId = res.json().user.id;
    expect((await log()).slice(before)).toEqual([
      expect.objectContaining({ action: 'invitation.resent', ...byKey(), targets: target(invitation.id) }),
      expect.objectContaining({
        action: 'invitation.accepted', actor: { type: 'user', id: userId, impersonatorId: null },
        producer: { type: 'gatehouse', via: 'client_api' }, targets: target(invitation.id), metadata: { userId },
      }),
      expect.objectContaining({
        action: 'user.signed_in', actor: { type: 'user', id: userId, impersonatorId: null },
        targets: [{ type: 'user', id: userId }, { type: 'session', id: res.json().session.id }], metadata: { method: 'invitation', invitationId: invitation.id },
      }),
    ]);
  });

  it('records nothing when the change fails', async () => {
    const { invitation, token } = await invite(t, env);
    const before = (await log()).length;
    await t.client(env).post('/auth/invitation/password-signup', { token, password: 'short', legalConsentAccepted: true });
    await t.server(env).post(`/invitations/${invitation.id}/revoke`);
    await t.server(env).post(`/invitations/${invitation.id}/resend`);
    expect((await log()).slice(before).map((e) => e.action)).toEqual(['invitation.revoked']);
  });
});

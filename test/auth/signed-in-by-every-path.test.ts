import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { signIn, signUp } from '../helpers/flows.js';
import { PASSWORD } from '../helpers/given.js';
import { givenCast, LANDING, minted } from '../impersonation/support.js';
import { invite, invitingEnvironment } from '../invitations/support.js';

// Every way into a session goes through issueSession, which records user.signed_in with the method.
// The external sign-in's record ({ method: 'oauth', provider }) is checked with a real provider in test/oauth/oidc-sign-in.test.ts.
describe('user.signed_in on every sign-in path', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  /** The environment's user.signed_in events, of one user when given. */
  const signedInEvents = (env: TestEnv, userId?: string) =>
    t.db.selectFrom('audit_events').select(['actor_id', 'actor_impersonator_id', 'targets', 'metadata'])
      .where('environment_id', '=', env.id).where('action', '=', 'user.signed_in')
      .$if(userId !== undefined, (q) => q.where('actor_id', '=', userId!)).orderBy('sequence').execute();

  // Contract §3d: a password or sign-up proves who the user is; an emailed code alone or an impersonation does not.
  const PROVES_IDENTITY = ['password', 'sign_up'];

  /**
   * The one user.signed_in of the user who signed in: the user, the session the response started, and how;
   * and the session recently authenticated only when the method proves who the user is.
   */
  async function expectSignedIn(env: TestEnv, res: LightMyRequestResponse, metadata: Record<string, unknown>, impersonatorId: string | null = null) {
    expect(res.statusCode, res.body).toBeLessThan(300);
    const { user, session } = res.json();
    expect(await signedInEvents(env, user.id)).toEqual([{
      actor_id: user.id, actor_impersonator_id: impersonatorId,
      targets: [{ type: 'user', id: user.id }, { type: 'session', id: session.id }], metadata,
    }]);
    const stored = await t.db.selectFrom('sessions').select('authenticated_at').where('environment_id', '=', env.id).where('id', '=', session.id).executeTakeFirstOrThrow();
    expect(stored.authenticated_at?.toISOString() ?? null).toBe(PROVES_IDENTITY.includes(metadata.method as string) ? t.clock.now().toISOString() : null);
  }

  const codeFrom = async (env: TestEnv, email: string) => /\b(\d{6})\b/.exec((await t.outbox(env, email))[0]!.subject)![1];

  it('records method password for a password sign-in', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    await expectSignedIn(env, await signIn(t, env, user.email, PASSWORD, { native: true }), { method: 'password' });
  });

  it('records method sign_up for a sign-up that starts a session at once', async () => {
    const env = await t.given.environment({ emailVerificationRequired: false });
    await expectSignedIn(env, await signUp(t, env, 'ada@example.com'), { method: 'sign_up' });
  });

  it('records method email_code for the session an email verification starts', async () => {
    const env = await t.given.environment();
    expect((await signUp(t, env, 'grace@example.com')).statusCode).toBe(201);
    expect(await signedInEvents(env)).toEqual([]);
    const code = await codeFrom(env, 'grace@example.com');
    await expectSignedIn(env, await t.client(env).post('/auth/verify-email', { email: 'grace@example.com', code }), { method: 'email_code' });
  });

  it('records method password_reset for the session a password reset starts', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { email: 'reset@example.com' });
    expect((await t.client(env).post('/auth/forgot-password', { email: user.email })).statusCode).toBe(202);
    const code = await codeFrom(env, 'reset@example.com');
    const res = await t.client(env).post('/auth/reset-password?_is_native=true', { email: user.email, code, newPassword: 'a brand new passphrase' });
    await expectSignedIn(env, res, { method: 'password_reset' });
  });

  it('records method invitation with the invitation for a sign-up from an invitation', async () => {
    const env = await invitingEnvironment(t);
    const { invitation, token } = await invite(t, env);
    const res = await t.client(env).post('/auth/invitation/password-signup?_is_native=true', { token, password: PASSWORD, legalConsentAccepted: true });
    await expectSignedIn(env, res, { method: 'invitation', invitationId: invitation.id });
  });

  it('records method organization_invitation with the organization for a sign-up from an organization invitation', async () => {
    const env = await t.given.environment();
    const owner = await t.given.user(env);
    const org = (await t.server(env).post('/organizations', { name: 'Acme', createdBy: owner.id })).json();
    const ownerClient = t.client(env, { token: (await t.given.session(env, owner)).token });
    const { token } = (await ownerClient.post(`/organizations/${org.id}/invitations`, { email: 'new@example.com', role: 'member' })).json();

    const res = await t.client(env).post('/auth/organization-invitation/password-signup', { token, password: PASSWORD, legalConsentAccepted: true });
    await expectSignedIn(env, res, { method: 'organization_invitation', organizationId: org.id });
  });

  it('records method impersonation with the operator behind the session, for both the POST and the link', async () => {
    const cast = await givenCast(t);
    const { token } = await minted(t, cast);
    await expectSignedIn(cast.env, await t.client(cast.env).post('/auth/session/impersonate', { token }), { method: 'impersonation' }, cast.actor.id);

    const viaLink = await givenCast(t);
    const link = await minted(t, viaLink, { redirectUrl: LANDING });
    const res = await t.client(viaLink.env).get(`/auth/session/impersonate?token=${link.token}`);
    expect(res.statusCode).toBe(303);
    const [event] = await signedInEvents(viaLink.env);
    expect(event).toMatchObject({ actor_id: viaLink.target.id, actor_impersonator_id: viaLink.actor.id, metadata: { method: 'impersonation' } });
  });
});

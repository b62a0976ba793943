import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPE_NAMES } from '../../src/webhooks/catalogue.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { invite, invitingEnvironment } from '../invitations/support.js';
import { givenEndpoint } from './given-endpoint.js';

/** The catalogue (src/webhooks/catalogue.ts) against what the trigger of migration 0028 writes. */
describe('webhook event types', () => {
  let t: TestApp;
  // A database of its own: no other file's worker sends (or fails) these deliveries while they are read.
  beforeAll(async () => { t = await startTestApp({ jobsInBackground: false }, { ownDatabase: true }); });
  afterAll(() => t.close());

  it('are exactly the types the own-trail trigger can write', async () => {
    const sources = await t.db.selectFrom('webhook_event_sources').select('type').distinct().execute();
    expect(sources.map((s) => s.type).sort()).toEqual([...WEBHOOK_EVENT_TYPE_NAMES].sort());
  });

  /** In the order they were written: their deliveries' jobs' (the frozen test clock gives them all one time). */
  const eventsOf = (env: TestEnv) =>
    t.db.selectFrom('webhook_events as v')
      .innerJoin('webhook_deliveries as d', (join) => join.onRef('d.environment_id', '=', 'v.environment_id').onRef('d.event_id', '=', 'v.id'))
      .innerJoin('jobs as j', (join) => join.onRef('j.environment_id', '=', 'd.environment_id').onRef('j.id', '=', 'd.job_id'))
      .select(['v.type', 'v.data']).where('v.environment_id', '=', env.id).orderBy('j.seq').execute();

  it('are written, one per change, for the changes of users, sessions, organizations, memberships and invitations', async () => {
    const env = await t.given.environment();
    await givenEndpoint(t.db, env, 'http://127.0.0.1:9/never');
    const server = t.server(env);
    const ada = await t.given.user(env);
    const grace = await t.given.user(env);
    expect((await server.patch(`/users/${ada.id}`, { firstName: 'Ada' })).statusCode).toBe(200);
    const session = await t.given.session(env, ada);
    expect((await t.client(env, { token: session.token }).delete(`/sessions/${session.id}`)).statusCode).toBe(204);
    expect((await server.post(`/users/${grace.id}/ban`)).statusCode).toBe(200);
    expect((await server.post(`/users/${grace.id}/unban`)).statusCode).toBe(200);
    const org = (await server.post('/organizations', { name: 'Acme', createdBy: ada.id })).json();
    expect((await server.patch(`/organizations/${org.id}`, { name: 'Acme Inc' })).statusCode).toBe(200);
    expect((await server.post(`/organizations/${org.id}/members`, { userId: grace.id, role: 'member' })).statusCode).toBe(201);
    expect((await server.patch(`/organizations/${org.id}/members/${grace.id}`, { role: 'admin' })).statusCode).toBe(200);
    expect((await server.delete(`/organizations/${org.id}/members/${grace.id}`)).statusCode).toBe(204);
    expect((await server.delete(`/organizations/${org.id}`)).statusCode).toBe(204);
    const invitation = (await server.post('/invitations', { email: 'invitee@example.com', publicMetadata: {}, privateMetadata: {} })).json();
    expect((await server.post(`/invitations/${invitation.id}/revoke`)).statusCode).toBe(200);
    expect((await server.delete(`/users/${grace.id}`)).statusCode).toBe(204);

    const events = await eventsOf(env);
    expect(events.map((e) => e.type)).toEqual([
      'user.created', 'user.created', 'user.updated', 'session.created', 'session.revoked', 'user.banned', 'user.unbanned',
      'organization.created', 'organization_membership.created', 'organization.updated', 'organization_membership.created',
      'organization_membership.updated', 'organization_membership.deleted', 'organization.deleted',
      'invitation.created', 'invitation.revoked', 'user.deleted',
    ]);
    expect(events.find((e) => e.type === 'session.created')!.data).toMatchObject({
      object: 'user', id: ada.id, targets: [{ type: 'user', id: ada.id }, { type: 'session', id: session.id }], actor: { type: 'user', id: ada.id },
    });
  });

  it('write user.created before session.created for a sign-up from an invitation, which the trail records as a first sign-in', async () => {
    const env = await invitingEnvironment(t);
    await givenEndpoint(t.db, env, 'http://127.0.0.1:9/never');
    const { token } = await invite(t, env);
    const res = await t.client(env).post('/auth/invitation/password-signup?_is_native=true', { token, password: PASSWORD, legalConsentAccepted: true });
    expect(res.statusCode).toBe(201);
    const events = await eventsOf(env);
    expect(events.map((e) => e.type)).toEqual(['invitation.created', 'invitation.accepted', 'user.created', 'session.created']);
    expect(events[2]!.data).toMatchObject({ object: 'user', id: res.json().user.id });
  });

  it('are not written for an environment without an endpoint, nor for an endpoint that is disabled', async () => {
    const env = await t.given.environment();
    await t.given.user(env);
    const endpoint = await givenEndpoint(t.db, env, 'http://127.0.0.1:9/never');
    await t.db.updateTable('webhook_endpoints').where('environment_id', '=', env.id).where('id', '=', endpoint.id).set({ enabled: false, disabled_reason: 'manual' }).execute();
    await t.given.user(env);
    expect(await eventsOf(env)).toEqual([]);
    expect(await t.db.selectFrom('jobs').select('id').where('environment_id', '=', env.id).where('kind', '=', 'webhook.deliver').execute()).toEqual([]);
  });
});

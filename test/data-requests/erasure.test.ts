import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { sessionIsActive } from '../helpers/given.js';
import { signUp } from '../helpers/flows.js';
import { passwordReset, RESET_SUBJECT } from '../auth/support.js';
import { append, eventBody } from '../audit/support.js';
import { addMember, createOrganization } from '../organizations/support.js';
import { DAY_MS, eventsOf, expectProblem, requested, storedJob, storedRequest, storedUser } from './support.js';

describe('data erasure: POST /_svc/me/data-requests {type: "erasure"}, its grace period and cancel', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({ jobsInBackground: false }, { ownDatabase: true }); });
  afterAll(() => t.close());

  it('schedules the erasure after dataErasureGraceDays (7 by default) and does nothing before', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);

    const created = await requested(t, env, session, 'erasure');

    const completesAt = new Date(t.clock.now().getTime() + 7 * DAY_MS).toISOString();
    expect(created).toMatchObject({ type: 'erasure', status: 'scheduled', completesAt, requestedBy: { type: 'user', id: user.id } });
    expect(await storedJob(t, env, created.id)).toMatchObject({ status: 'queued', attempts: 0, kind: 'data_request.erasure', run_at: new Date(completesAt) });
    t.clock.advance(7 * DAY_MS - 1);
    expect(await t.app.runJobs()).toBe(0);
    expect(await sessionIsActive(t, env, session)).toBe(true);
    expect((await storedUser(t, env, user.id)).email).toBe(user.email);
  });

  it("erases after the grace period: personal data gone, id and deleted status kept, the customer's events kept, own-trail IPs nulled", async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { firstName: 'Ada', lastName: 'Lovelace', publicMetadata: { a: 1 }, privateMetadata: { b: 2 }, unsafeMetadata: { c: 3 } });
    const session = await t.given.session(env, user);
    const customer = await append(t, env, eventBody(t, {
      actor: { type: 'user', id: user.id }, action: 'invoice.paid', context: { ipAddress: '203.0.113.9', userAgent: 'Billing/1.0' },
    }));
    expect(customer.statusCode, customer.body).toBe(201);
    const bystander = await t.given.user(env);
    await t.given.session(env, bystander);
    const secondary = await t.client(env, { token: session.token }).post('/me/email-addresses', { email: `second-${user.id}@example.com` });
    expect(secondary.statusCode, secondary.body).toBe(201);
    const exported = await requested(t, env, session, 'export');
    await t.app.runJobs();
    const created = await requested(t, env, session, 'erasure');

    t.clock.advance(7 * DAY_MS - 1);
    await t.app.runJobs();
    expect((await storedRequest(t, env, exported.id)).archive).not.toBeNull();
    t.clock.advance(1);
    await t.app.runJobs();

    const erasedAt = t.clock.now();
    const row = await storedUser(t, env, user.id);
    expect(row).toMatchObject({
      id: user.id, status: 'deleted', deleted_at: erasedAt, email: null, email_verified_at: null, password_hash: null, name: null, first_name: null,
      last_name: null, locale: null, public_metadata: {}, private_metadata: {}, unsafe_metadata: {},
    });
    expect(await sessionIsActive(t, env, session)).toBe(false);
    expect(await t.db.selectFrom('email_addresses').select('id').where('environment_id', '=', env.id).where('user_id', '=', user.id).execute()).toEqual([]);
    expect(await t.db.selectFrom('email_addresses').select('id').where('environment_id', '=', env.id).where('user_id', '=', bystander.id).execute()).toHaveLength(1);
    expect(await t.db.selectFrom('sessions').select('id').where('environment_id', '=', env.id).where('user_id', '=', user.id).execute()).toEqual([]);
    const apiUser = (await t.server(env).get(`/users/${user.id}`)).json();
    expect(apiUser).toMatchObject({ id: user.id, status: 'deleted', email: null, firstName: null, publicMetadata: {}, privateMetadata: {} });

    const events = await t.db.selectFrom('audit_events').selectAll().where('environment_id', '=', env.id).orderBy('sequence').execute();
    const aboutUser = events.filter((e) => e.actor_id === user.id || e.targets.some((target) => target.type === 'user' && target.id === user.id));
    const own = aboutUser.filter((e) => (e.producer as { type: string }).type === 'gatehouse');
    expect(own.map((e) => e.action)).toEqual(['user.created', 'user.signed_in', 'user.email_address_added', 'data_request.created', 'data_request.completed', 'data_request.created', 'user.erased', 'data_request.completed']);
    expect(own.map((e) => [e.ip_address, e.user_agent])).toEqual(own.map(() => [null, null]));
    const kept = events.find((e) => e.action === 'invoice.paid')!;
    expect(kept).toMatchObject({ actor_id: user.id, ip_address: '203.0.113.9', user_agent: 'Billing/1.0' });
    const bystanderEvents = events.filter((e) => e.actor_id === bystander.id);
    expect(bystanderEvents.map((e) => e.ip_address)).toEqual(['127.0.0.1']);

    expect(await storedRequest(t, env, created.id)).toMatchObject({ status: 'completed', completed_at: erasedAt });
    expect(await storedRequest(t, env, exported.id)).toMatchObject({ status: 'completed', archive: null, expires_at: erasedAt });
    expect((await eventsOf(t, env, 'user.erased')).map((e) => e.metadata)).toEqual([{ removed: { outboxMessages: 2, rateLimitWindows: 0, sessions: 1, identities: 0, ssoIdentities: 0, emailAddresses: 2, secondFactors: 0, passkeys: 0, account: 1, ownTrail: 5, exportArchives: 1 } }]);
    expect((await eventsOf(t, env, 'data_request.completed')).map((e) => e.metadata)).toEqual([{ type: 'export' }, { type: 'erasure' }]);
    expect(await storedJob(t, env, created.id)).toMatchObject({ status: 'done', attempts: 1 });
  });

  it('cancels during the grace period: the request is cancelled and the job, when it comes, erases nothing', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    const created = await requested(t, env, session, 'erasure');
    t.clock.advance(DAY_MS);

    const res = await t.client(env, { token: session.token }).post(`/me/data-requests/${created.id}/cancel`);

    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ...created, status: 'cancelled', cancelledAt: t.clock.now().toISOString(), cancelReason: 'requested' });
    expectProblem(await t.client(env, { token: session.token }).post(`/me/data-requests/${created.id}/cancel`), 409, 'data_request_not_cancellable');
    t.clock.advance(7 * DAY_MS);
    await t.app.runJobs();
    expect(await storedJob(t, env, created.id)).toMatchObject({ status: 'done', attempts: 1 });
    expect(await storedUser(t, env, user.id)).toMatchObject({ status: 'active', email: user.email });
    expect(await t.db.selectFrom('sessions').select('revoked_at').where('environment_id', '=', env.id).where('id', '=', session.id).execute()).toEqual([{ revoked_at: null }]);
    expect((await storedRequest(t, env, created.id)).status).toBe('cancelled');
    expect(await eventsOf(t, env, 'user.erased')).toEqual([]);
    expect((await eventsOf(t, env, 'data_request.cancelled')).map((e) => [e.actor_id, e.metadata])).toEqual([[user.id, { type: 'erasure', reason: 'requested' }]]);
    // A new erasure can be requested once the first is cancelled (a fresh session: the old one idled out meanwhile).
    expect((await requested(t, env, await t.given.session(env, user), 'erasure')).status).toBe('scheduled');
  });

  it('refuses a second erasure while one is scheduled, and cancelling an export with 409 data_request_not_cancellable', async () => {
    const env = await t.given.environment();
    const session = await t.given.session(env, await t.given.user(env));
    await requested(t, env, session, 'erasure');
    expectProblem(await t.client(env, { token: session.token }).post('/me/data-requests', { type: 'erasure' }), 409, 'data_request_in_progress');
    const exported = await requested(t, env, session, 'export');
    expectProblem(await t.client(env, { token: session.token }).post(`/me/data-requests/${exported.id}/cancel`), 409, 'data_request_not_cancellable');
  });

  it('refuses the erasure of the last active owner of an organization with 409 last_owner', async () => {
    const env = await t.given.environment();
    const owner = await t.given.user(env);
    const session = await t.given.session(env, owner);
    const organization = await createOrganization(t, env, { createdBy: owner.id });

    const res = await t.client(env, { token: session.token }).post('/me/data-requests', { type: 'erasure' });

    expect(expectProblem(res, 409, 'last_owner').properties.organizationIds).toEqual([organization.id]);
    expect(await t.db.selectFrom('data_requests').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
  });

  it('cancels the erasure with reason last_owner when the user has become the last owner by the time it runs', async () => {
    const env = await t.given.environment();
    const [user, founder] = [await t.given.user(env), await t.given.user(env)];
    const organization = await createOrganization(t, env, { createdBy: founder.id });
    await addMember(t, env, organization.id, user.id, 'owner');
    const created = await requested(t, env, await t.given.session(env, user), 'erasure');
    expect((await t.server(env).delete(`/organizations/${organization.id}/members/${founder.id}`)).statusCode).toBe(204);

    t.clock.advance(7 * DAY_MS);
    await t.app.runJobs();

    expect(await storedRequest(t, env, created.id)).toMatchObject({ status: 'cancelled', cancel_reason: 'last_owner' });
    expect((await storedUser(t, env, user.id)).status).toBe('active');
    expect((await eventsOf(t, env, 'data_request.cancelled')).map((e) => e.metadata)).toEqual([{ type: 'erasure', reason: 'last_owner', organizationIds: [organization.id] }]);
  });

  it('lets an operator erase at once with graceDays 0, a deleted user included, and cancel a scheduled one', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    expect((await t.server(env).delete(`/users/${user.id}`)).statusCode).toBe(204);
    const deletedAt = (await storedUser(t, env, user.id)).deleted_at;
    t.clock.advance(1000);

    const res = await t.server(env).post(`/users/${user.id}/data-requests`, { type: 'erasure', graceDays: 0 });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ status: 'scheduled', completesAt: t.clock.now().toISOString() });
    await t.app.runJobs();
    expect(await storedUser(t, env, user.id)).toMatchObject({ status: 'deleted', deleted_at: deletedAt, email: null });
    expect((await t.server(env).get(`/data-requests/${res.json().id}`)).json().status).toBe('completed');

    const other = await t.given.user(env);
    const scheduled = (await t.server(env).post(`/users/${other.id}/data-requests`, { type: 'erasure' })).json();
    const cancelled = await t.server(env).post(`/data-requests/${scheduled.id}/cancel`);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json()).toMatchObject({ status: 'cancelled', cancelReason: 'requested' });
  });

  it('erases the mail to the user (codes in its subjects) and the rate-limit windows counted by their email, and no one else\'s', async () => {
    const env = await t.given.environment();
    const { forgot, requestCode } = passwordReset(() => t);
    expect((await signUp(t, env, 'ada.erased@example.com')).statusCode).toBe(201);
    const [verification] = await t.outbox(env, 'ada.erased@example.com');
    const verificationCode = /\d{6}/.exec(verification.subject)![0];
    const verified = await t.client(env).post('/auth/verify-email', { email: 'ada.erased@example.com', code: verificationCode });
    expect(verified.statusCode, verified.body).toBe(200);
    const resetCode = await requestCode(env, 'Ada.Erased@Example.com');
    const bystander = await t.given.user(env, { email: 'bystander@example.com' });
    expect((await forgot(env, 'bystander@example.com')).statusCode).toBe(202);
    const outboxRows = () => t.db.selectFrom('outbox_messages').selectAll().where('environment_id', '=', env.id).execute();
    const windowRows = () => t.db.selectFrom('rate_limit_windows').selectAll().where('environment_id', '=', env.id).execute();
    expect((await t.outbox(env, 'ada.erased@example.com')).map((mail) => mail.subject)).toEqual([`Your password reset code is ${resetCode}`, verification.subject]);
    // The windows never hold the address: they count it by its hash.
    const perEmail = (await windowRows()).filter((row) => row.bucket.includes(':email:'));
    expect(perEmail.map((row) => row.bucket)).toEqual([expect.stringMatching(/^forgot_password:email:[0-9a-f]{64}$/), expect.stringMatching(/^forgot_password:email:[0-9a-f]{64}$/)]);
    expect(JSON.stringify(await windowRows()).toLowerCase()).not.toContain('ada.erased@example.com');

    const userId = verified.json().user.id;
    expect((await t.server(env).post(`/users/${userId}/data-requests`, { type: 'erasure', graceDays: 0 })).statusCode).toBe(202);
    await t.app.runJobs();

    expect(await storedUser(t, env, userId)).toMatchObject({ status: 'deleted', email: null });
    // Every column of every row that is left: no address, no code.
    const left = JSON.stringify([await outboxRows(), await windowRows()]).toLowerCase();
    for (const trace of ['ada.erased@example.com', resetCode, verificationCode]) expect(left).not.toContain(trace);
    expect(await t.outbox(env, 'ada.erased@example.com')).toEqual([]);
    expect(await t.db.selectFrom('rate_limit_windows').select('count').where('environment_id', '=', env.id).where('bucket', 'like', '%:email:%').execute()).toEqual([{ count: 1 }]);
    expect((await t.outbox(env, bystander.email!)).map((mail) => mail.subject)).toEqual([expect.stringMatching(RESET_SUBJECT)]);
    expect((await eventsOf(t, env, 'user.erased')).map((e) => e.metadata)).toEqual([{ removed: expect.objectContaining({ outboxMessages: 2, rateLimitWindows: 1 }) }]);
  });

  it("keeps the mail and windows of an address another user has taken since the erased user was deleted", async () => {
    const env = await t.given.environment();
    const { forgot } = passwordReset(() => t);
    const former = await t.given.user(env, { email: 'reused@example.com' });
    expect((await t.server(env).delete(`/users/${former.id}`)).statusCode).toBe(204);
    expect((await signUp(t, env, 'reused@example.com')).statusCode).toBe(201);
    expect((await forgot(env, 'reused@example.com')).statusCode).toBe(202);
    const mailBefore = await t.outbox(env, 'reused@example.com');
    expect(mailBefore.length).toBeGreaterThan(0);

    expect((await t.server(env).post(`/users/${former.id}/data-requests`, { type: 'erasure', graceDays: 0 })).statusCode).toBe(202);
    await t.app.runJobs();

    expect(await t.outbox(env, 'reused@example.com')).toEqual(mailBefore);
    expect((await eventsOf(t, env, 'user.erased')).map((e) => e.metadata)).toEqual([{ removed: expect.objectContaining({ outboxMessages: 0, rateLimitWindows: 0, emailAddresses: 1 }) }]);
  });

  it('uses the environment setting dataErasureGraceDays, which must be an integer from 0 to 365', async () => {
    const env = await t.given.environment({ dataErasureGraceDays: 2 });
    const created = await requested(t, env, await t.given.session(env, await t.given.user(env)), 'erasure');
    expect(created.completesAt).toBe(new Date(t.clock.now().getTime() + 2 * DAY_MS).toISOString());
    const bad = await t.admin.patch(`/environments/${env.id}`, { settings: { dataErasureGraceDays: 366 } });
    expect(bad.statusCode).toBe(400);
  });

  it("gives another user 404 when cancelling the user's erasure, and never cancels it", async () => {
    const env = await t.given.environment();
    const created = await requested(t, env, await t.given.session(env, await t.given.user(env)), 'erasure');
    const stranger = await t.given.session(env, await t.given.user(env));
    expectProblem(await t.client(env, { token: stranger.token }).post(`/me/data-requests/${created.id}/cancel`), 404, 'data_request_not_found');
    const [mine] = [await t.given.environment()];
    expectProblem(await t.server(mine).post(`/data-requests/${created.id}/cancel`), 404, 'data_request_not_found');
    expect((await storedRequest(t, env, created.id)).status).toBe('scheduled');
  });
});

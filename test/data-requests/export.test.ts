import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { append, eventBody } from '../audit/support.js';
import { createOrganization } from '../organizations/support.js';
import { DAY_MS, expectProblem, MISSING_ID, requested, storedJob, storedRequest, eventsOf } from './support.js';

describe('data exports: POST /_svc/me/data-requests {type: "export"} and the download', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({ jobsInBackground: false }, { ownDatabase: true }); });
  afterAll(() => t.close());

  it('answers 202 pending, and once the job ran the archive holds every section and no secret', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { firstName: 'Ada', lastName: 'Lovelace', publicMetadata: { plan: 'pro' }, privateMetadata: { riskScore: 7 } });
    const session = await t.given.session(env, user);
    await createOrganization(t, env, { createdBy: user.id });
    const appended = await append(t, env, eventBody(t, { actor: { type: 'user', id: user.id }, action: 'document.read' }));
    expect(appended.statusCode, appended.body).toBe(201);
    const other = await t.given.user(env);
    await append(t, env, eventBody(t, { actor: { type: 'user', id: other.id }, action: 'document.unrelated' }));

    const created = await requested(t, env, session, 'export');
    expect(created).toEqual({
      id: expect.any(String), userId: user.id, type: 'export', status: 'pending', requestedBy: { type: 'user', id: user.id },
      createdAt: t.clock.now().toISOString(), completesAt: null, readyAt: null, expiresAt: null, completedAt: null, cancelledAt: null, cancelReason: null,
    });
    const early = await t.client(env, { token: session.token }).get(`/me/data-requests/${created.id}/download`);
    expectProblem(early, 409, 'export_not_ready');

    await t.app.runJobs();

    const listed = (await t.client(env, { token: session.token }).get('/me/data-requests')).json();
    expect(listed.items).toEqual([{ ...created, status: 'ready', readyAt: t.clock.now().toISOString(), expiresAt: new Date(t.clock.now().getTime() + 7 * DAY_MS).toISOString() }]);
    const res = await t.client(env, { token: session.token }).get(`/me/data-requests/${created.id}/download`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="data-export-${created.id}.json"`);
    expect(res.headers['cache-control']).toBe('no-store');
    const archive = res.json();
    expect(archive).toMatchObject({ format: 'gatehouse.data-export.v1', requestId: created.id, userId: user.id, environmentId: env.id, generatedAt: t.clock.now().toISOString() });
    expect(Object.keys(archive.sections).sort()).toEqual(['auditEvents', 'dataRequests', 'emailAddresses', 'identities', 'invitations', 'memberships', 'organizationInvitations', 'passkeys', 'secondFactors', 'sessions', 'user']);
    const { sections } = archive;
    expect(sections.user).toMatchObject({ id: user.id, email: user.email, firstName: 'Ada', lastName: 'Lovelace', name: 'Ada Lovelace', publicMetadata: { plan: 'pro' }, status: 'active' });
    expect(sections.user).not.toHaveProperty('privateMetadata');
    expect(res.body).not.toContain('riskScore');
    expect(res.body).not.toMatch(/argon2|password_?hash|passwordHash|token_?hash/i);
    expect(sections.emailAddresses).toEqual([expect.objectContaining({ email: user.email, isPrimary: true, verifiedAt: expect.any(String) })]);
    expect(res.body).not.toMatch(/code_?hash|codeHash/i);
    expect(sections.sessions).toEqual([expect.objectContaining({ id: session.id, ipAddress: '127.0.0.1', revokedAt: null })]);
    expect(sections.memberships).toEqual([expect.objectContaining({ organizationName: 'Acme', role: 'owner' })]);
    const actions = sections.auditEvents.map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['user.created', 'document.read', 'data_request.created']));
    expect(actions).not.toContain('document.unrelated');
    expect(sections.dataRequests).toEqual([expect.objectContaining({ id: created.id, type: 'export' })]);

    expect(await storedJob(t, env, created.id)).toMatchObject({ status: 'done', attempts: 1, kind: 'data_request.export' });
    expect((await eventsOf(t, env, 'data_request.created')).map((e) => e.metadata)).toEqual([{ type: 'export' }]);
    expect((await eventsOf(t, env, 'data_request.completed')).map((e) => [e.actor_type, e.metadata, e.producer])).toEqual([['system', { type: 'export' }, { type: 'gatehouse', via: 'job' }]]);
  });

  it('mails the user that the export is ready, in their language, linking the hosted data page, only once the archive exists', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    await t.server(env).patch(`/users/${user.id}`, { locale: 'da' });
    const session = await t.given.session(env, user);
    await requested(t, env, session, 'export');
    expect(await t.outbox(env, user.email!)).toEqual([]);

    await t.app.runJobs();

    const [mail, ...more] = await t.outbox(env, user.email!);
    expect(more).toEqual([]);
    expect(mail.subject).toBe(`Din dataeksport fra ${env.name} er klar`);
    expect(mail.text).toContain('Eksporten af dine data hos');
    expect(mail.text).toContain(`Åbn dine data:\nhttp://${env.frontendHost}/account/data`);
    expect(mail.html).toContain(`href="http://${env.frontendHost}/account/data"`);
  });

  it("lists invitations to any of the user's addresses, secondary ones included, and no other", async () => {
    const env = await t.given.environment({ signUpUrl: 'https://app.example.com/sign-up' });
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    const second = `second-${user.id}@example.com`;
    // Invited at an address before the user added it to their account.
    for (const email of [second, `someone-else-${user.id}@example.com`]) {
      const res = await t.server(env).post('/invitations', { email, publicMetadata: {}, privateMetadata: {} });
      expect(res.statusCode, res.body).toBe(201);
    }
    expect((await t.client(env, { token: session.token }).post('/me/email-addresses', { email: second })).statusCode).toBe(201);
    const created = await requested(t, env, session, 'export');
    await t.app.runJobs();

    const { sections } = (await t.client(env, { token: session.token }).get(`/me/data-requests/${created.id}/download`)).json();
    expect(sections.invitations.map((i: { email: string }) => i.email)).toEqual([second]);
    expect(sections.emailAddresses.map((a: { email: string; isPrimary: boolean }) => [a.email, a.isPrimary])).toEqual([[user.email, true], [second, false]]);
  });

  it('refuses a second export while one is pending with 409 data_request_in_progress, and allows one once it is ready', async () => {
    const env = await t.given.environment();
    const session = await t.given.session(env, await t.given.user(env));
    await requested(t, env, session, 'export');
    expectProblem(await t.client(env, { token: session.token }).post('/me/data-requests', { type: 'export' }), 409, 'data_request_in_progress');
    await t.app.runJobs();
    await requested(t, env, session, 'export');
    const list = (await t.client(env, { token: session.token }).get('/me/data-requests')).json();
    expect(list.items.map((r: { status: string }) => r.status)).toEqual(['pending', 'ready']);
  });

  it('expires the link after 7 days: the download is 410 export_expired, the request reads as completed, and housekeeping deletes the archive', async () => {
    const env = await t.given.environment();
    const session = await t.given.session(env, await t.given.user(env));
    const created = await requested(t, env, session, 'export');
    await t.app.runJobs();
    const readyAt = t.clock.now();

    t.clock.advance(7 * DAY_MS - 1);
    expect((await t.client(env, { token: session.token }).get(`/me/data-requests/${created.id}/download`)).statusCode).toBe(200);
    t.clock.advance(1);
    expectProblem(await t.client(env, { token: session.token }).get(`/me/data-requests/${created.id}/download`), 410, 'export_expired');
    const expiresAt = new Date(readyAt.getTime() + 7 * DAY_MS).toISOString();
    const listed = (await t.server(env).get(`/data-requests/${created.id}`)).json();
    expect(listed).toMatchObject({ status: 'completed', completedAt: expiresAt, expiresAt });
    expect((await storedRequest(t, env, created.id)).archive).not.toBeNull();

    await t.app.runHousekeeping();
    expect(await storedRequest(t, env, created.id)).toMatchObject({ status: 'completed', archive: null, completed_at: new Date(expiresAt) });
    expectProblem(await t.client(env, { token: session.token }).get(`/me/data-requests/${created.id}/download`), 410, 'export_expired');
  });

  it("keeps environments apart: another environment's request is 404 like a missing one, and its lists are empty", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const theirUser = await t.given.user(theirs);
    const created = await requested(t, theirs, await t.given.session(theirs, theirUser), 'export');
    await t.app.runJobs();
    const me = await t.given.session(mine, await t.given.user(mine));

    const foreign = await t.client(mine, { token: me.token }).get(`/me/data-requests/${created.id}/download`);
    const missing = await t.client(mine, { token: me.token }).get(`/me/data-requests/${MISSING_ID}/download`);
    expectProblem(foreign, 404, 'data_request_not_found');
    expect(foreign.json().detail).toBe(missing.json().detail);
    expectProblem(await t.server(mine).get(`/data-requests/${created.id}`), 404, 'data_request_not_found');
    expect((await t.server(mine).get('/data-requests')).json()).toEqual({ items: [], nextCursor: null, hasMore: false });
    expect((await t.client(mine, { token: me.token }).get('/me/data-requests')).json().items).toEqual([]);
    expectProblem(await t.server(mine).post(`/users/${theirUser.id}/data-requests`, { type: 'export' }), 404, 'user_not_found');
  });

  it("gives another user of the same environment 404 for the user's export", async () => {
    const env = await t.given.environment();
    const created = await requested(t, env, await t.given.session(env, await t.given.user(env)), 'export');
    await t.app.runJobs();
    const stranger = await t.given.session(env, await t.given.user(env));
    expectProblem(await t.client(env, { token: stranger.token }).get(`/me/data-requests/${created.id}/download`), 404, 'data_request_not_found');
  });

  it('lets an operator start an export and list requests filtered by status, type and user', async () => {
    const env = await t.given.environment();
    const [ada, bob] = [await t.given.user(env), await t.given.user(env)];
    const exportRes = await t.server(env).post(`/users/${ada.id}/data-requests`, { type: 'export' });
    expect(exportRes.statusCode, exportRes.body).toBe(202);
    expect(exportRes.json()).toMatchObject({ status: 'pending', requestedBy: { type: 'api_key', id: expect.any(String) } });
    const erasure = await t.server(env).post(`/users/${bob.id}/data-requests`, { type: 'erasure', graceDays: 30 });
    expect(erasure.json()).toMatchObject({ status: 'scheduled', completesAt: new Date(t.clock.now().getTime() + 30 * DAY_MS).toISOString() });
    await t.app.runJobs();

    const ids = async (query: string) => (await t.server(env).get(`/data-requests${query}`)).json().items.map((r: { id: string }) => r.id);
    expect(await ids('')).toEqual([exportRes.json().id, erasure.json().id]);
    expect(await ids('?status=ready')).toEqual([exportRes.json().id]);
    expect(await ids('?type=erasure')).toEqual([erasure.json().id]);
    expect(await ids(`?userId=${bob.id}`)).toEqual([erasure.json().id]);
    expect(await ids('?status=pending')).toEqual([]);
    const page = (await t.server(env).get('/data-requests?limit=1')).json();
    expect(page).toMatchObject({ hasMore: true, nextCursor: exportRes.json().id });
    expectProblem(await t.server(env).post(`/users/${ada.id}/data-requests`, { type: 'export', graceDays: 3 }), 400, 'invalid_request');
    expectProblem(await t.server(env).post(`/users/${MISSING_ID}/data-requests`, { type: 'export' }), 404, 'user_not_found');
    expectProblem(await t.server(env).post(`/users/${randomUUID()}/data-requests`, { type: 'rectify' }), 400, 'invalid_request');
  });
});

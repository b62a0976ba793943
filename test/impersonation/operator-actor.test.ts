import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Impersonation } from '../../src/impersonation/schemas.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { pageBrowser } from '../hosted-pages/support.js';
import { asDashboard, signedInOperator } from '../operators/support.js';
import { APP_ORIGIN, eventsOf, expectProblem, givenCast, LANDING, redeem, storedLedger, type Cast } from './support.js';

const ajv = new Ajv({ strict: false });
addFormats.default(ajv);
const isImpersonation = ajv.compile(Impersonation);

const bannerOf = (html: string) => /<p class="impersonation" role="status">([^<]*)<\/p>/.exec(html)?.[1];

/** The dashboard's mint: the operator's session cookie and the environment header, no secret key. */
describe('minting with a dashboard operator\'s session and no actorUserId: the operator is the actor', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const asOperator = (cookie: string, env: TestEnv, method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) =>
    asDashboard(t, method, `/api/server/v1${path}`, { cookie, body, headers: { 'gatehouse-environment': env.id } });
  const operatorMint = (cookie: string, cast: Cast, body: Record<string, unknown> = {}) =>
    asOperator(cookie, cast.env, 'POST', `/users/${cast.target.id}/impersonation-token`, { reason: 'Ticket #77: cannot see invoices', redirectUrl: LANDING, ...body });

  it('records the operator in the ledger (actorOperatorId, actorUserId null) and answers entries that match the Impersonation schema', async () => {
    const operator = await signedInOperator(t);
    const cast = await givenCast(t);
    const res = await operatorMint(operator.cookie, cast);
    expect(res.statusCode, res.body).toBe(201);
    const { id, url } = res.json();
    expect(url).toMatch(new RegExp(`^http://${cast.env.frontendHost}/_svc/auth/session/impersonate\\?token=imp_`));

    const [row] = await storedLedger(t, cast.env);
    expect(row).toMatchObject({ id, actor_user_id: null, actor_operator_id: operator.id, target_user_id: cast.target.id, reason: 'Ticket #77: cannot see invoices' });
    const entry = (await t.server(cast.env).get(`/impersonations/${id}`)).json();
    expect(entry).toMatchObject({ id, actorUserId: null, actorOperatorId: operator.id, targetUserId: cast.target.id, status: 'pending' });
    expect(isImpersonation(entry), JSON.stringify(isImpersonation.errors)).toBe(true);
    const listed = (await t.server(cast.env).get(`/impersonations?targetUserId=${cast.target.id}`)).json().items;
    expect(listed).toEqual([entry]);
  });

  it('keeps a user actor when the operator sends actorUserId, and shows actorOperatorId null for it', async () => {
    const operator = await signedInOperator(t);
    const cast = await givenCast(t);
    const res = await operatorMint(operator.cookie, cast, { actorUserId: cast.actor.id });
    expect(res.statusCode, res.body).toBe(201);
    const entry = (await t.server(cast.env).get(`/impersonations/${res.json().id}`)).json();
    expect(entry).toMatchObject({ actorUserId: cast.actor.id, actorOperatorId: null });
    expect(isImpersonation(entry), JSON.stringify(isImpersonation.errors)).toBe(true);
    const [event] = await eventsOf(t, cast.env, 'impersonation.created');
    expect(event).toMatchObject({ actor_type: 'user', actor_id: cast.actor.id, metadata: { mintedBy: { type: 'operator', id: operator.id } } });
  });

  it('still requires actorUserId from a secret key: 400 invalid_request naming /body/actorUserId, and stores nothing', async () => {
    const cast = await givenCast(t);
    const body = expectProblem(await t.server(cast.env).post(`/users/${cast.target.id}/impersonation-token`, { reason: 'no actor' }), 400, 'invalid_request');
    expect(body.properties.errors).toEqual([{ path: '/body/actorUserId', message: "must have required property 'actorUserId'" }]);
    expect(await storedLedger(t, cast.env)).toEqual([]);
    expect((await t.server(cast.env).get('/impersonations/usage')).json().used).toBe(0);
  });

  it('records impersonation.created with the operator as actor, the reason, and the operator as minter', async () => {
    const operator = await signedInOperator(t);
    const cast = await givenCast(t);
    const { id } = (await operatorMint(operator.cookie, cast, { expiresInSeconds: 300 })).json();
    const [event] = await eventsOf(t, cast.env, 'impersonation.created');
    expect(event).toMatchObject({
      actor_type: 'operator', actor_id: operator.id, actor_impersonator_id: null,
      targets: [{ type: 'user', id: cast.target.id }, { type: 'impersonation', id }],
      metadata: { reason: 'Ticket #77: cannot see invoices', expiresInSeconds: 300, mintedBy: { type: 'operator', id: operator.id } },
      producer: { type: 'gatehouse', via: 'server_api' },
    });
    const byApi = (await t.server(cast.env).get(`/audit-events?action=impersonation.created&targetId=${cast.target.id}`)).json().items;
    expect(byApi[0].actor).toEqual({ type: 'operator', id: operator.id, impersonatorId: null });
  });

  it('counts against the same monthly quota as secret-key mints: 429 impersonation_quota_exhausted either way once spent', async () => {
    const operator = await signedInOperator(t);
    const cast = await givenCast(t, { plan: { impersonationQuotaPerMonth: 2 } });
    expect((await operatorMint(operator.cookie, cast)).statusCode).toBe(201);
    const byKey = await t.server(cast.env).post(`/users/${cast.target.id}/impersonation-token`, { actorUserId: cast.actor.id, reason: 'by key' });
    expect(byKey.statusCode, byKey.body).toBe(201);
    const usage = await asOperator(operator.cookie, cast.env, 'GET', '/impersonations/usage');
    expect(usage.json()).toMatchObject({ used: 2, quota: 2, remaining: 0 });
    const refused = expectProblem(await operatorMint(operator.cookie, cast), 429, 'impersonation_quota_exhausted');
    expect(refused.properties).toMatchObject({ quota: 2 });
    expect((await storedLedger(t, cast.env)).length).toBe(2);
  });

  it('refuses a deleted or banned target as for a user actor (403), storing and counting nothing', async () => {
    const operator = await signedInOperator(t);
    const cast = await givenCast(t);
    await t.server(cast.env).post(`/users/${cast.target.id}/ban`);
    expectProblem(await operatorMint(operator.cookie, cast), 403, 'user_banned');
    await t.server(cast.env).delete(`/users/${cast.target.id}`);
    expectProblem(await operatorMint(operator.cookie, cast), 403, 'user_deleted');
    expect(await storedLedger(t, cast.env)).toEqual([]);
    expect((await t.server(cast.env).get('/impersonations/usage')).json().used).toBe(0);
  });

  it('starts a session whose actor is the operator, recording impersonation.redeemed with the operator as actor', async () => {
    const operator = await signedInOperator(t);
    const cast = await givenCast(t);
    const { token, id } = (await operatorMint(operator.cookie, cast, { reason: 'Ticket #78' })).json();
    const res = await redeem(t, cast.env, token);
    expect(res.statusCode, res.body).toBe(200);
    const actor = { type: 'operator', id: operator.id, impersonatorId: operator.id };
    const { session, sessionToken } = res.json();
    expect(session).toMatchObject({ userId: cast.target.id, actor });
    expect((await t.client(cast.env, { token: sessionToken }).get('/me')).json()).toMatchObject({ id: cast.target.id, actor });
    const listed = (await t.server(cast.env).get(`/users/${cast.target.id}/sessions`)).json().items;
    expect(listed).toEqual([expect.objectContaining({ id: session.id, actor })]);

    const [event] = await eventsOf(t, cast.env, 'impersonation.redeemed');
    expect(event).toMatchObject({
      actor_type: 'operator', actor_id: operator.id, actor_impersonator_id: null,
      targets: [{ type: 'user', id: cast.target.id }, { type: 'session', id: session.id }, { type: 'impersonation', id }],
      metadata: { reason: 'Ticket #78', by: 'post' },
    });
    const entry = (await t.server(cast.env).get(`/impersonations/${id}`)).json();
    expect(entry).toMatchObject({ status: 'redeemed', actorOperatorId: operator.id, redemption: { sessionId: session.id } });
    expect(isImpersonation(entry), JSON.stringify(isImpersonation.errors)).toBe(true);
  });

  it('redeems the browser link to the landing URL, and the impersonated session stays restricted like any other', async () => {
    const operator = await signedInOperator(t);
    const cast = await givenCast(t);
    const { url } = (await operatorMint(operator.cookie, cast)).json();
    const link = await t.app.inject({ method: 'GET', url: new URL(url).pathname + new URL(url).search, headers: { host: cast.env.frontendHost } });
    expect(link.statusCode, link.body).toBe(303);
    expect(link.headers.location).toBe(LANDING);
    const own = await t.given.session(cast.env, cast.target);
    const session = t.client(cast.env, { token: await redeemedToken(t, cast, operator.cookie) });
    expectProblem(await session.delete(`/sessions/${own.id}`), 403, 'impersonation_restricted');
    expect((await t.client(cast.env, { token: own.token }).get('/me')).statusCode).toBe(200);
  });

  it('names the operator (their email) on the hosted pages\' impersonation banner', async () => {
    const operator = await signedInOperator(t);
    const cast = await givenCast(t);
    const sessionToken = await redeemedToken(t, cast, operator.cookie);
    const browser = pageBrowser(t, cast.env);
    browser.jar.set('__session', sessionToken);
    expect(bannerOf((await browser.get('/sign-out')).body)).toBe(`Impersonation: ${operator.email} is signed in as this user. Everything done here is recorded in their name.`);
  });

  it('still names a user actor by their name on the banner', async () => {
    const cast = await givenCast(t);
    await t.server(cast.env).patch(`/users/${cast.actor.id}`, { name: 'Sam Support' });
    const minted = await t.server(cast.env).post(`/users/${cast.target.id}/impersonation-token`, { actorUserId: cast.actor.id, reason: 'x' });
    const session = (await redeem(t, cast.env, minted.json().token)).json().sessionToken as string;
    const browser = pageBrowser(t, cast.env);
    browser.jar.set('__session', session);
    expect(bannerOf((await browser.get('/sign-out')).body)).toContain('Impersonation: Sam Support is signed in');
  });

  it('lets the ledger hold exactly one actor: a row with both or neither is refused by the database', async () => {
    const operator = await signedInOperator(t);
    const cast = await givenCast(t);
    const { id } = (await operatorMint(operator.cookie, cast)).json();
    const set = (values: { actor_user_id: string | null; actor_operator_id: string | null }) =>
      t.db.updateTable('impersonations').set(values).where('environment_id', '=', cast.env.id).where('id', '=', id).execute();
    await expect(set({ actor_user_id: cast.actor.id, actor_operator_id: operator.id })).rejects.toThrow(/impersonations_one_actor/);
    await expect(set({ actor_user_id: null, actor_operator_id: null })).rejects.toThrow(/impersonations_one_actor/);
  });

  async function redeemedToken(app: TestApp, cast: Cast, cookie: string) {
    const { token } = (await operatorMint(cookie, cast)).json();
    const res = await redeem(app, cast.env, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().sessionToken as string;
  }

  it('allows the dashboard origin only: the mint is a change made with the operator cookie', async () => {
    const operator = await signedInOperator(t);
    const cast = await givenCast(t);
    const res = await t.app.inject({
      method: 'POST', url: `/api/server/v1/users/${cast.target.id}/impersonation-token`, payload: { reason: 'x' },
      headers: { host: 'gatehouse.test', origin: APP_ORIGIN, cookie: `gatehouse_operator=${operator.cookie}`, 'gatehouse-environment': cast.env.id },
    });
    expectProblem(res, 403, 'forbidden');
    expect(await storedLedger(t, cast.env)).toEqual([]);
  });
});

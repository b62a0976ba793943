import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/platform/crypto/tokens.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { APP_ORIGIN, expectProblem, givenCast, LANDING, MISSING_ID, mint, minted, storedLedger, eventsOf } from './support.js';

describe('POST /api/server/v1/users/:userId/impersonation-token', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('mints a single-use token stored only as its hash, with a redeem link on the frontend host', async () => {
    const cast = await givenCast(t);
    const res = await mint(t, cast, { redirectUrl: LANDING, expiresInSeconds: 120 });

    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['expiresAt', 'expiresInSeconds', 'id', 'token', 'url']);
    expect(body.token).toMatch(/^imp_[A-Za-z0-9_-]{43}$/);
    expect(body.expiresInSeconds).toBe(120);
    expect(new Date(body.expiresAt).getTime()).toBe(t.clock.now().getTime() + 120_000);
    expect(body.url).toBe(`http://${cast.env.frontendHost}/_svc/auth/session/impersonate?token=${body.token}`);
    const [row] = await storedLedger(t, cast.env);
    expect(row).toMatchObject({ id: body.id, actor_user_id: cast.actor.id, target_user_id: cast.target.id, landing_url: LANDING, redeemed_at: null });
    expect(Buffer.from(row!.token_hash).equals(sha256(body.token))).toBe(true);
    expect(JSON.stringify(row)).not.toContain(body.token.slice(4));
  });

  it('defaults the lifetime to 600 seconds and the landing to the impersonationLandingUrl setting', async () => {
    const cast = await givenCast(t, { impersonationLandingUrl: `${APP_ORIGIN}/support/landing` });
    const body = await minted(t, cast);
    expect(body.expiresInSeconds).toBe(600);
    expect(body.url).toContain('/_svc/auth/session/impersonate?token=');
    expect((await storedLedger(t, cast.env))[0]!.landing_url).toBe(`${APP_ORIGIN}/support/landing`);
  });

  it('refuses with 400 redirect_url_not_allowed, naming the setting, when the impersonationLandingUrl setting is not on an allowed origin, and stores nothing', async () => {
    const cast = await givenCast(t, { impersonationLandingUrl: 'https://support.example.com/landing' });
    const body = expectProblem(await mint(t, cast), 400, 'redirect_url_not_allowed');
    expect(body.detail).toContain('impersonationLandingUrl');
    expect(await storedLedger(t, cast.env)).toEqual([]);
    expect((await mint(t, cast, { redirectUrl: LANDING })).statusCode).toBe(201);
  });

  it('answers url null when neither redirectUrl nor impersonationLandingUrl is set', async () => {
    const body = await minted(t, await givenCast(t));
    expect(body.url).toBeNull();
    expect(body.token).toMatch(/^imp_/);
  });

  it('accepts redirect URLs of allowed custom-scheme and explicit-port origins, stored exactly as given', async () => {
    const cast = await givenCast(t);
    for (const redirectUrl of ['myapp://callback/impersonated?x=1#top', 'http://localhost:5173/admin#/users/1']) {
      const body = await minted(t, cast, { redirectUrl });
      expect((await t.server(cast.env).get(`/impersonations/${body.id}`)).json().landingUrl).toBe(redirectUrl);
    }
  });

  it.each([
    ['another origin', 'https://evil.example.com/x'],
    ['a subdomain of an allowed origin', 'https://app.example.com.evil.com/'],
    ['credentials before the host', 'https://app.example.com@evil.com/'],
    ['a scheme-relative URL', '//app.example.com/x'],
    ['javascript:', 'javascript:alert(1)'],
    ['another port of an allowed origin', 'http://localhost:5174/'],
    ['not a URL', 'not a url'],
  ])('refuses a redirectUrl that is %s with 400 redirect_url_not_allowed and stores nothing', async (_name, redirectUrl) => {
    const cast = await givenCast(t);
    const res = await mint(t, cast, { redirectUrl });
    if (redirectUrl.includes(' ')) expectProblem(res, 400, 'invalid_request');
    else expectProblem(res, 400, 'redirect_url_not_allowed');
    expect(await storedLedger(t, cast.env)).toEqual([]);
  });

  it.each([[59], [601], [0], [600.5]])('refuses expiresInSeconds %s with 400 invalid_request', async (expiresInSeconds) => {
    const cast = await givenCast(t);
    const body = expectProblem(await mint(t, cast, { expiresInSeconds }), 400, 'invalid_request');
    expect(body.properties.errors[0].path).toBe('/body/expiresInSeconds');
    expect(await storedLedger(t, cast.env)).toEqual([]);
  });

  it('accepts the bounds 60 and 600', async () => {
    const cast = await givenCast(t);
    expect((await minted(t, cast, { expiresInSeconds: 60 })).expiresInSeconds).toBe(60);
    expect((await minted(t, cast, { expiresInSeconds: 600 })).expiresInSeconds).toBe(600);
  });

  it.each([
    ['a missing reason', { reason: undefined }, '/body/reason'],
    ['an empty reason', { reason: '' }, '/body/reason'],
    ['a blank reason', { reason: '   ' }, '/body/reason'],
    ['a reason over 1000 characters', { reason: 'x'.repeat(1001) }, '/body/reason'],
    ['a missing actor', { actorUserId: undefined }, '/body/actorUserId'],
    ['an actor id that is not a uuid', { actorUserId: 'support-agent' }, '/body/actorUserId'],
    ['an unknown field', { scope: 'all' }, '/body/scope'],
  ])('refuses %s with 400 invalid_request naming the field', async (_name, patch, path) => {
    const cast = await givenCast(t);
    const body = expectProblem(await mint(t, cast, patch), 400, 'invalid_request');
    expect(body.properties.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('refuses a user impersonating themselves', async () => {
    const cast = await givenCast(t);
    const body = expectProblem(await mint(t, { ...cast, actor: cast.target }), 400, 'invalid_request');
    expect(body.properties.errors).toEqual([{ path: '/body/actorUserId', message: 'must differ from the target user' }]);
  });

  it('answers 404 user_not_found for an unknown target or one of another environment', async () => {
    const cast = await givenCast(t);
    const other = await givenCast(t);
    expectProblem(await mint(t, { ...cast, target: { ...cast.target, id: MISSING_ID } }), 404, 'user_not_found');
    expectProblem(await mint(t, { ...cast, target: other.target }), 404, 'user_not_found');
    expect(await storedLedger(t, cast.env)).toEqual([]);
  });

  it('answers 404 user_not_found for an unknown actor or one of another environment', async () => {
    const cast = await givenCast(t);
    const other = await givenCast(t);
    const missing = expectProblem(await mint(t, { ...cast, actor: { ...cast.actor, id: MISSING_ID } }), 404, 'user_not_found');
    expect(missing.detail).toContain('actorUserId');
    expectProblem(await mint(t, { ...cast, actor: other.actor }), 404, 'user_not_found');
  });

  it('answers 403 user_deleted for a deleted target or actor', async () => {
    const cast = await givenCast(t);
    await t.server(cast.env).delete(`/users/${cast.target.id}`);
    expectProblem(await mint(t, cast), 403, 'user_deleted');
    const second = await givenCast(t);
    await t.server(second.env).delete(`/users/${second.actor.id}`);
    expectProblem(await mint(t, second), 403, 'user_deleted');
  });

  it('answers 403 user_banned for a banned target or actor', async () => {
    const cast = await givenCast(t);
    await t.server(cast.env).post(`/users/${cast.target.id}/ban`);
    expect(expectProblem(await mint(t, cast), 403, 'user_banned').detail).toContain('cannot be impersonated');
    await t.server(cast.env).post(`/users/${cast.target.id}/unban`);
    await t.server(cast.env).post(`/users/${cast.actor.id}/ban`);
    expect(expectProblem(await mint(t, cast), 403, 'user_banned').detail).toContain('actor');
  });

  it('answers 403 impersonation_disabled when the environment turned impersonation off', async () => {
    const cast = await givenCast(t, { impersonationEnabled: false });
    expectProblem(await mint(t, cast), 403, 'impersonation_disabled');
    expect(await storedLedger(t, cast.env)).toEqual([]);
  });

  it('answers 403 impersonation_not_in_plan when the plan lacks impersonation', async () => {
    const cast = await givenCast(t, { plan: { impersonation: false } });
    expectProblem(await mint(t, cast), 403, 'impersonation_not_in_plan');
    expect((await t.server(cast.env).get('/impersonations/usage')).json().used).toBe(0);
  });

  it('answers 401 for a missing or revoked secret key, and for a client session token', async () => {
    const cast = await givenCast(t);
    const path = `/users/${cast.target.id}/impersonation-token`;
    expectProblem(await t.server(cast.env, 'sk_wrong').post(path, { actorUserId: cast.actor.id, reason: 'x' }), 401, 'unauthenticated');
    const session = await t.given.session(cast.env, cast.actor);
    expectProblem(await t.server(cast.env, session.token).post(path, { actorUserId: cast.actor.id, reason: 'x' }), 401, 'unauthenticated');
  });

  describe('the monthly quota', () => {
    it('refuses the mint after the quota with 429 impersonation_quota_exhausted and Retry-After to the next UTC month', async () => {
      t.clock.set('2026-11-30T23:59:00.000Z');
      const cast = await givenCast(t, { plan: { impersonationQuotaPerMonth: 2 } });
      await minted(t, cast);
      await minted(t, cast);

      const res = await mint(t, cast);

      const body = expectProblem(res, 429, 'impersonation_quota_exhausted');
      expect(res.headers['retry-after']).toBe('60');
      expect(body.properties).toMatchObject({ retryAfterSeconds: 60, quota: 2 });
      expect(await storedLedger(t, cast.env)).toHaveLength(2);
      expect((await t.server(cast.env).get('/impersonations/usage')).json()).toEqual({
        month: '2026-11', used: 2, quota: 2, remaining: 0, resetsAt: '2026-12-01T00:00:00.000Z',
      });

      t.clock.set('2026-12-01T00:00:00.000Z');
      await minted(t, cast);
      expect((await t.server(cast.env).get('/impersonations/usage')).json()).toMatchObject({ month: '2026-12', used: 1, remaining: 1 });
    });

    it('admits nothing with a quota of 0', async () => {
      const cast = await givenCast(t, { plan: { impersonationQuotaPerMonth: 0 } });
      expectProblem(await mint(t, cast), 429, 'impersonation_quota_exhausted');
      expect(await storedLedger(t, cast.env)).toEqual([]);
    });

    it('never lets a refused mint hold a slot: 10 valid mints among 30 refused ones at once all succeed with a quota of 10', async () => {
      const cast = await givenCast(t, { plan: { impersonationQuotaPerMonth: 10 } });
      const refused = { ...cast, actor: { ...cast.actor, id: MISSING_ID } };
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => mint(t, i % 4 === 0 ? cast : refused)));
      expect(answers.map((res) => res.statusCode)).toEqual(Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? 201 : 404)));
      expect((await t.server(cast.env).get('/impersonations/usage')).json()).toMatchObject({ used: 10, remaining: 0 });
    });

    it('does not count refused mints', async () => {
      const cast = await givenCast(t, { plan: { impersonationQuotaPerMonth: 1 } });
      expectProblem(await mint(t, cast, { expiresInSeconds: 1 }), 400, 'invalid_request');
      expectProblem(await mint(t, { ...cast, actor: { ...cast.actor, id: MISSING_ID } }), 404, 'user_not_found');
      await minted(t, cast);
    });
  });

  it('records impersonation.created with the reason, the actor and the target in the audit trail', async () => {
    const cast = await givenCast(t);
    const body = await minted(t, cast, { reason: 'Ticket #77' });
    const [event] = await eventsOf(t, cast.env, 'impersonation.created');
    expect(event).toMatchObject({
      actor_type: 'user', actor_id: cast.actor.id, actor_impersonator_id: null,
      targets: [{ type: 'user', id: cast.target.id }, { type: 'impersonation', id: body.id }],
      metadata: { reason: 'Ticket #77', expiresInSeconds: 600, mintedBy: { type: 'api_key', id: expect.any(String) } },
      producer: { type: 'gatehouse', via: 'server_api' },
    });
    expect(JSON.stringify(event)).not.toContain(body.token);
  });
});

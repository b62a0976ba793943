import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { sessionIsActive } from '../helpers/given.js';
import { APP_ORIGIN, eventsOf, expectProblem, givenCast, LANDING, minted, redeem, storedLedger, type Cast } from './support.js';

describe('redeeming an impersonation token', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const actorOf = (cast: Cast) => ({ type: 'user', id: cast.actor.id, impersonatorId: cast.actor.id });

  /** Mints and redeems as a native app; the session token and the answer's body. */
  async function impersonate(cast: Cast, body: Record<string, unknown> = {}) {
    const { token } = await minted(t, cast, body);
    const res = await redeem(t, cast.env, token);
    expect(res.statusCode, res.body).toBe(200);
    return { token: res.json().sessionToken as string, body: res.json() };
  }

  describe('POST /_svc/auth/session/impersonate', () => {
    it("answers the target's session carrying the actor, in the shape of sign-in", async () => {
      const cast = await givenCast(t);
      await t.server(cast.env).patch(`/users/${cast.target.id}/metadata`, { publicMetadata: { plan: 'pro' }, privateMetadata: { stripe: 'cus_1' } });
      const { body } = await impersonate(cast);
      expect(Object.keys(body).sort()).toEqual(['session', 'sessionToken', 'user']);
      const { privateMetadata: _private, ...clientForm } = (await t.server(cast.env).get(`/users/${cast.target.id}`)).json();
      expect(body.user).toEqual(clientForm);
      expect(body.user).toMatchObject({ id: cast.target.id, email: cast.target.email });
      expect(body.session).toMatchObject({ userId: cast.target.id, actor: actorOf(cast) });
      expect(body.sessionToken).toMatch(/^sess_/);
    });

    it('sets the HttpOnly session cookie without _is_native', async () => {
      const cast = await givenCast(t);
      const { token } = await minted(t, cast);
      const res = await redeem(t, cast.env, token, '');
      expect(res.statusCode).toBe(200);
      expect(res.json()).not.toHaveProperty('sessionToken');
      const cookie = res.cookies.find((c) => c.name === '__session')!;
      expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
      expect((await t.client(cast.env, { cookie: cookie.value }).get('/me')).json().id).toBe(cast.target.id);
    });

    it('shows the actor in GET /_svc/me and in the session lists of both planes', async () => {
      const cast = await givenCast(t);
      const { token, body } = await impersonate(cast);
      const me = await t.client(cast.env, { token }).get('/me');
      expect(me.json()).toMatchObject({ id: cast.target.id, actor: actorOf(cast) });
      const own = await t.client(cast.env, { token }).get('/sessions');
      expect(own.json().items).toEqual([expect.objectContaining({ id: body.session.id, actor: actorOf(cast) })]);
      const listed = await t.server(cast.env).get(`/users/${cast.target.id}/sessions`);
      expect(listed.json().items).toEqual([expect.objectContaining({ id: body.session.id, actor: actorOf(cast) })]);
      const plain = await t.given.session(cast.env, cast.target);
      expect((await t.client(cast.env, { token: plain.token }).get('/me')).json().actor).toBeNull();
    });

    it("records the session's changes with the operator as impersonatorId", async () => {
      const cast = await givenCast(t);
      const { token } = await impersonate(cast);
      expect((await t.client(cast.env, { token }).patch('/me', { firstName: 'Changed' })).statusCode).toBe(200);
      const [event] = await eventsOf(t, cast.env, 'user.updated');
      expect(event).toMatchObject({ actor_type: 'user', actor_id: cast.target.id, actor_impersonator_id: cast.actor.id });
    });

    it('caps the session at impersonationSessionLifetimeSeconds (default one hour)', async () => {
      const cast = await givenCast(t);
      const { body } = await impersonate(cast);
      expect(new Date(body.session.expiresAt).getTime() - new Date(body.session.createdAt).getTime()).toBe(3600_000);

      const short = await givenCast(t, { impersonationSessionLifetimeSeconds: 120 });
      const { token, body: started } = await impersonate(short);
      expect(new Date(started.session.expiresAt).getTime() - new Date(started.session.createdAt).getTime()).toBe(120_000);
      t.clock.advance(119_000);
      expect((await t.client(short.env, { token }).get('/me')).statusCode).toBe(200);
      t.clock.advance(2_000);
      expectProblem(await t.client(short.env, { token }).get('/me'), 401, 'unauthenticated');
    });

    it('keeps a shorter session lifetime of the environment', async () => {
      const cast = await givenCast(t, { session: { maxLifetimeSeconds: 300 } });
      const { body } = await impersonate(cast);
      expect(new Date(body.session.expiresAt).getTime() - new Date(body.session.createdAt).getTime()).toBe(300_000);
    });

    it('works once: a second redeem answers 401 invalid_token', async () => {
      const cast = await givenCast(t);
      const { token } = await minted(t, cast);
      expect((await redeem(t, cast.env, token)).statusCode).toBe(200);
      expectProblem(await redeem(t, cast.env, token), 401, 'invalid_token');
    });

    it("gives one indistinguishable answer for expired, used, revoked, unknown and another environment's tokens", async () => {
      const cast = await givenCast(t);
      const other = await givenCast(t);
      const used = (await minted(t, cast)).token;
      await redeem(t, cast.env, used);
      const expiring = (await minted(t, cast, { expiresInSeconds: 60 })).token;
      const revokedEntry = await minted(t, cast);
      await t.server(cast.env).post(`/impersonations/${revokedEntry.id}/revoke`);
      const foreign = (await minted(t, other)).token;
      t.clock.advance(60_000);

      const answers = [];
      for (const token of [used, expiring, revokedEntry.token, foreign, 'imp_unknown']) {
        const res = await redeem(t, cast.env, token);
        const body = expectProblem(res, 401, 'invalid_token');
        expect(res.headers['www-authenticate']).toBe('Bearer');
        answers.push({ ...body, instance: undefined });
      }
      expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
      // The foreign token still works in its own environment.
      expect((await redeem(t, other.env, foreign)).statusCode).toBe(200);
    });

    it('starts no session for a target banned or deleted since the mint, and leaves the token unredeemed', async () => {
      const cast = await givenCast(t);
      const { token, id } = await minted(t, cast);
      await t.server(cast.env).post(`/users/${cast.target.id}/ban`);
      expectProblem(await redeem(t, cast.env, token), 403, 'user_not_active');
      expect((await t.server(cast.env).get(`/users/${cast.target.id}/sessions?status=active`)).json().items).toEqual([]);
      expect((await t.server(cast.env).get(`/impersonations/${id}`)).json()).toMatchObject({ status: 'pending', redemption: null });

      const deleted = await givenCast(t);
      const second = await minted(t, deleted);
      await t.server(deleted.env).delete(`/users/${deleted.target.id}`);
      expectProblem(await redeem(t, deleted.env, second.token), 403, 'user_not_active');
    });

    it('starts exactly one session under 10 concurrent redeems of one token', async () => {
      const cast = await givenCast(t);
      const { token, id } = await minted(t, cast);
      const results = await Promise.all(Array.from({ length: 10 }, () => redeem(t, cast.env, token)));
      expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
      for (const r of results.filter((x) => x.statusCode !== 200)) expectProblem(r, 401, 'invalid_token');
      expect((await t.server(cast.env).get(`/users/${cast.target.id}/sessions`)).json().items).toHaveLength(1);
      expect(await eventsOf(t, cast.env, 'impersonation.redeemed')).toHaveLength(1);
      expect((await t.server(cast.env).get(`/impersonations/${id}`)).json().status).toBe('redeemed');
    });

    it('records when and from where in the ledger, and impersonation.redeemed with the reason in the audit trail', async () => {
      const cast = await givenCast(t);
      const { token, id } = await minted(t, cast, { reason: 'Ticket #9' });
      const res = await t.client(cast.env).post('/auth/session/impersonate?_is_native=true', { token }, {
        headers: { 'user-agent': 'SupportConsole/2.0' }, remoteAddress: '203.0.113.9',
      });
      const sessionId = res.json().session.id;
      const entry = (await t.server(cast.env).get(`/impersonations/${id}`)).json();
      expect(entry.redemption).toEqual({ redeemedAt: t.clock.now().toISOString(), ipAddress: '203.0.113.9', userAgent: 'SupportConsole/2.0', sessionId });
      const [event] = await eventsOf(t, cast.env, 'impersonation.redeemed');
      expect(event).toMatchObject({
        actor_type: 'user', actor_id: cast.actor.id, actor_impersonator_id: null, ip_address: '203.0.113.9', user_agent: 'SupportConsole/2.0',
        targets: [{ type: 'user', id: cast.target.id }, { type: 'session', id: sessionId }, { type: 'impersonation', id }],
        metadata: { reason: 'Ticket #9', by: 'post' }, producer: { type: 'gatehouse', via: 'client_api' },
      });
    });

    it('refuses a body without a token, or with extra fields, with 400 invalid_request', async () => {
      const cast = await givenCast(t);
      expectProblem(await t.client(cast.env).post('/auth/session/impersonate', {}), 400, 'invalid_request');
      expectProblem(await t.client(cast.env).post('/auth/session/impersonate', { token: 'imp_x', userId: cast.target.id }), 400, 'invalid_request');
    });

    it('counts redeems by result in the metrics', async () => {
      const cast = await givenCast(t);
      const { token } = await minted(t, cast);
      await redeem(t, cast.env, token);
      await redeem(t, cast.env, token);
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metrics).toMatch(/gatehouse_impersonation_redeems_total\{result="success"\} [1-9]/);
      expect(metrics).toMatch(/gatehouse_impersonation_redeems_total\{result="invalid_token"\} [1-9]/);
      expect(metrics).toMatch(/gatehouse_impersonation_mints_total\{result="success"\} [1-9]/);
    });
  });

  describe('the impersonated session', () => {
    it('ends when the target is banned, deleted or has its sessions revoked', async () => {
      for (const end of ['ban', 'delete', 'revoke-all'] as const) {
        const cast = await givenCast(t);
        const { token, body } = await impersonate(cast);
        const session = { id: body.session.id, token, userId: cast.target.id };
        expect(await sessionIsActive(t, cast.env, session)).toBe(true);
        if (end === 'ban') await t.server(cast.env).post(`/users/${cast.target.id}/ban`);
        if (end === 'delete') await t.server(cast.env).delete(`/users/${cast.target.id}`);
        if (end === 'revoke-all') await t.server(cast.env).delete(`/users/${cast.target.id}/sessions`);
        expect(await sessionIsActive(t, cast.env, session), end).toBe(false);
      }
    });

    it('cannot reach the Server API, so it cannot mint further impersonation', async () => {
      const cast = await givenCast(t);
      const { token } = await impersonate(cast);
      const res = await t.server(cast.env, token).post(`/users/${cast.actor.id}/impersonation-token`, { actorUserId: cast.target.id, reason: 'chain' });
      expectProblem(res, 401, 'unauthenticated');
      expect(await storedLedger(t, cast.env)).toHaveLength(1);
    });

    it('cannot change the email or the password', async () => {
      const cast = await givenCast(t);
      const { token } = await impersonate(cast);
      for (const patch of [{ email: 'taken-over@example.com' }, { password: 'a brand new passphrase' }]) {
        expectProblem(await t.client(cast.env, { token, origin: APP_ORIGIN }).patch('/me', patch), 400, 'invalid_request');
      }
      expect((await t.server(cast.env).get(`/users/${cast.target.id}`)).json().email).toBe(cast.target.email);
    });
  });

  describe('GET /_svc/auth/session/impersonate?token=', () => {
    it('sets the HttpOnly session cookie and redirects 303 to the landing URL exactly as stored', async () => {
      const cast = await givenCast(t);
      const { url } = await minted(t, cast, { redirectUrl: LANDING });
      const res = await t.app.inject({ method: 'GET', url: url!.replace(/^http:\/\/[^/]+/, ''), headers: { host: cast.env.frontendHost } });
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe(LANDING);
      const cookie = res.cookies.find((c) => c.name === '__session')!;
      expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax' });
      const me = await t.client(cast.env, { cookie: cookie.value }).get('/me');
      expect(me.json()).toMatchObject({ id: cast.target.id, actor: actorOf(cast) });
      expect((await eventsOf(t, cast.env, 'impersonation.redeemed'))[0]!.metadata).toMatchObject({ by: 'link' });
    });

    it('answers 400 landing_url_not_configured for a token minted without a landing URL, which POST still redeems', async () => {
      const cast = await givenCast(t);
      const { token } = await minted(t, cast);
      expectProblem(await t.client(cast.env).get(`/auth/session/impersonate?token=${token}`), 400, 'landing_url_not_configured');
      expect((await redeem(t, cast.env, token)).statusCode).toBe(200);
    });

    it('answers 401 invalid_token for a used token, setting no cookie', async () => {
      const cast = await givenCast(t);
      const { token } = await minted(t, cast, { redirectUrl: LANDING });
      expect((await t.client(cast.env).get(`/auth/session/impersonate?token=${token}`)).statusCode).toBe(303);
      const again = await t.client(cast.env).get(`/auth/session/impersonate?token=${token}`);
      expectProblem(again, 401, 'invalid_token');
      expect(again.headers['set-cookie']).toBeUndefined();
    });

    it('keeps the token out of the request log line', async () => {
      const lines: string[] = [];
      const logged = await startTestApp({ logLevel: 'info', logStream: { write: (line) => { lines.push(line); } } });
      try {
        const cast = await givenCast(logged);
        const { token } = await minted(logged, cast, { redirectUrl: LANDING });
        expect((await logged.client(cast.env).get(`/auth/session/impersonate?token=${token}`)).statusCode).toBe(303);
        const incoming = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'incoming request' && l.req.url.startsWith('/_svc/auth/session/impersonate'));
        expect(incoming.req.url).toBe('/_svc/auth/session/impersonate?token=[redacted]');
        expect(lines.join('\n')).not.toContain(token);
      } finally {
        await logged.close();
      }
    });
  });
});

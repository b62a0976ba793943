import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';

// A page on a sibling subdomain sets its own __session (the attacker's session, Path=/_svc, so the browser
// sends it first); the server took the first cookie and the victim worked inside the attacker's account.
describe('cookie tossing: a request with more than one __session cookie', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it("is refused with 400 duplicate_session_cookie saying why, acts in neither account, and expires the tossed cookie's variants", async () => {
    const env = await t.given.environment({}, 'tossing');
    const [victim, attacker] = [await t.given.user(env), await t.given.user(env)];
    const [victimSession, attackerSession] = [await t.given.session(env, victim), await t.given.session(env, attacker)];
    const cookie = `__session=${attackerSession.token}; theme=dark; __session=${victimSession.token}`;
    const origin = `http://${env.frontendHost}`;

    const read = await t.app.inject({ method: 'GET', url: '/_svc/me', headers: { host: env.frontendHost, cookie } });
    const body = expectProblem(read, 400, 'duplicate_session_cookie');
    expect(body.detail).toContain('carries 2 __session cookies');
    expect(read.json()).not.toHaveProperty('id');
    const expired = ([] as string[]).concat(read.headers['set-cookie'] ?? []);
    expect(expired).toEqual(expect.arrayContaining([
      '__session=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Lax',
      '__session=; Max-Age=0; Path=/_svc; HttpOnly; Secure; SameSite=Lax',
      '__session=; Max-Age=0; Path=/_svc/me; HttpOnly; Secure; SameSite=Lax',
    ]));

    const change = await t.app.inject({ method: 'PATCH', url: '/_svc/me', headers: { host: env.frontendHost, cookie, origin }, payload: { firstName: 'Tossed' } });
    expectProblem(change, 400, 'duplicate_session_cookie');
    for (const user of [victim, attacker]) expect((await t.server(env).get(`/users/${user.id}`)).json().firstName).not.toBe('Tossed');
  });

  it('expires the variants on the parent domains of a frontend host too, where a sibling subdomain can set them', async () => {
    const env = await t.given.environment({}, 'tossing-domains');
    await t.admin.patch(`/environments/${env.id}`, { frontendHost: 'accounts.example.com' });
    const res = await t.app.inject({ method: 'GET', url: '/_svc/sessions', headers: { host: 'accounts.example.com', cookie: '__session=a; __session=b' } });
    expectProblem(res, 400, 'duplicate_session_cookie');
    expect(res.headers['set-cookie']).toEqual(expect.arrayContaining([
      '__session=; Max-Age=0; Path=/_svc; Domain=example.com; HttpOnly; Secure; SameSite=Lax',
      '__session=; Max-Age=0; Path=/_svc/sessions; Domain=accounts.example.com; HttpOnly; Secure; SameSite=Lax',
    ]));
  });

  it('still serves one __session cookie, and a bearer token whatever cookies come with it', async () => {
    const env = await t.given.environment({}, 'tossing-single');
    const user = await t.given.user(env);
    const session = await t.given.session(env, user);
    const one = await t.app.inject({ method: 'GET', url: '/_svc/me', headers: { host: env.frontendHost, cookie: `theme=dark; __session=${session.token}` } });
    expect(one.statusCode).toBe(200);
    expect(one.json().id).toBe(user.id);
    const bearer = await t.app.inject({ method: 'GET', url: '/_svc/me', headers: { host: env.frontendHost, authorization: `Bearer ${session.token}`, cookie: '__session=x; __session=y' } });
    expect(bearer.json().id).toBe(user.id);
  });
});

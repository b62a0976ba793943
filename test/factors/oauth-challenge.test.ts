import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startOpenIdProvider, type OpenIdProvider } from '../helpers/openid-provider.js';
import { givenOidcEnvironment, LANDING, sessionCookieOf, signInWithProvider } from '../oauth/support.js';
import { codeAt, enrolTotp, verify } from './support.js';

let t: TestApp;
let op: OpenIdProvider;
beforeAll(async () => { [t, op] = await Promise.all([startTestApp(), startOpenIdProvider()]); });
afterAll(async () => { await t?.close(); await op?.stop(); });

describe('an external (OAuth) sign-in of a user with a second factor', () => {
  it('stops at the challenge: 303 to the redirect URL with mfa_challenge and no session cookie; the code then starts a session with amr fed, otp, mfa', async () => {
    const env = await givenOidcEnvironment(t, op);
    const sub = `sub-${randomUUID()}`;
    const account = { sub, email: `${sub}@example.com`, email_verified: true, name: 'Ada Lovelace' };
    // The cookie's value is the session token, which a bearer header carries as well.
    const firstToken = sessionCookieOf(await signInWithProvider(t, env, op, account));
    const userId = (await t.client(env, { token: firstToken }).get('/me')).json().id;
    const { secret } = await enrolTotp(t, env, firstToken);

    const res = await signInWithProvider(t, env, op, account);

    expect(res.statusCode, res.body).toBe(303);
    const location = new URL(res.headers.location as string);
    expect(location.origin + location.pathname + location.hash).toBe(LANDING);
    const challengeToken = location.searchParams.get('mfa_challenge')!;
    expect(challengeToken).toMatch(/^mfa_[\w-]{43}$/);
    expect(res.cookies.find((c) => c.name === '__session')).toBeUndefined();
    const done = await verify(t, env, challengeToken, codeAt(t, secret));
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().session).toMatchObject({ userId, amr: ['fed', 'otp', 'mfa'] });
  });
});

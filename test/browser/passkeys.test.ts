import type { AddressInfo } from 'node:net';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { browserStage, hasChromium, launchChromium } from '../helpers/browser.js';
import { PASSWORD } from '../helpers/given.js';

type Answer = { status: number; body: any } | { error: string };

/**
 * One step in the page: a same-origin fetch (the browser sends the cookie and Origin), or a WebAuthn
 * ceremony with the options the API answered, their base64url fields turned into bytes and the
 * credential back into PublicKeyCredential.toJSON()'s shape (written here: @simplewebauthn/browser is not installed).
 */
const inPage = (page: Page, step: { fetch?: { path: string; method?: string; body?: unknown }; create?: any; get?: any }) =>
  page.evaluate(async (step): Promise<Answer> => {
    const bytes = (s: string) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(s.length / 4) * 4, '=')), (c) => c.charCodeAt(0));
    const b64url = (buffer: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    try {
      if (step.fetch) {
        const res = await fetch(step.fetch.path, {
          method: step.fetch.method ?? 'GET', credentials: 'include',
          ...(step.fetch.body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(step.fetch.body) }),
        });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : null };
      }
      if (step.create) {
        const o = step.create;
        const credential = await navigator.credentials.create({ publicKey: {
          ...o, challenge: bytes(o.challenge), user: { ...o.user, id: bytes(o.user.id) },
          excludeCredentials: o.excludeCredentials.map((c: { id: string }) => ({ ...c, id: bytes(c.id) })),
        } }) as PublicKeyCredential;
        const response = credential.response as AuthenticatorAttestationResponse;
        return { status: 0, body: {
          id: credential.id, rawId: b64url(credential.rawId), type: credential.type, clientExtensionResults: credential.getClientExtensionResults(),
          response: { clientDataJSON: b64url(response.clientDataJSON), attestationObject: b64url(response.attestationObject), transports: response.getTransports() },
        } };
      }
      const o = step.get;
      const credential = await navigator.credentials.get({ publicKey: { ...o, challenge: bytes(o.challenge) } }) as PublicKeyCredential;
      const response = credential.response as AuthenticatorAssertionResponse;
      return { status: 0, body: {
        id: credential.id, rawId: b64url(credential.rawId), type: credential.type, clientExtensionResults: credential.getClientExtensionResults(),
        response: {
          clientDataJSON: b64url(response.clientDataJSON), authenticatorData: b64url(response.authenticatorData), signature: b64url(response.signature),
          ...(response.userHandle && { userHandle: b64url(response.userHandle) }),
        },
      } };
    } catch (err) {
      return { error: `${(err as Error).name}: ${(err as Error).message}` };
    }
  }, step);

const ok = (answer: Answer, status = 200) => {
  expect(answer).toMatchObject({ status });
  return (answer as { body: any }).body;
};

describe.skipIf(!hasChromium)('passkeys in a real browser (headless Chromium, virtual authenticator)', () => {
  let t: TestApp;
  let browser: Browser;
  let env: TestEnv;
  let other: TestEnv;
  let frontend: string;
  let otherFrontend: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    t = await startTestApp();
    const stage = await browserStage(t, 'passkeys', '<!doctype html><title>app</title>');
    ({ env, frontend, close } = stage);
    const port = (t.app.server.address() as AddressInfo).port;
    const created = await t.admin.post('/environments', { name: 'elsewhere', frontendHost: `elsewhere.localhost:${port}` });
    other = { ...created.json(), name: 'elsewhere' };
    otherFrontend = `http://elsewhere.localhost:${port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await close?.();
    await t?.close();
  });

  /**
   * A page on the frontend hosts' origins with a virtual authenticator. The API's own documents carry
   * `default-src 'none'` (no fetch from them), so the page is a blank document Playwright serves at a path
   * the service does not have, on the frontend host's origin: what a hosted page or same-host app is.
   */
  async function pageWithAuthenticator(): Promise<{ page: Page; cdp: CDPSession }> {
    const context = await browser.newContext();
    await context.route(/\/blank$/, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>blank</title>' }));
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    return { page, cdp };
  }

  it('registers a passkey on the frontend host (RP ID <name>.localhost), signs in with it with and without an email, and deletes it', async () => {
    const user = await t.given.user(env, { email: 'grace@example.com' });
    const { page } = await pageWithAuthenticator();
    await page.goto(`${frontend}/blank`);
    expect(ok(await inPage(page, { fetch: { path: '/_svc/environment' } })).passkeys).toEqual({ enabled: true });
    ok(await inPage(page, { fetch: { path: '/_svc/auth/sign-in', method: 'POST', body: { email: user.email, password: PASSWORD } } }));

    const creation = ok(await inPage(page, { fetch: { path: '/_svc/me/passkeys/options', method: 'POST' } }));
    expect(creation.rp.id).toBe('passkeys.localhost');
    const attestation = ok(await inPage(page, { create: creation }), 0);
    const passkey = ok(await inPage(page, { fetch: { path: '/_svc/me/passkeys', method: 'POST', body: { response: attestation, name: 'Chromium' } } }), 201);
    expect(passkey).toMatchObject({ name: 'Chromium', deviceType: 'singleDevice', backedUp: false });
    ok(await inPage(page, { fetch: { path: '/_svc/auth/sign-out', method: 'POST' } }), 204);

    for (const body of [{}, { email: user.email }]) {
      const request = ok(await inPage(page, { fetch: { path: '/_svc/auth/passkey/options', method: 'POST', body } }));
      const assertion = ok(await inPage(page, { get: request }), 0);
      const signedIn = ok(await inPage(page, { fetch: { path: '/_svc/auth/passkey', method: 'POST', body: { response: assertion } } }));
      expect(signedIn.user.id).toBe(user.id);
      expect(signedIn.session.amr).toEqual(['hwk', 'user', 'mfa']);
      expect(ok(await inPage(page, { fetch: { path: '/_svc/me' } })).id).toBe(user.id);
    }

    expect(ok(await inPage(page, { fetch: { path: '/_svc/me/passkeys' } })).items).toEqual([expect.objectContaining({ id: passkey.id, lastUsedAt: expect.any(String) })]);
    ok(await inPage(page, { fetch: { path: `/_svc/me/passkeys/${passkey.id}`, method: 'DELETE' } }), 204);
    ok(await inPage(page, { fetch: { path: '/_svc/auth/sign-out', method: 'POST' } }), 204);
    // The authenticator still holds the key; the service no longer knows it.
    const request = ok(await inPage(page, { fetch: { path: '/_svc/auth/passkey/options', method: 'POST', body: {} } }));
    const assertion = ok(await inPage(page, { get: request }), 0);
    const refused = await inPage(page, { fetch: { path: '/_svc/auth/passkey', method: 'POST', body: { response: assertion } } });
    expect(refused).toMatchObject({ status: 400, body: { properties: { code: 'invalid_passkey' } } });
    await page.context().close();
  });

  it("refuses a sign-in on another environment's frontend host: the browser has no passkey for its RP ID, and the service knows none", async () => {
    const user = await t.given.user(env, { email: 'alan@example.com' });
    const { page } = await pageWithAuthenticator();
    await page.goto(`${frontend}/blank`);
    ok(await inPage(page, { fetch: { path: '/_svc/auth/sign-in', method: 'POST', body: { email: user.email, password: PASSWORD } } }));
    const creation = ok(await inPage(page, { fetch: { path: '/_svc/me/passkeys/options', method: 'POST' } }));
    ok(await inPage(page, { fetch: { path: '/_svc/me/passkeys', method: 'POST', body: { response: ok(await inPage(page, { create: creation }), 0) } } }), 201);
    const request = ok(await inPage(page, { fetch: { path: '/_svc/auth/passkey/options', method: 'POST', body: {} } }));
    const assertion = ok(await inPage(page, { get: request }), 0);

    await page.goto(`${otherFrontend}/blank`);
    const theirs = ok(await inPage(page, { fetch: { path: '/_svc/auth/passkey/options', method: 'POST', body: {} } }));
    expect(theirs.rpId).toBe('elsewhere.localhost');
    expect(await inPage(page, { get: theirs })).toEqual({ error: expect.stringMatching(/^NotAllowedError/) });
    const replayed = await inPage(page, { fetch: { path: '/_svc/auth/passkey', method: 'POST', body: { response: assertion } } });
    expect(replayed).toMatchObject({ status: 400, body: { properties: { code: 'invalid_passkey_challenge' } } });
    expect(other.id).not.toBe(env.id);
    await page.context().close();
  });
});

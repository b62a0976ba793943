import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import { createSoftwareAuthenticator, type AuthenticatorOptions, type SoftwareAuthenticator } from '../helpers/software-authenticator.js';

export { expectProblem } from '../helpers/problem.js';
export { eventsOf, impersonatedSession, PAST_RECENT_MS } from '../account/support.js';

/** The origin of the environment's frontend host, where a ceremony runs. */
export const originOf = (env: TestEnv) => `http://${env.frontendHost}`;

/** Registers a passkey of a software authenticator for the session's user; answers the authenticator and the passkey. */
export async function registerPasskey(t: TestApp, env: TestEnv, token: string, options: AuthenticatorOptions & { name?: string } = {}, authenticator?: SoftwareAuthenticator) {
  const device = authenticator ?? createSoftwareAuthenticator(options);
  const me = t.client(env, { token });
  const started = await me.post('/me/passkeys/options');
  expect(started.statusCode, started.body).toBe(200);
  const response = device.create(started.json(), originOf(env));
  const registered = await me.post('/me/passkeys', { response, ...(options.name && { name: options.name }) });
  expect(registered.statusCode, registered.body).toBe(201);
  return { authenticator: device, passkey: registered.json() as { id: string; name: string } };
}

/** Request options for a passkey sign-in, with or without an email. */
export async function signInOptions(t: TestApp, env: TestEnv, email?: string) {
  const res = await t.client(env).post('/auth/passkey/options', email === undefined ? {} : { email });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { challenge: string; rpId: string };
}

/** A whole passkey sign-in as a native app: options, the authenticator's assertion, the answer. */
export async function passkeySignIn(t: TestApp, env: TestEnv, authenticator: SoftwareAuthenticator, email?: string) {
  const assertion = authenticator.get(await signInOptions(t, env, email), originOf(env));
  return t.client(env).post('/auth/passkey?_is_native=true', { response: assertion });
}

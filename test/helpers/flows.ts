import type { TestApp, TestEnv } from './app.js';
import { PASSWORD } from './given.js';

/** Client-plane flows that several suites drive the same way. */

export interface SignInOptions { native?: boolean; ip?: string; headers?: Record<string, string> }

/** POST /_svc/auth/sign-in: a cookie session, or with `native` the token in the body; `ip` sets the client address. */
export const signIn = (t: TestApp, env: TestEnv, email: string | null, password: string, opts: SignInOptions = {}) =>
  t.client(env).post(`/auth/sign-in${opts.native ? '?_is_native=true' : ''}`, { email, password }, {
    ...(opts.ip && { remoteAddress: opts.ip }), ...(opts.headers && { headers: opts.headers }),
  });

/** POST /_svc/auth/sign-up with email and password. */
export const signUp = (t: TestApp, env: TestEnv, email: string, password = PASSWORD) =>
  t.client(env).post('/auth/sign-up', { email, password });

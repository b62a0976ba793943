import { randomBytes } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';

export { expectProblem } from '../helpers/problem.js';

/** The host the dashboard is served on in these tests, and so the only Origin the operator API takes changes from. */
export const BASE_HOST = 'gatehouse.test';
export const BASE_ORIGIN = `http://${BASE_HOST}`;
export const OPERATOR_COOKIE = 'gatehouse_operator';

/** An email no other test (or file, on the shared PostgreSQL) uses: operators live in one environment per database. */
export const operatorEmail = () => `op-${randomBytes(6).toString('hex')}@example.com`;

type Body = Record<string, unknown> | undefined;

/** A request as the dashboard sends it: on the base host, with its Origin, and the operator's cookie when given. */
export async function asDashboard(t: TestApp, method: InjectOptions['method'], url: string, options: { cookie?: string; body?: Body; headers?: Record<string, string>; ip?: string } = {}): Promise<LightMyRequestResponse> {
  const res = await t.app.inject({
    method, url, ...(options.ip && { remoteAddress: options.ip }),
    headers: { host: BASE_HOST, origin: BASE_ORIGIN, ...(options.cookie && { cookie: `${OPERATOR_COOKIE}=${options.cookie}` }), ...options.headers },
    ...(options.body !== undefined && { payload: options.body }),
  });
  await t.app.settled();
  return res;
}

/** Creates an operator with the admin token. */
export async function givenOperator(t: TestApp, email = operatorEmail(), password = PASSWORD) {
  const res = await t.admin.post('/operators', { email, password });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json().operator.id as string, email, password };
}

/** The session cookie a sign-in set, or undefined. */
export const sessionCookieOf = (res: LightMyRequestResponse) => res.cookies.find((c) => c.name === OPERATOR_COOKIE);

/** A sign-in from the client IP `ip` (the default: 127.0.0.1). */
export const signIn = (t: TestApp, email: string, password: string, ip?: string) =>
  asDashboard(t, 'POST', '/api/admin/v1/operator-sessions', { body: { email, password }, ...(ip && { ip }) });

/** A client IP no other run uses: rate-limit windows outlive a run on the shared PostgreSQL database. */
export const randomIp = () => `10.${[...randomBytes(3)].join('.')}`;

/** An operator, signed in: their id and the value of their session cookie. */
export async function signedInOperator(t: TestApp) {
  const operator = await givenOperator(t);
  const res = await signIn(t, operator.email, operator.password);
  expect(res.statusCode, res.body).toBe(200);
  return { ...operator, cookie: sessionCookieOf(res)!.value };
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { sessionIsActive } from '../helpers/given.js';
import { expectProblem } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

const JSON_TYPE = { 'content-type': 'application/json' };
/** The two ways a generic fetch wrapper sends "no body" under a JSON content type: content-length 0, or no body at all. */
const EMPTY_BODIES = [['content-length 0', ''], ['no body', undefined]] as const;

describe('a JSON content type with an empty body', () => {
  it.each(EMPTY_BODIES)('counts as no body on a bodiless Server API POST (ban, unban) with %s', async (_, payload) => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const ban = await t.server(env).post(`/users/${user.id}/ban`, payload, { headers: JSON_TYPE });
    expect(ban.statusCode, ban.body).toBe(200);
    expect(ban.json()).toMatchObject({ id: user.id, status: 'banned' });
    const unban = await t.server(env).post(`/users/${user.id}/unban`, payload, { headers: JSON_TYPE });
    expect(unban.statusCode, unban.body).toBe(200);
    expect(unban.json()).toMatchObject({ id: user.id, status: 'active' });
  });

  it.each(EMPTY_BODIES)('counts as no body on the client plane: session token, then sign-out, with %s', async (_, payload) => {
    const env = await t.given.environment();
    const session = await t.given.session(env, await t.given.user(env));
    const client = t.client(env, { token: session.token });
    const token = await client.post('/sessions/current/token', payload, { headers: JSON_TYPE });
    expect(token.statusCode, token.body).toBe(200);
    expect(token.json().token).toEqual(expect.any(String));
    const signOut = await client.post('/auth/sign-out', payload, { headers: JSON_TYPE });
    expect(signOut.statusCode, signOut.body).toBe(204);
    expect(await sessionIsActive(t, env, session)).toBe(false);
  });

  it.each(EMPTY_BODIES)('counts as no body on the admin API: a new secret key with %s', async (_, payload) => {
    const env = await t.given.environment();
    const res = await t.admin.post(`/environments/${env.id}/secret-keys`, payload, { headers: JSON_TYPE });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().secretKey).toMatch(/^sk_/);
  });

  it.each(EMPTY_BODIES)('answers the usual 400 validation problem where the route needs a body, with %s, and stores nothing', async (_, payload) => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users', payload, { headers: JSON_TYPE });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.properties.errors).toEqual([{ path: '/body', message: 'must be object' }]);
    const stored = await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).execute();
    expect(stored).toEqual([]);
  });

  it('still refuses a body of only whitespace as invalid JSON', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users', '  ', { headers: JSON_TYPE });
    expect(expectProblem(res, 400, 'invalid_request').detail).toBe('The request body is not valid JSON.');
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { append, customerEvents, eventBody } from '../audit/support.js';
import { expectProblem } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
const SURROGATE_MESSAGE = 'must not contain a lone UTF-16 surrogate';
const NUL_KEY_MESSAGE = `property name ${NUL_MESSAGE}`;
const SURROGATE_KEY_MESSAGE = `property name ${SURROGATE_MESSAGE}`;

const userRows = (env: TestEnv) =>
  t.db.selectFrom('users').select(['id', 'first_name', 'last_name', 'public_metadata', 'private_metadata', 'unsafe_metadata'])
    .where('environment_id', '=', env.id).orderBy('id').execute();

/** Asserts a 400 invalid_request whose only errors are the given [path, message] pairs. */
function expectRefused(res: Awaited<ReturnType<TestApp['admin']['get']>>, ...errors: [string, string][]) {
  const body = expectProblem(res, 400, 'invalid_request');
  expect(body.properties.errors).toEqual(errors.map(([path, message]) => ({ path, message })));
  return body;
}

describe('text PostgreSQL cannot store, in plain text fields', () => {
  it('refuses a NUL in the name given to the unauthenticated sign-up, and creates no user', async () => {
    const env = await t.given.environment();
    const res = await t.client(env).post('/auth/sign-up', { email: 'ada@example.com', password: PASSWORD, name: 'Ada\u0000Lovelace' });
    expectRefused(res, ['/body/name', NUL_MESSAGE]);
    expect(await userRows(env)).toEqual([]);
  });

  it('refuses a NUL in a user name on the Server API and on the client plane, and changes nothing', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { firstName: 'Ada' });
    const session = await t.given.session(env, user);
    const before = await userRows(env);

    expectRefused(await t.server(env).post('/users', { email: 'grace@example.com', lastName: '\u0000' }), ['/body/lastName', NUL_MESSAGE]);
    expectRefused(await t.server(env).patch(`/users/${user.id}`, { firstName: 'Ev\u0000il' }), ['/body/firstName', NUL_MESSAGE]);
    expectRefused(await t.client(env, { token: session.token }).patch('/me', { firstName: 'Ev\u0000il' }), ['/body/firstName', NUL_MESSAGE]);
    expect(await userRows(env)).toEqual(before);
  });

  it('refuses a NUL in an environment name on the admin plane, and creates or renames nothing', async () => {
    const env = await t.given.environment();
    // A name of its own: other files create environments in the same database meanwhile.
    const name = `prod-${randomUUID()}`;
    const named = () => t.db.selectFrom('environments').select('id').where('name', 'like', `${name}%`).execute();

    expectRefused(await t.admin.post('/environments', { name: `${name}\u0000` }), ['/body/name', NUL_MESSAGE]);
    expectRefused(await t.admin.patch(`/environments/${env.id}`, { name: `${name}\u0000` }), ['/body/name', NUL_MESSAGE]);
    expect(await named()).toEqual([]);
    expect((await t.admin.get(`/environments/${env.id}`)).json().name).toBe(env.name);
  });

  it('refuses a lone surrogate in a plain text field instead of storing it as U+FFFD', async () => {
    const env = await t.given.environment();
    expectRefused(await t.server(env).post('/users', { email: 'ada@example.com', firstName: 'Ada\ud800' }), ['/body/firstName', SURROGATE_MESSAGE]);
    expectRefused(await t.server(env).post('/users', { email: 'ada@example.com', lastName: '\udfffLovelace' }), ['/body/lastName', SURROGATE_MESSAGE]);
    expect(await userRows(env)).toEqual([]);
  });

  it('stores characters outside the Basic Multilingual Plane (well-formed surrogate pairs) as sent', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users', { email: 'ada@example.com', firstName: 'Ada 😀', publicMetadata: { '𝄞': 'music 🎵' } });
    expect(res.statusCode, res.body).toBe(201);
    const [row] = await userRows(env);
    expect(row).toMatchObject({ first_name: 'Ada 😀', public_metadata: { '𝄞': 'music 🎵' } });
  });
});

describe('text PostgreSQL cannot store, in search filters, query strings and path parameters', () => {
  it('refuses a NUL in the users search filter, as a query parameter and in a search body', async () => {
    const env = await t.given.environment();
    expectRefused(await t.server(env).get('/users?emailSearch=ada%00'), ['/querystring/emailSearch', NUL_MESSAGE]);
    expectRefused(await t.server(env).post('/users/search', { emailSearch: 'ada\u0000' }), ['/body/emailSearch', NUL_MESSAGE]);
    expectRefused(await t.server(env).post('/users/search', { publicMetadata: { plan: 'pro\u0000' } }), ['/body/publicMetadata/plan', NUL_MESSAGE]);
  });

  it('refuses a NUL in any query parameter: invitation search, audit filters, the outbox address', async () => {
    const env = await t.given.environment();
    expectRefused(await t.server(env).get('/invitations?search=%00'), ['/querystring/search', NUL_MESSAGE]);
    expectRefused(await t.server(env).get('/audit-events?action=user.signed_in%00&targetId=doc%00'),
      ['/querystring/action', NUL_MESSAGE], ['/querystring/targetId', NUL_MESSAGE]);
    expectRefused(await t.admin.get(`/environments/${env.id}/outbox?to=a%00@example.com`), ['/querystring/to', NUL_MESSAGE]);
  });

  it('refuses a NUL in a path parameter', async () => {
    const env = await t.given.environment();
    expectRefused(await t.server(env).get('/users/%00'), ['/params/userId', NUL_MESSAGE]);
  });
});

describe('text PostgreSQL cannot store, in metadata bags', () => {
  it('refuses a NUL in a metadata key or value at any depth, naming the path, and keeps the stored bags', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env, { publicMetadata: { plan: 'free' } });
    const before = await userRows(env);
    const patch = (body: Record<string, unknown>) => t.server(env).patch(`/users/${user.id}/metadata`, body);

    expectRefused(await patch({ publicMetadata: { 'a\u0000b': 1 } }), ['/body/publicMetadata/a%00b', NUL_KEY_MESSAGE]);
    expectRefused(await patch({ privateMetadata: { billing: { customer: 'cus\u0000' } } }), ['/body/privateMetadata/billing/customer', NUL_MESSAGE]);
    expectRefused(await patch({ unsafeMetadata: { tags: ['ok', '\u0000'] } }), ['/body/unsafeMetadata/tags/1', NUL_MESSAGE]);
    expect(await userRows(env)).toEqual(before);
  });

  it('refuses a lone surrogate in a metadata key or value, and creates no user', async () => {
    const env = await t.given.environment();
    const create = (publicMetadata: Record<string, unknown>) => t.server(env).post('/users', { email: 'ada@example.com', publicMetadata });

    expectRefused(await create({ note: 'x\ud83d' }), ['/body/publicMetadata/note', SURROGATE_MESSAGE]);
    expectRefused(await create({ '\udc00/~': true }), ['/body/publicMetadata/%ED%B0%80~1~0', SURROGATE_KEY_MESSAGE]);
    expect(await userRows(env)).toEqual([]);
  });

  it('refuses a NUL or lone surrogate in audit event metadata or fields, and appends nothing', async () => {
    const env = await t.given.environment();

    expectRefused(await append(t, env, eventBody(t, { metadata: { 'doc\u0000id': 'x' } })), ['/body/metadata/doc%00id', NUL_KEY_MESSAGE]);
    expectRefused(await append(t, env, eventBody(t, { metadata: { nested: [{ v: '\u0000' }] } })), ['/body/metadata/nested/0/v', NUL_MESSAGE]);
    expectRefused(await append(t, env, eventBody(t, { metadata: { v: '\udbff' } })), ['/body/metadata/v', SURROGATE_MESSAGE]);
    expectRefused(await append(t, env, eventBody(t, { targets: [{ type: 'document', id: 'doc\u0000' }] })), ['/body/targets/0/id', NUL_MESSAGE]);
    expect(await customerEvents(t, env)).toEqual([]);
  });

  it('lists every refused string of a request at once, in document order', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users', { email: 'ada@example.com', firstName: '\u0000', publicMetadata: { a: '\ud800', 'b\u0000': { c: '\u0000' } } });
    expectRefused(res,
      ['/body/firstName', NUL_MESSAGE], ['/body/publicMetadata/a', SURROGATE_MESSAGE],
      ['/body/publicMetadata/b%00', NUL_KEY_MESSAGE], ['/body/publicMetadata/b%00/c', NUL_MESSAGE]);
  });
});

describe('nesting too deep to process', () => {
  /** An object of `levels` nested objects: 1 is {}, 2 is {"a":{}}. */
  const nested = (levels: number): Record<string, unknown> => (levels === 1 ? {} : { a: nested(levels - 1) });

  it('accepts 64 levels of nesting counting the body, and refuses 65 naming the innermost container', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const patch = (publicMetadata: Record<string, unknown>) => t.server(env).patch(`/users/${user.id}/metadata`, { publicMetadata });

    expect((await patch(nested(63))).statusCode).toBe(200);
    const before = await userRows(env);
    expectRefused(await patch({ b: nested(64) }),
      [`/body/publicMetadata/b${'/a'.repeat(62)}`, 'must not nest objects and arrays more than 64 levels deep']);
    expect(await userRows(env)).toEqual(before);
  });

  it('answers nesting as deep as the body limit allows with 400, not a stack overflow', async () => {
    const env = await t.given.environment();
    const deep = '['.repeat(30_000) + ']'.repeat(30_000);
    const res = await t.server(env).post('/audit-events', `{"metadata":{"x":${deep}}}`, { headers: { 'content-type': 'application/json', 'idempotency-key': 'deep' } });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.properties.errors).toEqual([{ path: `/body/metadata/x${'/0'.repeat(62)}`, message: 'must not nest objects and arrays more than 64 levels deep' }]);
    expect(await customerEvents(t, env)).toEqual([]);
  });
});

describe('numbers out of range', () => {
  it('refuses an afterSequence beyond 2^53 - 1 on the audit feed with 400, and accepts 2^53 - 1', async () => {
    const env = await t.given.environment();
    expectRefused(await t.server(env).get('/audit-events/feed?afterSequence=99999999999999999999'),
      ['/querystring/afterSequence', 'must be <= 9007199254740991']);
    expectRefused(await t.server(env).get('/audit-events/feed?afterSequence=-1'), ['/querystring/afterSequence', 'must be >= 0']);

    const res = await t.server(env).get('/audit-events/feed?afterSequence=9007199254740991');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ items: [], nextAfterSequence: 9007199254740991, hasMore: false });
  });
});

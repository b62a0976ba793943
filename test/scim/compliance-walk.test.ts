import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { sessionIsActive } from '../helpers/given.js';
import { expectScimError, givenDirectory, GROUP_SCHEMA, LIST_SCHEMA, scim, scimUser, USER_SCHEMA, type TestDirectory } from './support.js';

// The walk an identity provider makes, in the order of RFC 7644 §3: discovery, create, get, filter, replace,
// patch (add, replace, remove), deactivate, delete, and groups with their members. Runs on PGlite, and on
// PostgreSQL with TEST_DATABASE_URL.
describe('SCIM 2.0 compliance walk (RFC 7644)', () => {
  let t: TestApp;
  let env: TestEnv;
  let dir: TestDirectory;
  let idp: ReturnType<typeof scim>;
  beforeAll(async () => {
    t = await startTestApp();
    env = await t.given.environment();
    dir = await givenDirectory(t, env);
    idp = scim(t, dir);
  });
  afterAll(() => t.close());

  const membershipOf = async (userId: string, organizationId = dir.organizationId) =>
    (await t.server(env).get(`/organizations/${organizationId}/members`)).json().items.find((m: { userId: string }) => m.userId === userId);

  it('answers ServiceProviderConfig, Schemas and ResourceTypes in application/scim+json', async () => {
    const config = await idp.get('/ServiceProviderConfig');
    expect(config.statusCode).toBe(200);
    expect(config.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(config.json()).toMatchObject({
      patch: { supported: true }, bulk: { supported: false }, filter: { supported: true, maxResults: 100 }, changePassword: { supported: false },
      sort: { supported: false }, etag: { supported: false }, authenticationSchemes: [{ type: 'oauthbearertoken' }],
    });
    const schemas = (await idp.get('/Schemas')).json();
    expect(schemas.Resources.map((s: { id: string }) => s.id)).toEqual([USER_SCHEMA, GROUP_SCHEMA]);
    expect((await idp.get(`/Schemas/${USER_SCHEMA}`)).json().name).toBe('User');
    const types = (await idp.get('/ResourceTypes')).json();
    expect(types).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 2 });
    expect(types.Resources.map((r: { endpoint: string }) => r.endpoint)).toEqual(['/Users', '/Groups']);
  });

  it('creates a User (201), gets it, and makes the user a member of the organization', async () => {
    const res = await idp.post('/Users', scimUser('grace@example.com', { externalId: 'okta-1' }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
    const user = res.json();
    expect(res.headers.location).toBe(user.meta.location);
    expect(user).toMatchObject({
      schemas: [USER_SCHEMA], userName: 'grace@example.com', externalId: 'okta-1', active: true,
      name: { givenName: 'Ada', familyName: 'Lovelace' }, emails: [{ value: 'grace@example.com', primary: true }],
      meta: { resourceType: 'User', location: `http://localhost:80/scim/v2/${dir.id}/Users/${user.id}` },
    });
    expect((await idp.get(`/Users/${user.id}`)).json()).toEqual(user);
    expect((await t.server(env).get(`/users/${user.id}`)).json()).toMatchObject({ email: 'grace@example.com', firstName: 'Ada', lastName: 'Lovelace', status: 'active' });
    expect(await membershipOf(user.id)).toMatchObject({ role: 'member' });
  });

  it('refuses a second User with the same userName (any case) with 409 uniqueness', async () => {
    await idp.post('/Users', scimUser('dup@example.com'));
    expectScimError(await idp.post('/Users', scimUser('DUP@example.com', { emails: [{ value: 'other@example.com', primary: true }] })), 409, 'uniqueness');
  });

  it('refuses a User without a usable email, or with one the API would refuse, with 400 invalidValue, creating nobody', async () => {
    expectScimError(await idp.post('/Users', { schemas: [USER_SCHEMA], userName: 'no-email' }), 400, 'invalidValue');
    for (const email of ['a@b.test@example.com', '"a b"@example.com', 'ada@exa mple.com']) {
      expectScimError(await idp.post('/Users', scimUser('odd', { emails: [{ value: email, primary: true }] })), 400, 'invalidValue');
    }
    expect((await idp.get(`/Users?filter=${encodeURIComponent('userName eq "odd"')}`)).json().totalResults).toBe(0);
  });

  it('filters Users by userName eq (case-insensitive) and externalId eq; other filters are 400 invalidFilter', async () => {
    const created = (await idp.post('/Users', scimUser('filter.me@example.com', { externalId: 'ext-filter' }))).json();
    const byName = (await idp.get(`/Users?filter=${encodeURIComponent('userName eq "FILTER.ME@example.com"')}`)).json();
    expect(byName).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 1, itemsPerPage: 1, startIndex: 1 });
    expect(byName.Resources[0].id).toBe(created.id);
    const byExternal = (await idp.get(`/Users?filter=${encodeURIComponent('externalId eq "ext-filter"')}`)).json();
    expect(byExternal.Resources.map((u: { id: string }) => u.id)).toEqual([created.id]);
    expect((await idp.get(`/Users?filter=${encodeURIComponent('userName eq "nobody@example.com"')}`)).json()).toMatchObject({ totalResults: 0, Resources: [] });
    expectScimError(await idp.get(`/Users?filter=${encodeURIComponent('name.givenName co "A"')}`), 400, 'invalidFilter');
    expectScimError(await idp.get(`/Users?filter=${encodeURIComponent('userName eq')}`), 400, 'invalidFilter');
  });

  it('pages Users with startIndex (1-based) and count', async () => {
    const own = await givenDirectory(t, env, {}, undefined, 'paging.example.com');
    const client = scim(t, own);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.post('/Users', scimUser(`page-${i}@paging.example.com`))).json().id);
    const page = (await client.get('/Users?startIndex=2&count=2')).json();
    expect(page).toMatchObject({ totalResults: 5, itemsPerPage: 2, startIndex: 2 });
    expect(page.Resources.map((u: { id: string }) => u.id)).toEqual([...ids].sort().slice(1, 3));
    expect((await client.get('/Users?count=0')).json()).toMatchObject({ totalResults: 5, itemsPerPage: 0, Resources: [] });
  });

  it('replaces a User with PUT', async () => {
    const { id } = (await idp.post('/Users', scimUser('put@example.com'))).json();
    const res = await idp.put(`/Users/${id}`, scimUser('put@example.com', { name: { givenName: 'Grace', familyName: 'Hopper' }, externalId: 'put-ext' }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ name: { givenName: 'Grace', familyName: 'Hopper' }, externalId: 'put-ext' });
    expect((await t.server(env).get(`/users/${id}`)).json()).toMatchObject({ firstName: 'Grace', lastName: 'Hopper', name: 'Grace Hopper' });
  });

  it('patches a User: add, replace (with a path, a filtered path, and none) and remove', async () => {
    const { id } = (await idp.post('/Users', scimUser('patch@example.com'))).json();
    const added = await idp.patch(`/Users/${id}`, [{ op: 'add', path: 'externalId', value: 'patched-ext' }]);
    expect(added.statusCode, added.body).toBe(200);
    expect(added.json().externalId).toBe('patched-ext');
    const replaced = await idp.patch(`/Users/${id}`, [
      { op: 'Replace', path: 'name.givenName', value: 'Augusta' },
      { op: 'replace', path: 'emails[type eq "work"].value', value: 'augusta@example.com' },
    ]);
    expect(replaced.json()).toMatchObject({ name: { givenName: 'Augusta' }, emails: [{ value: 'augusta@example.com' }] });
    expect((await t.server(env).get(`/users/${id}`)).json().email).toBe('augusta@example.com');
    const removed = await idp.patch(`/Users/${id}`, [{ op: 'remove', path: 'name.familyName' }]);
    expect(removed.json().name).toEqual({ givenName: 'Augusta', formatted: 'Augusta' });
    expectScimError(await idp.patch(`/Users/${id}`, [{ op: 'move', path: 'userName' }]), 400, 'invalidSyntax');
  });

  it('deactivates a User (Okta\'s replace without a path): sign-in refused and every session revoked at once; active again restores sign-in', async () => {
    const existing = await t.given.user(env, { email: 'linked@example.com' });
    const session = await t.given.session(env, existing);
    const linked = await idp.post('/Users', scimUser('linked@example.com'));
    expect(linked.json().id).toBe(existing.id);
    expect(await sessionIsActive(t, env, session)).toBe(true);

    const off = await idp.patch(`/Users/${existing.id}`, [{ op: 'replace', value: { active: false } }]);
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().active).toBe(false);
    expect(await sessionIsActive(t, env, session)).toBe(false);
    const refused = await t.client(env).post('/auth/sign-in?_is_native=true', { email: existing.email, password: existing.password });
    expect(refused.statusCode).toBe(403);

    const on = await idp.patch(`/Users/${existing.id}`, [{ op: 'Replace', path: 'active', value: 'True' }]);
    expect(on.json().active).toBe(true);
    expect((await t.given.session(env, existing)).userId).toBe(existing.id);
  });

  it('creates a User inactive (no membership, no sign-in) and lets them into the organization once activated', async () => {
    const { id } = (await idp.post('/Users', scimUser('later@example.com', { active: false }))).json();
    expect((await idp.get(`/Users/${id}`)).json().active).toBe(false);
    expect((await t.server(env).get(`/users/${id}`)).json().status).toBe('banned');
    expect(await membershipOf(id)).toBeUndefined();
    expect((await idp.patch(`/Users/${id}`, [{ op: 'replace', path: 'active', value: true }])).json().active).toBe(true);
    expect(await membershipOf(id)).toMatchObject({ role: 'member' });
  });

  it('deletes a User it created: 204, then 404; the user is deleted and no longer a member', async () => {
    const { id } = (await idp.post('/Users', scimUser('gone@example.com'))).json();
    expect((await idp.delete(`/Users/${id}`)).statusCode).toBe(204);
    expectScimError(await idp.get(`/Users/${id}`), 404);
    expectScimError(await idp.delete(`/Users/${id}`), 404);
    expect((await t.server(env).get(`/users/${id}`)).json().status).toBe('deleted');
    expect(await membershipOf(id)).toBeUndefined();
  });

  it('deletes a User it linked: the account stays, its sessions and membership end', async () => {
    const existing = await t.given.user(env, { email: 'keeps-account@example.com' });
    await idp.post('/Users', scimUser('keeps-account@example.com'));
    const session = await t.given.session(env, existing);
    expect((await idp.delete(`/Users/${existing.id}`)).statusCode).toBe(204);
    expect(await sessionIsActive(t, env, session)).toBe(false);
    expect((await t.server(env).get(`/users/${existing.id}`)).json().status).toBe('active');
    expect(await membershipOf(existing.id)).toBeUndefined();
  });

  it('creates, filters, patches (Entra ID members add/remove) and deletes Groups; members hold the role their groups map to', async () => {
    const mapped = await givenDirectory(t, env, { groupRoles: { Admins: 'admin' } }, undefined, 'groups.example.com');
    const client = scim(t, mapped);
    const alice = (await client.post('/Users', scimUser('alice@groups.example.com'))).json();
    const bob = (await client.post('/Users', scimUser('bob@groups.example.com'))).json();
    const created = await client.post('/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Admins', externalId: 'g-1', members: [{ value: alice.id }] });
    expect(created.statusCode, created.body).toBe(201);
    const group = created.json();
    expect(group).toMatchObject({ schemas: [GROUP_SCHEMA], displayName: 'Admins', externalId: 'g-1', members: [{ value: alice.id }], meta: { resourceType: 'Group' } });
    expect(await membershipOf(alice.id, mapped.organizationId)).toMatchObject({ role: 'admin' });
    expectScimError(await client.post('/Groups', { schemas: [GROUP_SCHEMA], displayName: 'admins' }), 409, 'uniqueness');

    const found = (await client.get(`/Groups?filter=${encodeURIComponent('displayName eq "Admins"')}&excludedAttributes=members`)).json();
    expect(found).toMatchObject({ totalResults: 1, Resources: [{ id: group.id, displayName: 'Admins' }] });
    expect(found.Resources[0].members).toBeUndefined();

    const add = await client.patch(`/Groups/${group.id}`, [{ op: 'Add', path: 'members', value: [{ value: bob.id }] }]);
    expect(add.statusCode, add.body).toBe(200);
    expect(add.json().members.map((m: { value: string }) => m.value).sort()).toEqual([alice.id, bob.id].sort());
    expect(await membershipOf(bob.id, mapped.organizationId)).toMatchObject({ role: 'admin' });

    await client.patch(`/Groups/${group.id}`, [{ op: 'Remove', path: `members[value eq "${alice.id}"]` }]);
    expect(await membershipOf(alice.id, mapped.organizationId)).toMatchObject({ role: 'member' });
    const renamed = await client.patch(`/Groups/${group.id}`, [{ op: 'replace', value: { displayName: 'Staff' } }]);
    expect(renamed.json()).toMatchObject({ displayName: 'Staff', members: [{ value: bob.id }] });
    expect(await membershipOf(bob.id, mapped.organizationId)).toMatchObject({ role: 'member' });
    await client.patch(`/Groups/${group.id}`, [{ op: 'replace', path: 'displayName', value: 'Admins' }]);
    expect(await membershipOf(bob.id, mapped.organizationId)).toMatchObject({ role: 'admin' });

    const put = await client.put(`/Groups/${group.id}`, { schemas: [GROUP_SCHEMA], displayName: 'Admins', members: [{ value: alice.id }] });
    expect(put.json().members).toEqual([expect.objectContaining({ value: alice.id })]);
    expect(await membershipOf(bob.id, mapped.organizationId)).toMatchObject({ role: 'member' });

    expect((await client.delete(`/Groups/${group.id}`)).statusCode).toBe(204);
    expectScimError(await client.get(`/Groups/${group.id}`), 404);
    expect(await membershipOf(alice.id, mapped.organizationId)).toMatchObject({ role: 'member' });
  });

  it('records each provisioning change in the audit trail, attributed to the directory', async () => {
    const own = await givenDirectory(t, env, {}, undefined, 'audited.example.com');
    const client = scim(t, own);
    const { id } = (await client.post('/Users', scimUser('ada@audited.example.com'))).json();
    await client.patch(`/Users/${id}`, [{ op: 'replace', path: 'active', value: false }]);
    await client.delete(`/Users/${id}`);
    const rows = await t.db.selectFrom('audit_events').select(['action', 'actor_type', 'actor_id'])
      .where('environment_id', '=', env.id).where(({ eb }) => eb('actor_id', '=', own.id)).orderBy('sequence').execute();
    expect(rows.map((r) => r.action)).toEqual(['organization_membership.created', 'user.created', 'user.banned', 'organization_membership.deleted', 'user.deleted']);
    expect(rows.every((r) => r.actor_type === 'directory')).toBe(true);
  });
});

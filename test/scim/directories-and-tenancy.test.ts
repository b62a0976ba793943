import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { expectScimError, givenDirectory, scim, scimUser } from './support.js';

describe('SCIM directories on the Server API, and tenancy of the SCIM plane', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('creates a directory with its token shown once; lists, gets, maps groups to roles, rotates and deletes it', async () => {
    const env = await t.given.environment();
    const org = (await t.server(env).post('/organizations', { name: 'Acme' })).json();
    const created = await t.server(env).post(`/organizations/${org.id}/directories`, { name: 'Entra ID' });
    expect(created.statusCode, created.body).toBe(201);
    const dir = created.json();
    expect(dir).toMatchObject({ name: 'Entra ID', organizationId: org.id, groupRoles: {}, scimBaseUrl: `/scim/v2/${dir.id}` });
    expect(dir.token).toMatch(/^scim_[A-Za-z0-9_-]{43}$/);
    const listed = (await t.server(env).get(`/organizations/${org.id}/directories`)).json();
    expect(listed.items.map((d: { id: string }) => d.id)).toEqual([dir.id]);
    expect(listed.items[0].token).toBeUndefined();
    expect((await t.server(env).get(`/organizations/${org.id}/directories/${dir.id}`)).json().token).toBeUndefined();

    const mapped = await t.server(env).patch(`/organizations/${org.id}/directories/${dir.id}`, { groupRoles: { Admins: 'admin' } });
    expect(mapped.json().groupRoles).toEqual({ Admins: 'admin' });
    expectProblem(await t.server(env).patch(`/organizations/${org.id}/directories/${dir.id}`, { groupRoles: { X: 'superuser' } }), 400, 'invalid_role');

    expect((await scim(t, dir).get('/Users')).statusCode).toBe(200);
    const rotated = await t.server(env).post(`/organizations/${org.id}/directories/${dir.id}/token`);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().token).not.toBe(dir.token);
    expectScimError(await scim(t, dir).get('/Users'), 401);
    expect((await scim(t, { id: dir.id, token: rotated.json().token }).get('/Users')).statusCode).toBe(200);

    expect((await t.server(env).delete(`/organizations/${org.id}/directories/${dir.id}`)).statusCode).toBe(204);
    expectProblem(await t.server(env).get(`/organizations/${org.id}/directories/${dir.id}`), 404, 'resource_not_found');
    expectScimError(await scim(t, { id: dir.id, token: rotated.json().token }).get('/Users'), 401);
  });

  it('answers scimBaseUrl whole, from GATEHOUSE_BASE_URL, when the service knows its origin, at creation and at rotation', async () => {
    const withOrigin = await startTestApp({ baseUrl: 'https://auth.example.com' });
    try {
      const env = await withOrigin.given.environment();
      const org = (await withOrigin.server(env).post('/organizations', { name: 'Acme' })).json();
      const dir = (await withOrigin.server(env).post(`/organizations/${org.id}/directories`, { name: 'Okta' })).json();
      expect(dir.scimBaseUrl).toBe(`https://auth.example.com/scim/v2/${dir.id}`);
      expect((await withOrigin.server(env).post(`/organizations/${org.id}/directories/${dir.id}/token`)).json().scimBaseUrl).toBe(`https://auth.example.com/scim/v2/${dir.id}`);
    } finally {
      await withOrigin.close();
    }
  });

  it('answers 401 in SCIM form without a token, with a wrong one, or with another directory\'s token', async () => {
    const env = await t.given.environment();
    const [mine, theirs] = [await givenDirectory(t, env), await givenDirectory(t, env, {}, undefined, null)];
    const res = await t.app.inject({ method: 'GET', url: `/scim/v2/${mine.id}/Users` });
    expectScimError(res, 401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expectScimError(await scim(t, { id: mine.id, token: 'scim_wrong' }).get('/Users'), 401);
    expectScimError(await scim(t, { id: mine.id, token: theirs.token }).get('/Users'), 401);
    expectScimError(await scim(t, { id: 'not-a-uuid', token: mine.token }).get('/Users'), 401);
  });

  it('keeps Users and Groups of another directory, organization or environment out of reach (404, never listed)', async () => {
    const envA = await t.given.environment();
    const envB = await t.given.environment();
    const a = await givenDirectory(t, envA);
    const sameOrg = await givenDirectory(t, envA, {}, a.organizationId);
    const otherOrg = await givenDirectory(t, envA, {}, undefined, 'other.example.com');
    const otherEnv = await givenDirectory(t, envB);
    const user = (await scim(t, a).post('/Users', scimUser('tenant@example.com'))).json();
    const group = (await scim(t, a).post('/Groups', { displayName: 'Team', members: [{ value: user.id }] })).json();
    for (const other of [sameOrg, otherOrg, otherEnv]) {
      expectScimError(await scim(t, other).get(`/Users/${user.id}`), 404);
      expectScimError(await scim(t, other).patch(`/Users/${user.id}`, [{ op: 'replace', value: { active: false } }]), 404);
      expectScimError(await scim(t, other).delete(`/Users/${user.id}`), 404);
      expectScimError(await scim(t, other).get(`/Groups/${group.id}`), 404);
      expect((await scim(t, other).get('/Users')).json().totalResults).toBe(0);
      // A group of another directory cannot take this directory's user as a member.
      const foreign = (await scim(t, other).post('/Groups', { displayName: 'Team', members: [{ value: user.id }] })).json();
      expect(foreign.members).toEqual([]);
    }
    // The other environment's directory creates its own user for the same email.
    const twin = (await scim(t, otherEnv).post('/Users', scimUser('tenant@example.com'))).json();
    expect(twin.id).not.toBe(user.id);
    expect((await scim(t, a).get(`/Users/${user.id}`)).json().active).toBe(true);
  });

  it('answers 404 for another organization\'s directory on the Server API', async () => {
    const env = await t.given.environment();
    const dir = await givenDirectory(t, env);
    const other = (await t.server(env).post('/organizations', { name: 'Other' })).json();
    expectProblem(await t.server(env).get(`/organizations/${other.id}/directories/${dir.id}`), 404, 'resource_not_found');
    const elsewhere = await t.given.environment();
    expectProblem(await t.server(elsewhere).get(`/organizations/${dir.organizationId}/directories/${dir.id}`), 404, 'organization_not_found');
  });

  it('answers unknown SCIM paths and bad JSON in SCIM form', async () => {
    const env = await t.given.environment();
    const dir = await givenDirectory(t, env);
    expectScimError(await scim(t, dir).get('/Nope'), 404);
    const bad = await t.app.inject({ method: 'POST', url: `/scim/v2/${dir.id}/Users`, headers: { authorization: `Bearer ${dir.token}`, 'content-type': 'application/scim+json' }, payload: '{' });
    expectScimError(bad, 400);
  });
});

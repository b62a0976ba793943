import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { sessionIsActive } from '../helpers/given.js';
import { expectScimError, givenDirectory, scim, scimUser } from './support.js';

// What a directory's token reaches: the addresses at its organization's verified domains, and the users it
// provisioned there; never another organization's people, and never a ban it did not make.
describe('SCIM: a directory acts only on addresses at its organization\'s verified domains', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const linksOf = (env: TestEnv, userId: string) =>
    t.db.selectFrom('scim_users').select(['directory_id']).where('environment_id', '=', env.id).where('user_id', '=', userId).execute();

  it('refuses to link another organization\'s owner by email (400 invalidValue): no link, no membership, the owner signs in as before', async () => {
    const env = await t.given.environment();
    const attacker = await givenDirectory(t, env, {}, undefined, 'attacker.example');
    const victim = await t.given.user(env, { email: 'owner@victim.example' });
    const victimOrg = (await t.server(env).post('/organizations', { name: 'Victim', createdBy: victim.id })).json();

    const res = await scim(t, attacker).post('/Users', scimUser('owner@victim.example'));

    const body = expectScimError(res, 400, 'invalidValue');
    expect(body.detail).toContain('verified domain');
    expect(await linksOf(env, victim.id)).toEqual([]);
    expect((await t.server(env).get(`/organizations/${attacker.organizationId}/members`)).json().items).toEqual([]);
    expect((await t.server(env).get(`/organizations/${victimOrg.id}/members`)).json().items).toMatchObject([{ userId: victim.id, role: 'owner' }]);
    const signIn = await t.client(env).post('/auth/sign-in?_is_native=true', { email: victim.email, password: victim.password });
    expect(signIn.statusCode, signIn.body).toBe(200);
  });

  it('refuses to create any user when its organization has verified no domain', async () => {
    const env = await t.given.environment();
    const bare = await givenDirectory(t, env, {}, undefined, null);
    expectScimError(await scim(t, bare).post('/Users', scimUser('new@example.com')), 400, 'invalidValue');
    expect(await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
  });

  it('refuses to move a user\'s email outside the verified domains by PATCH or PUT: the email stays', async () => {
    const env = await t.given.environment();
    const dir = await givenDirectory(t, env);
    const idp = scim(t, dir);
    const { id } = (await idp.post('/Users', scimUser('ada@example.com'))).json();

    expectScimError(await idp.patch(`/Users/${id}`, [{ op: 'replace', path: 'emails[type eq "work"].value', value: 'attacker@evil.example' }]), 400, 'invalidValue');
    expectScimError(await idp.put(`/Users/${id}`, scimUser('ada@example.com', { emails: [{ value: 'attacker@evil.example', primary: true }] })), 400, 'invalidValue');
    expect((await t.server(env).get(`/users/${id}`)).json()).toMatchObject({ email: 'ada@example.com' });

    const moved = await idp.patch(`/Users/${id}`, [{ op: 'replace', path: 'emails[type eq "work"].value', value: 'augusta@example.com' }]);
    expect(moved.statusCode, moved.body).toBe(200);
    expect((await t.server(env).get(`/users/${id}`)).json()).toMatchObject({ email: 'augusta@example.com' });
  });

  it('does not lift a ban an operator made: linking with active true and PATCH active true leave the user banned, with no unban in the trail', async () => {
    const env = await t.given.environment();
    const dir = await givenDirectory(t, env);
    const idp = scim(t, dir);
    const user = await t.given.user(env, { email: 'banned@example.com' });
    expect((await t.server(env).post(`/users/${user.id}/ban`)).statusCode).toBe(200);

    const linked = await idp.post('/Users', scimUser('banned@example.com', { active: true }));
    expect(linked.statusCode, linked.body).toBe(201);
    expect(linked.json()).toMatchObject({ id: user.id, active: false });
    const patched = await idp.patch(`/Users/${user.id}`, [{ op: 'replace', value: { active: true } }]);
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().active).toBe(false);
    const put = await idp.put(`/Users/${user.id}`, scimUser('banned@example.com', { active: true }));
    expect(put.json().active).toBe(false);

    expect((await t.server(env).get(`/users/${user.id}`)).json().status).toBe('banned');
    const unbans = await t.db.selectFrom('audit_events').select('action').where('environment_id', '=', env.id).where('action', '=', 'user.unbanned').execute();
    expect(unbans).toEqual([]);
  });

  it('lifts only its own ban: another directory of the organization cannot reactivate a user the first one deactivated', async () => {
    const env = await t.given.environment();
    const first = await givenDirectory(t, env);
    const second = await givenDirectory(t, env, { name: 'Entra ID' }, first.organizationId);
    const { id } = (await scim(t, first).post('/Users', scimUser('shared@example.com'))).json();
    expect((await scim(t, second).post('/Users', scimUser('shared@example.com'))).json().id).toBe(id);

    expect((await scim(t, first).patch(`/Users/${id}`, [{ op: 'replace', path: 'active', value: false }])).json().active).toBe(false);
    expect((await scim(t, second).patch(`/Users/${id}`, [{ op: 'replace', path: 'active', value: true }])).json().active).toBe(false);
    expect((await t.server(env).get(`/users/${id}`)).json().status).toBe('banned');

    expect((await scim(t, first).patch(`/Users/${id}`, [{ op: 'replace', path: 'active', value: true }])).json().active).toBe(true);
    expect((await t.server(env).get(`/users/${id}`)).json().status).toBe('active');
  });

  it('deactivates again after an operator lifted its ban, and its next activation lifts that new ban', async () => {
    const env = await t.given.environment();
    const dir = await givenDirectory(t, env);
    const idp = scim(t, dir);
    const user = await t.given.user(env, { email: 'cycle@example.com' });
    await idp.post('/Users', scimUser('cycle@example.com'));
    await idp.patch(`/Users/${user.id}`, [{ op: 'replace', path: 'active', value: false }]);
    expect((await t.server(env).post(`/users/${user.id}/unban`)).statusCode).toBe(200);
    expect((await idp.get(`/Users/${user.id}`)).json().active).toBe(true);
    // The IdP still believes it active: its next active:true changes nothing; an operator's ban then stays.
    await idp.patch(`/Users/${user.id}`, [{ op: 'replace', path: 'active', value: true }]);
    await t.server(env).post(`/users/${user.id}/ban`);
    expect((await idp.patch(`/Users/${user.id}`, [{ op: 'replace', path: 'active', value: true }])).json().active).toBe(false);
    await t.server(env).post(`/users/${user.id}/unban`);

    const session = await t.given.session(env, user);
    await idp.patch(`/Users/${user.id}`, [{ op: 'replace', path: 'active', value: false }]);
    expect(await sessionIsActive(t, env, session)).toBe(false);
    expect((await idp.patch(`/Users/${user.id}`, [{ op: 'replace', path: 'active', value: true }])).json().active).toBe(true);
  });
});

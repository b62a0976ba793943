import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { expectScimError, givenDirectory, GROUP_SCHEMA, scim, scimUser, type TestDirectory } from './support.js';

// A PATCH path (or a value's key) is walked into the resource by the patch library: one outside the SCIM schema
// could reach Object.prototype of the whole process and stop every environment. Runs in the server's process, so
// `({})[name]` below is what every later request would see.
const POLLUTING_PATHS = [
  'name.__proto__.PROBE', '__proto__.PROBE', 'constructor.prototype.PROBE', 'urn:ietf:params:scim:schemas:core:2.0:User:__proto__.PROBE',
  'emails[type eq "work"].__proto__', 'emails[__proto__ eq "x"].value', 'displayName.__proto__.PROBE', 'members.__proto__.PROBE',
  'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.__proto__', 'toString',
];
const POLLUTING_KEYS = ['__proto__.PROBE', 'name.__proto__.PROBE', 'constructor.prototype.PROBE', 'members.constructor.prototype.PROBE'];

type Shape = { label: string; operation: Record<string, unknown> };

/** Every shape once per operation, each with its own property name, so a shape that got through is named. */
function shapes(): Shape[] {
  const list: Shape[] = [];
  let n = 0;
  const probe = () => `gatehousePolluted${n++}`;
  for (const path of POLLUTING_PATHS) {
    for (const op of ['add', 'replace']) {
      const name = probe();
      list.push({ label: `${op} ${path}`, operation: { op, path: path.replace('PROBE', name), value: { [name]: 'polluted' } } });
    }
    list.push({ label: `remove ${path}`, operation: { op: 'remove', path: path.replace('PROBE', 'hasOwnProperty') } });
  }
  for (const key of POLLUTING_KEYS) {
    const name = probe();
    list.push({ label: `add {${key}}`, operation: { op: 'add', value: { [key.replace('PROBE', name)]: 'polluted' } } });
    list.push({ label: `add name {${key}}`, operation: { op: 'add', path: 'name', value: { [key.replace('PROBE', name)]: 'polluted' } } });
  }
  return list;
}

describe('SCIM PATCH paths outside the schema', () => {
  let t: TestApp;
  let env: TestEnv;
  let dir: TestDirectory;
  beforeAll(async () => {
    t = await startTestApp();
    env = await t.given.environment();
    dir = await givenDirectory(t, env);
  });
  afterAll(() => t.close());

  const untouched = () => {
    const probe: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) expect(probe[`gatehousePolluted${i}`], `gatehousePolluted${i}`).toBeUndefined();
    expect(Object.hasOwn(Object.prototype, 'hasOwnProperty')).toBe(true);
    expect(typeof probe.toString).toBe('function');
  };

  it('refuses every polluting path and key with 400 invalidPath on Users and Groups, leaves Object.prototype as it was, and another environment answers as before', async () => {
    const other = await t.given.environment();
    const otherUser = await t.given.user(other, { email: 'bystander@example.com' });
    const before = await t.server(other).get(`/users/${otherUser.id}`);
    const idp = scim(t, dir);
    const user = (await idp.post('/Users', scimUser('target@example.com'))).json();
    const group = (await idp.post('/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Team', members: [{ value: user.id }] })).json();

    for (const { label, operation } of shapes()) {
      for (const target of [`/Users/${user.id}`, `/Groups/${group.id}`]) {
        const res = await idp.patch(target, [operation]);
        expect(res.statusCode, `${label} on ${target}: ${res.body}`).toBe(400);
        expect(res.json().scimType, `${label} on ${target}`).toBe('invalidPath');
      }
    }
    untouched();

    const after = await t.server(other).get(`/users/${otherUser.id}`);
    expect(after.statusCode).toBe(200);
    expect(after.json()).toEqual(before.json());
    expect((await idp.get(`/Users/${user.id}`)).json()).toMatchObject({ userName: 'target@example.com', active: true, emails: [{ value: 'target@example.com' }] });
    expect((await scim(t, await givenDirectory(t, other)).get('/Users')).statusCode).toBe(200);
  });

  it('refuses a PUT body with a __proto__ or constructor key (400, nothing changed) and ignores dotted keys outside the schema', async () => {
    const idp = scim(t, dir);
    const user = (await idp.post('/Users', scimUser('put-target@example.com'))).json();
    const group = (await idp.post('/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Put team' })).json();
    const bodies = (base: Record<string, unknown>) => [
      `{${JSON.stringify(base).slice(1, -1)},"__proto__":{"gatehousePolluted150":"polluted"}}`,
      `{${JSON.stringify(base).slice(1, -1)},"constructor":{"prototype":{"gatehousePolluted151":"polluted"}}}`,
      `{${JSON.stringify(base).slice(1, -1)},"name":{"__proto__":{"gatehousePolluted152":"polluted"}}}`,
    ];
    for (const [target, base] of [[`/Users/${user.id}`, scimUser('put-target@example.com')], [`/Groups/${group.id}`, { schemas: [GROUP_SCHEMA], displayName: 'Put team' }]] as const) {
      for (const payload of bodies(base)) {
        const res = await t.app.inject({ method: 'PUT', url: `/scim/v2/${dir.id}${target}`, headers: { authorization: `Bearer ${dir.token}`, 'content-type': 'application/scim+json' }, payload });
        expectScimError(res, 400);
      }
      const dotted = await idp.put(target, { ...base, 'name.__proto__.gatehousePolluted153': 'polluted', '__proto__.gatehousePolluted154': 'polluted' });
      expect(dotted.statusCode, dotted.body).toBe(200);
    }
    untouched();
  });

  it('still applies paths of the schema that it does not keep (Entra ID\'s title, enterprise department) and those it keeps, in any case', async () => {
    const idp = scim(t, dir);
    const user = (await idp.post('/Users', scimUser('entra@example.com'))).json();
    const res = await idp.patch(`/Users/${user.id}`, [
      { op: 'replace', path: 'title', value: 'Engineer' },
      { op: 'add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'R&D' },
      { op: 'add', value: { 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { employeeNumber: '42' } } },
      { op: 'replace', path: 'addresses[type eq "work"].locality', value: 'Aarhus' },
      { op: 'replace', path: 'name.givenName', value: 'Grace' },
      { op: 'replace', value: { 'name.familyName': 'Hopper', displayName: 'Grace Hopper' } },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().name).toMatchObject({ givenName: 'Grace', familyName: 'Hopper' });
    expectScimError(await idp.patch(`/Users/${user.id}`, [{ op: 'replace', path: 'favouriteColour', value: 'blue' }]), 400, 'invalidPath');
    expectScimError(await idp.patch(`/Users/${user.id}`, [{ op: 'replace', path: 'name.nickname', value: 'G' }]), 400, 'invalidPath');
    expectScimError(await idp.patch(`/Users/${user.id}`, [{ op: 'replace', path: 'urn:example:custom:2.0:User:level', value: 'G' }]), 400, 'invalidPath');
  });
});

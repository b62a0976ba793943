import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

describe('validation errors a person can read', () => {
  it('names the field and lists the allowed values of a union of literals in one line (locale)', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const res = await t.server(env).patch(`/users/${user.id}`, { locale: 'de' });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.detail).toBe('Invalid request body: locale must be one of: en, da, null.');
    expect(body.properties.errors).toEqual([{ path: '/body/locale', message: 'must be one of: en, da, null' }]);
  });

  it('lists the allowed values of each failing item of a query-string list of literals (status)', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).get('/users?status=active&status=gone');
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.detail).toBe('Invalid request querystring: status.1 must be one of: active, banned, deleted.');
    expect(body.properties.errors).toEqual([{ path: '/querystring/status/1', message: 'must be one of: active, banned, deleted' }]);
  });

  it('lists the allowed values of an enum (a role permission)', async () => {
    const env = await t.given.environment();
    const res = await t.admin.post(`/environments/${env.id}/role-sets`, { name: 'Teams', roles: [{ key: 'owner', name: 'Owner', permissions: ['everything'] }] });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.properties.errors).toEqual([{ path: '/body/roles/0/permissions/0', message: 'must be one of: organization:update, organization:delete, members:manage, invitations:manage' }]);
    expect(body.detail).toBe('Invalid request body: roles.0.permissions.0 must be one of: organization:update, organization:delete, members:manage, invitations:manage.');
  });

  it('lists the allowed values on the admin API too (the provider type)', async () => {
    const env = await t.given.environment();
    const res = await t.admin.put(`/environments/${env.id}/oauth-providers/facebook`, { type: 'facebook', name: 'Facebook', clientId: 'id', clientSecret: 'secret' });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.properties.errors).toEqual([{ path: '/body/type', message: 'must be one of: oidc, oauth2, google, github, microsoft' }]);
    expect(body.detail).toBe('Invalid request body: type must be one of: oidc, oauth2, google, github, microsoft.');
  });

  it('says what each branch of a mixed union wants, in one entry for the field (a string or null)', async () => {
    const env = await t.given.environment();
    const res = await t.server(env).post('/users/search', { emailSearch: 5 });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.properties.errors).toEqual([{ path: '/body/emailSearch', message: 'must be string, or be null' }]);
  });

  it('names every failing field in the detail, and keeps one machine-readable entry per field', async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    const res = await t.server(env).patch(`/users/${user.id}`, { locale: 7, email: 'not an email', nickname: 'Ada' });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body.properties.errors).toEqual(expect.arrayContaining([
      { path: '/body/nickname', message: 'must NOT have additional properties' },
      { path: '/body/email', message: 'must match format "email"' },
      { path: '/body/locale', message: 'must be one of: en, da, null' },
    ]));
    expect(body.properties.errors).toHaveLength(3);
    for (const { path, message } of body.properties.errors) expect(body.detail).toContain(`${path.slice('/body/'.length)} ${message}`);
  });
});

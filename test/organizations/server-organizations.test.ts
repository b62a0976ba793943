import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createOrganization, expectProblem, MISSING_ID, objectOfSize, ORGANIZATION_KEYS, storedRoles } from './support.js';

describe('organizations on the Server API', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  describe('POST /organizations', () => {
    it('creates an organization with exactly the fields of the spec, and makes createdBy its owner', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const res = await t.server(env).post('/organizations', {
        name: 'Acme', slug: 'acme', createdBy: user.id, publicMetadata: { plan: 'pro' }, privateMetadata: { crm: 42 },
      });
      expect(res.statusCode).toBe(201);
      const org = res.json();
      expect(Object.keys(org).sort()).toEqual(ORGANIZATION_KEYS);
      expect(org).toMatchObject({ name: 'Acme', slug: 'acme', roleSetId: null, publicMetadata: { plan: 'pro' }, privateMetadata: { crm: 42 } });
      expect(await storedRoles(t, env, org.id)).toEqual({ [user.id]: 'owner' });
    });

    it('answers 409 slug_taken for a slug another organization of the environment has, and stores nothing', async () => {
      const [env, other] = [await t.given.environment(), await t.given.environment()];
      await createOrganization(t, env, { slug: 'acme' });
      await createOrganization(t, other, { slug: 'acme' });
      expectProblem(await t.server(env).post('/organizations', { name: 'Acme 2', slug: 'acme' }), 409, 'slug_taken');
      expect((await t.server(env).get('/organizations')).json().items).toHaveLength(1);
    });

    it('refuses an unknown role set, a malformed slug and metadata over 8 KB with 400', async () => {
      const env = await t.given.environment();
      expectProblem(await t.server(env).post('/organizations', { name: 'A', roleSetId: MISSING_ID }), 400, 'role_set_not_found');
      expectProblem(await t.server(env).post('/organizations', { name: 'A', slug: 'Not A Slug' }), 400, 'invalid_request');
      const body = expectProblem(await t.server(env).post('/organizations', { name: 'A', publicMetadata: objectOfSize(4097), privateMetadata: objectOfSize(4096) }), 400, 'metadata_too_large');
      expect(body.properties).toEqual({ code: 'metadata_too_large', bytes: 8193, limit: 8192 });
      expect((await t.server(env).get('/organizations')).json().items).toEqual([]);
    });

    it('refuses createdBy of another environment with 404 user_not_found, a deleted user with 403 user_deleted and a banned one with 409 user_not_active, creating nothing', async () => {
      const [env, other] = [await t.given.environment(), await t.given.environment()];
      const stranger = await t.given.user(other);
      const [banned, deleted] = [await t.given.user(env), await t.given.user(env)];
      await t.server(env).post(`/users/${banned.id}/ban`);
      await t.server(env).delete(`/users/${deleted.id}`);
      expectProblem(await t.server(env).post('/organizations', { name: 'A', createdBy: stranger.id }), 404, 'user_not_found');
      expectProblem(await t.server(env).post('/organizations', { name: 'A', createdBy: deleted.id }), 403, 'user_deleted');
      expectProblem(await t.server(env).post('/organizations', { name: 'A', createdBy: banned.id }), 409, 'user_not_active');
      expect((await t.server(env).get('/organizations')).json().items).toEqual([]);
    });
  });

  describe('GET /organizations', () => {
    it('filters by a case-insensitive name substring in which %, _ and \\ match only themselves', async () => {
      const env = await t.given.environment();
      const names = ['Acme Corp', 'ACME labs', '100% Acme', 'Acme_Inc', 'Back\\slash', 'Other'];
      const ids: Record<string, string> = {};
      for (const name of names) ids[name] = (await createOrganization(t, env, { name })).id;
      const search = async (name: string) => (await t.server(env).get(`/organizations?name=${encodeURIComponent(name)}`)).json().items.map((o: { name: string }) => o.name);
      expect(await search('acme')).toEqual(['Acme Corp', 'ACME labs', '100% Acme', 'Acme_Inc']);
      expect(await search('%')).toEqual(['100% Acme']);
      expect(await search('_')).toEqual(['Acme_Inc']);
      expect(await search('\\')).toEqual(['Back\\slash']);
      expect(await search('nothing')).toEqual([]);
    });

    it('clamps limit to 1..100 instead of refusing it, and pages with the cursor without repeating or skipping', async () => {
      const env = await t.given.environment();
      for (let i = 0; i < 3; i++) await createOrganization(t, env, { name: `Org ${i}` });
      const zero = await t.server(env).get('/organizations?limit=0');
      expect(zero.statusCode).toBe(200);
      expect(zero.json()).toMatchObject({ hasMore: true });
      expect(zero.json().items).toHaveLength(1);
      const huge = await t.server(env).get('/organizations?limit=100000');
      expect(huge.json().items).toHaveLength(3);
      const second = await t.server(env).get(`/organizations?limit=1&cursor=${zero.json().nextCursor}`);
      const third = await t.server(env).get(`/organizations?limit=1&cursor=${second.json().nextCursor}`);
      expect([zero, second, third].map((r) => r.json().items[0].name)).toEqual(['Org 0', 'Org 1', 'Org 2']);
      expect(third.json()).toMatchObject({ hasMore: false, nextCursor: null });
    });

    it("never lists another environment's organizations", async () => {
      const [env, other] = [await t.given.environment(), await t.given.environment()];
      await createOrganization(t, other, { name: 'Theirs' });
      expect((await t.server(env).get('/organizations')).json().items).toEqual([]);
    });
  });

  describe('one organization', () => {
    it("answers 404 organization_not_found for another environment's organization on every route", async () => {
      const [env, other] = [await t.given.environment(), await t.given.environment()];
      const theirs = await createOrganization(t, other);
      const user = await t.given.user(env);
      const server = t.server(env);
      for (const res of [
        await server.get(`/organizations/${theirs.id}`),
        await server.patch(`/organizations/${theirs.id}`, { name: 'Mine' }),
        await server.patch(`/organizations/${theirs.id}/metadata`, { publicMetadata: { a: 1 } }),
        await server.get(`/organizations/${theirs.id}/members`),
        await server.post(`/organizations/${theirs.id}/members`, { userId: user.id, role: 'member' }),
        await server.delete(`/organizations/${theirs.id}`),
      ]) expectProblem(res, 404, 'organization_not_found');
      expect((await t.server(other).get(`/organizations/${theirs.id}`)).json().name).toBe('Acme');
    });

    it('renames, changes the slug, deep-merges metadata within the budget, and deletes with every membership', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const org = await createOrganization(t, env, { createdBy: user.id, publicMetadata: { a: { b: 1 } } });
      expect((await t.server(env).patch(`/organizations/${org.id}`, { name: 'Acme 2', slug: 'acme-2' })).json()).toMatchObject({ name: 'Acme 2', slug: 'acme-2' });
      const merged = await t.server(env).patch(`/organizations/${org.id}/metadata`, { publicMetadata: { a: { c: 2 } }, privateMetadata: { secret: true } });
      expect(merged.json()).toMatchObject({ publicMetadata: { a: { b: 1, c: 2 } }, privateMetadata: { secret: true } });
      expectProblem(await t.server(env).patch(`/organizations/${org.id}/metadata`, { privateMetadata: objectOfSize(8192) }), 400, 'metadata_too_large');

      expect((await t.server(env).delete(`/organizations/${org.id}`)).statusCode).toBe(204);
      expectProblem(await t.server(env).get(`/organizations/${org.id}`), 404, 'organization_not_found');
      expect(await storedRoles(t, env, org.id)).toEqual({});
      expectProblem(await t.server(env).delete(`/organizations/${org.id}`), 404, 'organization_not_found');
    });

    it('records creation (with the creator joining as owner), changes, metadata merges and deletion in the audit trail', async () => {
      const env = await t.given.environment();
      const user = await t.given.user(env);
      const org = await createOrganization(t, env, { createdBy: user.id });
      await t.server(env).patch(`/organizations/${org.id}`, { name: 'Renamed' });
      await t.server(env).patch(`/organizations/${org.id}/metadata`, { privateMetadata: { crm: 'SECRET-VALUE' } });
      await t.server(env).patch(`/organizations/${org.id}/members/${user.id}/metadata`, { publicMetadata: { title: 'CEO' } });
      await t.server(env).delete(`/organizations/${org.id}`);
      const events = (await t.server(env).get(`/audit-events?targetType=organization&targetId=${org.id}`)).json().items;
      expect(events.map((e: { action: string; metadata: unknown }) => [e.action, e.metadata])).toEqual([
        ['organization.created', { createdBy: user.id }], ['organization_membership.created', { role: 'owner' }],
        ['organization.updated', { changedFields: ['name'] }], ['organization.metadata_updated', { changedKeys: { privateMetadata: ['crm'] } }],
        ['organization_membership.metadata_updated', { changedKeys: { publicMetadata: ['title'] } }], ['organization.deleted', { name: 'Renamed' }],
      ]);
      expect(JSON.stringify(events)).not.toContain('SECRET-VALUE');
    });
  });
});

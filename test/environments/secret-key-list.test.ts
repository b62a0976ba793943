import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { asDashboard, signedInOperator } from '../operators/support.js';
import { MISSING_ID } from '../users/support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

const list = (environmentId: string) => t.admin.get(`/environments/${environmentId}/secret-keys`);

describe('GET /api/admin/v1/environments/:id/secret-keys', () => {
  it("lists the environment's keys newest first, each with its id, hint and times, and never the key or its hash", async () => {
    const env = await t.given.environment();
    t.clock.advance(1000);
    const second = (await t.admin.post(`/environments/${env.id}/secret-keys`)).json();

    const res = await list(env.id);
    expect(res.statusCode, res.body).toBe(200);
    const { items } = res.json();
    expect(items).toHaveLength(2);
    expect(items.map((key: { id: string }) => key.id)[0]).toBe(second.id);
    for (const key of items) expect(Object.keys(key).sort()).toEqual(['createdAt', 'hint', 'id', 'revokedAt']);
    expect(items[0]).toEqual({ id: second.id, hint: `sk_…${second.secretKey.slice(-4)}`, createdAt: t.clock.now().toISOString(), revokedAt: null });
    expect(items[1].hint).toBe(`sk_…${env.secretKey.slice(-4)}`);

    for (const key of [env.secretKey, second.secretKey]) {
      expect(res.body).not.toContain(key.slice(3, -4));
      for (const encoding of ['hex', 'base64', 'base64url'] as const) {
        expect(res.body).not.toContain(createHash('sha256').update(key).digest(encoding));
      }
    }
  });

  it('shows a revoked key with its revocation time, and it stays listed', async () => {
    const env = await t.given.environment();
    const second = (await t.admin.post(`/environments/${env.id}/secret-keys`)).json();
    t.clock.advance(5000);
    expect((await t.admin.delete(`/secret-keys/${second.id}`)).statusCode).toBe(204);
    const items = (await list(env.id)).json().items as { id: string; revokedAt: string | null }[];
    expect(items.find((key) => key.id === second.id)?.revokedAt).toBe(t.clock.now().toISOString());
    expect(items.filter((key) => key.revokedAt === null)).toHaveLength(1);
  });

  it("never lists another environment's keys", async () => {
    const mine = await t.given.environment();
    const other = await t.given.environment();
    const theirs = (await t.admin.post(`/environments/${other.id}/secret-keys`)).json();
    const otherIds = (await list(other.id)).json().items.map((key: { id: string }) => key.id);
    expect(otherIds).toContain(theirs.id);

    const res = await list(mine.id);
    const ids = res.json().items.map((key: { id: string }) => key.id);
    expect(ids).toHaveLength(1);
    for (const id of otherIds) expect(ids).not.toContain(id);
    expect(res.body).not.toContain(theirs.secretKey.slice(-4));
  });

  it('gives a key issued before hints were kept a null hint', async () => {
    const env = await t.given.environment();
    await t.db.updateTable('secret_keys').set({ hint: null }).where('environment_id', '=', env.id).execute();
    expect((await list(env.id)).json().items.map((key: { hint: string | null }) => key.hint)).toEqual([null]);
  });

  it('answers 404 resource_not_found for an unknown environment and for the operators\' reserved one', async () => {
    expectProblem(await list(MISSING_ID), 404, 'resource_not_found');
    await signedInOperator(t);
    const reserved = await t.db.selectFrom('environments').select('id').where('reserved', '=', 'operators').executeTakeFirstOrThrow();
    expectProblem(await list(reserved.id), 404, 'resource_not_found');
  });

  it("answers a signed-in operator as it answers the admin token, and 401 with neither", async () => {
    const env = await t.given.environment();
    const operator = await signedInOperator(t);
    const res = await asDashboard(t, 'GET', `/api/admin/v1/environments/${env.id}/secret-keys`, { cookie: operator.cookie });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual((await list(env.id)).json());
    expectProblem(await asDashboard(t, 'GET', `/api/admin/v1/environments/${env.id}/secret-keys`), 401, 'unauthenticated');
  });
});

import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { MISSING_ID, UUID_V7 } from '../users/support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

describe('secret keys', () => {
  const works = async (env: TestEnv, key: string) => (await t.server(env, key).get('/allowed-origins')).statusCode;

  it('issues another key that works on the Server API alongside the first', async () => {
    const env = await t.given.environment();
    const res = await t.admin.post(`/environments/${env.id}/secret-keys`);
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['id', 'secretKey']);
    expect(body.id).toMatch(UUID_V7);
    expect(body.secretKey).toMatch(/^sk_[A-Za-z0-9_-]{43,}$/);
    expect(body.secretKey).not.toBe(env.secretKey);
    expect(await works(env, body.secretKey)).toBe(200);
    expect(await works(env, env.secretKey)).toBe(200);
  });

  it('revokes a key with 204: it gets 401 on the very next request while the other key still works', async () => {
    const env = await t.given.environment();
    const second = (await t.admin.post(`/environments/${env.id}/secret-keys`)).json();

    const res = await t.admin.delete(`/secret-keys/${second.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');

    const refused = await t.server(env, second.secretKey).get('/allowed-origins');
    expectProblem(refused, 401, 'unauthenticated');
    expect(refused.headers['www-authenticate']).toBe('Bearer');
    expect(await works(env, env.secretKey)).toBe(200);
  });

  it('revokes the first key through the secretKeyId shown at creation', async () => {
    const created = (await t.admin.post('/environments', { name: `Rotate ${randomUUID().slice(0, 8)}` })).json();
    const env = { id: created.id, secretKey: created.secretKey, frontendHost: created.frontendHost, name: created.name };
    const replacement = (await t.admin.post(`/environments/${env.id}/secret-keys`)).json();
    expect((await t.admin.delete(`/secret-keys/${created.secretKeyId}`)).statusCode).toBe(204);
    expect(await works(env, created.secretKey)).toBe(401);
    expect(await works(env, replacement.secretKey)).toBe(200);
  });

  it('keeps the first revocation time when a key is revoked twice', async () => {
    const env = await t.given.environment();
    const key = (await t.admin.post(`/environments/${env.id}/secret-keys`)).json();
    await t.admin.delete(`/secret-keys/${key.id}`);
    const first = await t.db.selectFrom('secret_keys').select('revoked_at').where('id', '=', key.id).executeTakeFirstOrThrow();
    t.clock.advance(60_000);
    expect((await t.admin.delete(`/secret-keys/${key.id}`)).statusCode).toBe(204);
    const second = await t.db.selectFrom('secret_keys').select('revoked_at').where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(second.revoked_at).toEqual(first.revoked_at);
    expect(first.revoked_at).not.toBeNull();
  });

  it('stores only SHA-256 hashes of secret keys, never the keys', async () => {
    const env = await t.given.environment();
    const second = (await t.admin.post(`/environments/${env.id}/secret-keys`)).json();
    const rows = await t.db.selectFrom('secret_keys').selectAll().where('environment_id', '=', env.id).orderBy('id').execute();
    expect(rows).toHaveLength(2);
    const sha = (key: string) => createHash('sha256').update(key).digest();
    expect(rows.map((r) => Buffer.from(r.key_hash).equals(sha(env.secretKey)) || Buffer.from(r.key_hash).equals(sha(second.secretKey)))).toEqual([true, true]);
    const dump = JSON.stringify([rows, await t.db.selectFrom('environments').selectAll().where('id', '=', env.id).executeTakeFirst()]);
    for (const key of [env.secretKey, second.secretKey]) {
      expect(dump).not.toContain(key);
      expect(dump).not.toContain(key.slice(3));
    }
  });

  it('answers 404 resource_not_found for an unknown environment or key', async () => {
    expectProblem(await t.admin.post(`/environments/${MISSING_ID}/secret-keys`), 404, 'resource_not_found');
    expectProblem(await t.admin.delete(`/secret-keys/${MISSING_ID}`), 404, 'resource_not_found');
    expect(await t.db.selectFrom('secret_keys').select('id').where('environment_id', '=', MISSING_ID).execute()).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordOwnEvent } from '../../src/audit/service.js';
import { createEnvironmentsService } from '../../src/environments/service.js';
import { systemCaller } from '../../src/platform/caller.js';
import { inTransaction } from '../../src/platform/db/database.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { sessionIsActive, type TestSession } from '../helpers/given.js';
import { append, eventBody } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

interface Event { action: string; sequence: number; actor: unknown; targets: unknown; metadata: unknown; producer: unknown; context: unknown; result: string }

/** The environment's whole log, in sequence order. */
async function log(env: TestEnv): Promise<Event[]> {
  const res = await t.server(env).get('/audit-events/feed?limit=100');
  expect(res.statusCode).toBe(200);
  return res.json().items;
}

/** The environment's first secret key id (each environment's log starts with its creation). */
async function firstKeyId(env: TestEnv): Promise<string> {
  const [created] = await log(env);
  expect(created.action).toBe('secret_key.created');
  return (created.targets as { id: string }[])[0].id;
}

/** Log entries added since `before` entries. */
const since = async (env: TestEnv, before: number) => (await log(env)).slice(before);

/** An environment with a user signed in `sessionCount` times; `before` counts the log entries up to here. */
async function setUp(sessionCount = 0) {
  const env = await t.given.environment();
  const user = await t.given.user(env);
  const sessions: TestSession[] = [];
  for (let i = 0; i < sessionCount; i++) sessions.push(await t.given.session(env, user));
  return { env, user, sessions, keyId: await firstKeyId(env), before: (await log(env)).length };
}

const serverApiBy = (keyId: string) => ({
  actor: { type: 'api_key', id: keyId, impersonatorId: null },
  context: { ipAddress: '127.0.0.1', userAgent: 'lightMyRequest' },
  producer: { type: 'gatehouse', via: 'server_api' },
});

describe("Gatehouse's own audit trail: users", () => {
  it('records a ban by the secret key with the sessions it revoked; a repeat ban records nothing', async () => {
    const { env, user, keyId, before } = await setUp(1);

    expect((await t.server(env).post(`/users/${user.id}/ban`)).statusCode).toBe(200);
    expect((await t.server(env).post(`/users/${user.id}/ban`)).statusCode).toBe(200);

    expect(await since(env, before)).toEqual([expect.objectContaining({
      action: 'user.banned', result: 'success', sequence: before + 1, ...serverApiBy(keyId),
      targets: [{ type: 'user', id: user.id }], metadata: { revokedSessions: 1 },
    })]);
  });

  it('records an unban of a banned user only', async () => {
    const { env, user, keyId, before } = await setUp();
    expect((await t.server(env).post(`/users/${user.id}/unban`)).statusCode).toBe(200);
    await t.server(env).post(`/users/${user.id}/ban`);
    expect((await t.server(env).post(`/users/${user.id}/unban`)).statusCode).toBe(200);

    expect((await since(env, before)).map((e) => e.action)).toEqual(['user.banned', 'user.unbanned']);
    expect((await since(env, before + 1))[0]).toMatchObject({ ...serverApiBy(keyId), targets: [{ type: 'user', id: user.id }], metadata: {} });
  });

  it('records a delete once, with the sessions it revoked; the repeat (403) records nothing', async () => {
    const { env, user, before } = await setUp(2);
    expect((await t.server(env).delete(`/users/${user.id}`)).statusCode).toBe(204);
    expect((await t.server(env).delete(`/users/${user.id}`)).statusCode).toBe(403);
    expect((await t.server(env).post(`/users/${user.id}/ban`)).statusCode).toBe(403);

    expect(await since(env, before)).toEqual([expect.objectContaining({ action: 'user.deleted', metadata: { revokedSessions: 2 } })]);
  });

  it('records a metadata change with the keys it touched per bag, never the values; a no-op records nothing', async () => {
    const { env, user, keyId, before } = await setUp();
    const patch = { publicMetadata: { plan: 'pro', seats: 5 }, privateMetadata: { stripeCustomer: 'cus_SECRETVALUE' } };
    expect((await t.server(env).patch(`/users/${user.id}/metadata`, patch)).statusCode).toBe(200);
    expect((await t.server(env).patch(`/users/${user.id}/metadata`, patch)).statusCode).toBe(200);
    expect((await t.server(env).patch(`/users/${user.id}/metadata`, { unsafeMetadata: {} })).statusCode).toBe(200);

    const events = await since(env, before);
    expect(events).toEqual([expect.objectContaining({
      action: 'user.metadata_updated', ...serverApiBy(keyId), targets: [{ type: 'user', id: user.id }],
      metadata: { changedKeys: { publicMetadata: ['plan', 'seats'], privateMetadata: ['stripeCustomer'] } },
    })]);
    expect(JSON.stringify(events)).not.toContain('cus_SECRETVALUE');
    expect(JSON.stringify(events)).not.toContain('"pro"');
  });

  it("records the user's own change of unsafe metadata on the client plane, with the user as actor", async () => {
    const { env, user, sessions: [session], before } = await setUp(1);
    const res = await t.client(env, { token: session.token }).patch('/me', { unsafeMetadata: { theme: 'dark' }, firstName: 'Ada' });
    expect(res.statusCode).toBe(200);
    expect((await t.client(env, { token: session.token }).patch('/me', { firstName: 'Ada L.' })).statusCode).toBe(200);

    const byUser = { actor: { type: 'user', id: user.id, impersonatorId: null }, producer: { type: 'gatehouse', via: 'client_api' } };
    expect(await since(env, before)).toEqual([
      expect.objectContaining({ action: 'user.updated', ...byUser, metadata: { changedFields: ['firstName', 'name'] } }),
      expect.objectContaining({ action: 'user.metadata_updated', ...byUser, metadata: { changedKeys: { unsafeMetadata: ['theme'] } } }),
      expect.objectContaining({ action: 'user.updated', ...byUser, metadata: { changedFields: ['firstName', 'name'] } }),
    ]);
  });
});

describe("Gatehouse's own audit trail: sessions", () => {
  it('records a Server API revoke-all with the count; revoking none records nothing', async () => {
    const { env, user, keyId, before } = await setUp(2);
    expect((await t.server(env).delete(`/users/${user.id}/sessions`)).statusCode).toBe(204);
    expect((await t.server(env).delete(`/users/${user.id}/sessions`)).statusCode).toBe(204);

    expect(await since(env, before)).toEqual([expect.objectContaining({
      action: 'user.sessions_revoked', ...serverApiBy(keyId), targets: [{ type: 'user', id: user.id }], metadata: { revokedSessions: 2 },
    })]);
  });

  it('records a Server API revoke-one with the session and user as targets; a repeat records nothing', async () => {
    const { env, user, keyId, sessions: [session], before } = await setUp(1);
    expect((await t.server(env).delete(`/users/${user.id}/sessions/${session.id}`)).statusCode).toBe(204);
    expect((await t.server(env).delete(`/users/${user.id}/sessions/${session.id}`)).statusCode).toBe(204);

    expect(await since(env, before)).toEqual([expect.objectContaining({
      action: 'session.revoked', ...serverApiBy(keyId),
      targets: [{ type: 'session', id: session.id }, { type: 'user', id: user.id }], metadata: { reason: 'revoke' },
    })]);
  });

  it("records a client sign-out and a user's revocation of their other session, with the user as actor and never the token", async () => {
    const { env, user, sessions: [current, other], before } = await setUp(2);
    expect((await t.client(env, { token: current.token }).delete(`/sessions/${other.id}`)).statusCode).toBe(204);
    expect((await t.client(env, { token: current.token }).post('/auth/sign-out')).statusCode).toBe(204);
    expect(await sessionIsActive(t, env, current)).toBe(false);

    const byUser = { actor: { type: 'user', id: user.id, impersonatorId: null }, producer: { type: 'gatehouse', via: 'client_api' } };
    const events = await since(env, before);
    expect(events).toEqual([
      expect.objectContaining({ action: 'session.revoked', ...byUser, targets: [{ type: 'session', id: other.id }, { type: 'user', id: user.id }], metadata: { reason: 'revoke' } }),
      expect.objectContaining({ action: 'session.revoked', ...byUser, targets: [{ type: 'session', id: current.id }, { type: 'user', id: user.id }], metadata: { reason: 'sign_out' } }),
    ]);
    expect(JSON.stringify(events)).not.toContain(current.token);
    expect(JSON.stringify(events)).not.toContain(user.password);
  });

  it('records nothing when a ban revokes sessions: the ban event carries the count', async () => {
    const { env, user, before } = await setUp(1);
    await t.server(env).post(`/users/${user.id}/ban`);
    expect((await since(env, before)).map((e) => e.action)).toEqual(['user.banned']);
  });
});

describe("Gatehouse's own audit trail: secret keys", () => {
  it('records the first key of a new environment and every key the admin API issues or revokes, by id only', async () => {
    const env = await t.given.environment();
    const firstKey = await firstKeyId(env);
    const issued = await t.admin.post(`/environments/${env.id}/secret-keys`);
    const { id: keyId, secretKey } = issued.json();
    expect((await t.admin.delete(`/secret-keys/${keyId}`)).statusCode).toBe(204);
    expect((await t.admin.delete(`/secret-keys/${keyId}`)).statusCode).toBe(204);

    const byOperator = { actor: { type: 'system', id: null, impersonatorId: null }, producer: { type: 'gatehouse', via: 'admin_api' } };
    const events = await log(env);
    expect(events).toEqual([
      expect.objectContaining({ action: 'secret_key.created', sequence: 1, ...byOperator, targets: [{ type: 'secret_key', id: firstKey }] }),
      expect.objectContaining({ action: 'secret_key.created', sequence: 2, ...byOperator, targets: [{ type: 'secret_key', id: keyId }] }),
      expect.objectContaining({ action: 'secret_key.revoked', sequence: 3, ...byOperator, targets: [{ type: 'secret_key', id: keyId }] }),
    ]);
    expect(JSON.stringify(events)).not.toContain(secretKey);
    expect(JSON.stringify(events)).not.toContain(env.secretKey);
  });

  it('records keys issued and revoked through the CLI as the system via cli', async () => {
    const env = await t.given.environment();
    const environments = createEnvironmentsService({ db: t.db, clock: t.clock, defaultFrontendPort: 3000 });
    const key = await environments.createSecretKey(env.id, systemCaller('cli'));
    await environments.revokeSecretKey(key.id, systemCaller('cli'));
    expect((await log(env)).slice(1)).toEqual([
      expect.objectContaining({ action: 'secret_key.created', actor: { type: 'system', id: null, impersonatorId: null }, producer: { type: 'gatehouse', via: 'cli' } }),
      expect.objectContaining({ action: 'secret_key.revoked', producer: { type: 'gatehouse', via: 'cli' }, targets: [{ type: 'secret_key', id: key.id }] }),
    ]);
  });
});

describe('recordOwnEvent', () => {
  it("shares the environment's sequence with appended events", async () => {
    const env = await t.given.environment();
    const user = await t.given.user(env);
    await append(t, env, eventBody(t));
    await t.server(env).post(`/users/${user.id}/ban`);
    await append(t, env, eventBody(t));
    expect((await log(env)).map((e) => [e.sequence, e.action])).toEqual([
      [1, 'secret_key.created'], [2, 'user.created'], [3, 'document.shared'], [4, 'user.banned'], [5, 'document.shared'],
    ]);
  });

  it('rolls back with the transaction it is part of, leaving no event and no gap in the sequence', async () => {
    const env = await t.given.environment();
    const by = systemCaller('cli');
    await expect(inTransaction(t.db, async (trx) => {
      await recordOwnEvent(trx, env.id, { action: 'invitation.created', ...by, targets: [{ type: 'invitation', id: 'inv_1' }] }, t.clock.now());
      throw new Error('the change failed');
    })).rejects.toThrow('the change failed');
    await inTransaction(t.db, (trx) =>
      recordOwnEvent(trx, env.id, { action: 'invitation.revoked', ...by, targets: [{ type: 'invitation', id: 'inv_2' }], metadata: { n: 1 } }, t.clock.now()));

    expect((await log(env)).map((e) => [e.sequence, e.action])).toEqual([[1, 'secret_key.created'], [2, 'invitation.revoked']]);
  });
});

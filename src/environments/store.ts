import { sql } from 'kysely';
import { uuidv7 } from 'uuidv7';
import type { Db } from '../platform/db/database.js';
import { isUniqueViolation, jsonb } from '../platform/db/database.js';
import type { EnvironmentRow } from '../platform/db/tables.js';
import type { JsonObject } from '../platform/json.js';
import { resolveSettings, type EnvironmentSettings } from './settings.js';

export interface EnvironmentRecord {
  id: string; name: string; frontendHost: string; settings: EnvironmentSettings; overrides: JsonObject;
  allowedOrigins: string[]; createdAt: string;
  /** What a reserved environment is for ('operators'); null for a customer's environment. */
  reserved: string | null;
}

export function createEnvironmentsStore(db: Db) {
  return {
        /** Undefined when the frontend host is taken (no error, so it also works inside a transaction). */
    insert: (values: { name: string; frontendHost: string; overrides: JsonObject; allowedOrigins?: string[]; reserved?: string }, now: Date) =>
      db.insertInto('environments').values({
        id: uuidv7(), name: values.name, frontend_host: values.frontendHost.toLowerCase(), reserved: values.reserved ?? null,
        settings: jsonb(values.overrides), allowed_origins: values.allowedOrigins ?? [], created_at: now, updated_at: now,
      }).onConflict((oc) => oc.expression(sql`lower(frontend_host)`).doNothing())
        .returningAll().executeTakeFirst().then((row) => row && toEnvironment(row)),
    find: (id: string) =>
      db.selectFrom('environments').selectAll().where('id', '=', id).executeTakeFirst().then((r) => r && toEnvironment(r)),
    /** The row, locked until the transaction ends (read-merge-write of settings). */
    findForUpdate: (id: string) =>
      db.selectFrom('environments').selectAll().where('id', '=', id).forUpdate().executeTakeFirst().then((r) => r && toEnvironment(r)),
    /** A reserved environment serves no frontend host. */
    findByHost: (host: string) =>
      db.selectFrom('environments').selectAll().where((eb) => eb(eb.fn('lower', ['frontend_host']), '=', host.toLowerCase()))
        .where('reserved', 'is', null).executeTakeFirst().then((r) => r && toEnvironment(r)),
    findReserved: (purpose: string) =>
      db.selectFrom('environments').selectAll().where('reserved', '=', purpose).executeTakeFirst().then((r) => r && toEnvironment(r)),
    /** The customers' environments; reserved ones are not listed. */
    list: () => db.selectFrom('environments').selectAll().where('reserved', 'is', null).orderBy('id').execute().then((rows) => rows.map(toEnvironment)),
    /** Environments that set an audit retention (the default, null, keeps events for good). */
    listAuditRetentions: () =>
      db.selectFrom('environments').select(['id', sql<number>`(settings->>'auditRetentionDays')::integer`.as('days')])
        .where(sql<boolean>`jsonb_typeof(settings->'auditRetentionDays') = 'number'`).orderBy('id').execute()
        .then((rows) => rows.map((row) => ({ environmentId: row.id, retentionDays: row.days }))),
    /** The customers' environments (an operator created before the first start must not stop `development` from being made). */
    count: () => db.selectFrom('environments').select((eb) => eb.fn.countAll<number>().as('n')).where('reserved', 'is', null).executeTakeFirstOrThrow().then((r) => Number(r.n)),
    /** Undefined when no such environment; 'host_taken' when the new host belongs to another one. */
    async update(id: string, values: { name?: string; frontendHost?: string; overrides?: JsonObject }, now: Date) {
      try {
        const row = await db.updateTable('environments').set({
          ...(values.name !== undefined && { name: values.name }),
          ...(values.frontendHost !== undefined && { frontend_host: values.frontendHost.toLowerCase() }),
          ...(values.overrides !== undefined && { settings: jsonb(values.overrides) }),
          updated_at: now,
        }).where('id', '=', id).returningAll().executeTakeFirst();
        return row && toEnvironment(row);
      } catch (err) {
        if (isUniqueViolation(err, 'environments_frontend_host_key')) return 'host_taken' as const;
        throw err;
      }
    },
    setAllowedOrigins: (id: string, origins: string[], now: Date) =>
      db.updateTable('environments').set({ allowed_origins: origins, updated_at: now }).where('id', '=', id)
        .returning('allowed_origins').executeTakeFirst().then((r) => r?.allowed_origins),
  };
}

const toEnvironment = (row: EnvironmentRow): EnvironmentRecord => ({
  id: row.id, name: row.name, frontendHost: row.frontend_host, settings: resolveSettings(row.settings),
  overrides: row.settings, allowedOrigins: row.allowed_origins, createdAt: row.created_at.toISOString(), reserved: row.reserved,
});

export function createSecretKeysStore(db: Db) {
  return {
    insert: (environmentId: string, keyHash: Buffer, hint: string, now: Date) =>
      db.insertInto('secret_keys').values({ environment_id: environmentId, id: uuidv7(), key_hash: keyHash, hint, created_at: now })
        .returning(['id', 'environment_id']).executeTakeFirstOrThrow(),
    findActiveByHash: (keyHash: Buffer) =>
      db.selectFrom('secret_keys').select(['id', 'environment_id']).where('key_hash', '=', keyHash)
        .where('revoked_at', 'is', null).executeTakeFirst(),
    /** Revokes a key that is not revoked yet; undefined when there is no such key or it was revoked before. */
    revoke: (keyId: string, now: Date) =>
      db.updateTable('secret_keys').set({ revoked_at: now })
        .where('id', '=', keyId).where('revoked_at', 'is', null).returning(['id', 'environment_id']).executeTakeFirst(),
    find: (keyId: string) =>
      db.selectFrom('secret_keys').select(['id', 'environment_id']).where('id', '=', keyId).executeTakeFirst(),
    /** The environment's keys, newest first, revoked ones too; never their hashes. */
    listByEnvironment: (environmentId: string) =>
      db.selectFrom('secret_keys').select(['id', 'hint', 'created_at', 'revoked_at']).where('environment_id', '=', environmentId)
        .orderBy('id', 'desc').execute(),
  };
}

import { sql, type Insertable, type Updateable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { deleteInBatches } from '../platform/db/batches.js';
import { jsonb, type Db } from '../platform/db/database.js';
import type { SsoConnectionRow } from './tables.js';

export type ConnectionRecord = SsoConnectionRow;
export type ConnectionValues = Omit<Insertable<SsoConnectionRow>, 'environment_id' | 'id' | 'organization_id' | 'created_at' | 'updated_at'>;
export type ConnectionChanges = Omit<Updateable<SsoConnectionRow>, 'environment_id' | 'id' | 'organization_id' | 'type' | 'created_at'>;

export interface NewRequest { keyHash: Buffer; connectionId: string; browserHash: Buffer; redirectUrl: string; secretsSealed: Buffer | null; expiresAt: Date }

/** A user's email domain, as the enforcement query compares it with verified domains. */
const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/**
 * Whether an enabled, enforced connection covers the email's verified domain, as a condition another statement
 * reads (the password sign-in's, so the refusal costs no round trip of its own).
 */
export const enforcedConnectionCovers = (environmentId: string, email: string) => sql<boolean>`exists (
  select from sso_connections c
  join organization_domains d on d.environment_id = c.environment_id and d.organization_id = c.organization_id
  where c.environment_id = ${environmentId}::uuid and c.enabled and c.enforced and d.domain = ${domainOf(email)} and d.verified_at is not null)`;

export function createSsoStore(db: Db) {
  const connections = (environmentId: string) => db.selectFrom('sso_connections').selectAll().where('environment_id', '=', environmentId);
  /** The enabled connections of organizations that verified the email's domain. */
  const byVerifiedDomain = (environmentId: string, email: string) =>
    db.selectFrom('sso_connections as c')
      .innerJoin('organization_domains as d', (join) => join.onRef('d.environment_id', '=', 'c.environment_id').onRef('d.organization_id', '=', 'c.organization_id'))
      .selectAll('c')
      .where('c.environment_id', '=', environmentId).where('c.enabled', '=', true)
      .where('d.domain', '=', domainOf(email)).where('d.verified_at', 'is not', null);

  return {
    insertConnection: (environmentId: string, organizationId: string, values: ConnectionValues, now: Date) =>
      db.insertInto('sso_connections').values({
        ...values, group_roles: jsonb(values.group_roles ?? {}), environment_id: environmentId, id: uuidv7(), organization_id: organizationId, created_at: now, updated_at: now,
      }).returningAll().executeTakeFirstOrThrow(),
    findConnection: (environmentId: string, organizationId: string, id: string) =>
      connections(environmentId).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst(),
    /** A connection by its id alone, as the sign-in routes name it. */
    findById: (environmentId: string, id: string) => connections(environmentId).where('id', '=', id).executeTakeFirst(),
    listConnections: (environmentId: string, organizationId: string) =>
      connections(environmentId).where('organization_id', '=', organizationId).orderBy('id').execute(),
    /** The organization's first enabled connection (the oldest), the one its sign-in by email goes to. */
    firstEnabled: (environmentId: string, organizationId: string) =>
      connections(environmentId).where('organization_id', '=', organizationId).where('enabled', '=', true).orderBy('id').limit(1).executeTakeFirst(),
    findByEmailDomain: (environmentId: string, email: string) => byVerifiedDomain(environmentId, email).orderBy('c.id').limit(1).executeTakeFirst(),
    /** Whether the organization verified the email's domain: the domains its IdP may speak for. */
    isEnforcedFor: async (environmentId: string, email: string) =>
      (await sql<{ enforced: boolean }>`select ${enforcedConnectionCovers(environmentId, email)} as enforced`.execute(db)).rows[0]!.enforced,
    updateConnection: (environmentId: string, organizationId: string, id: string, changes: ConnectionChanges, now: Date) =>
      db.updateTable('sso_connections')
        .set({ ...changes, ...(changes.group_roles !== undefined && { group_roles: jsonb(changes.group_roles) }), updated_at: now })
        .where('environment_id', '=', environmentId).where('organization_id', '=', organizationId).where('id', '=', id)
        .returningAll().executeTakeFirst(),
    deleteConnection: (environmentId: string, organizationId: string, id: string) =>
      db.deleteFrom('sso_connections').where('environment_id', '=', environmentId).where('organization_id', '=', organizationId).where('id', '=', id)
        .returningAll().executeTakeFirst(),

    insertRequest: (environmentId: string, request: NewRequest, now: Date) =>
      db.insertInto('sso_requests').values({
        environment_id: environmentId, key_hash: request.keyHash, connection_id: request.connectionId, browser_hash: request.browserHash,
        redirect_url: request.redirectUrl, secrets_sealed: request.secretsSealed, created_at: now, expires_at: request.expiresAt,
      }).execute(),
    /** Whether a live request has this key (SAML's InResponseTo check, before the response is accepted). */
    hasLiveRequest: async (environmentId: string, keyHash: Buffer, now: Date) =>
      (await db.selectFrom('sso_requests').select('connection_id').where('environment_id', '=', environmentId)
        .where('key_hash', '=', keyHash).where('expires_at', '>', now).executeTakeFirst()) !== undefined,
    /** Uses the request up: answered once, whatever races it, and only while it lives. */
    consumeRequest: (environmentId: string, keyHash: Buffer, now: Date) =>
      db.deleteFrom('sso_requests').where('environment_id', '=', environmentId).where('key_hash', '=', keyHash).where('expires_at', '>', now)
        .returningAll().executeTakeFirst(),
    /** Records an accepted assertion; false when it was accepted before (a replay). */
    async useAssertion(environmentId: string, connectionId: string, assertionId: string, expiresAt: Date) {
      const inserted = await db.insertInto('sso_used_assertions')
        .values({ environment_id: environmentId, connection_id: connectionId, assertion_id: assertionId, expires_at: expiresAt })
        .onConflict((oc) => oc.doNothing()).executeTakeFirst();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
    },

    findIdentity: (environmentId: string, connectionId: string, subject: string) =>
      db.selectFrom('sso_identities').selectAll().where('environment_id', '=', environmentId).where('connection_id', '=', connectionId)
        .where('subject', '=', subject).executeTakeFirst(),
    insertIdentity: (environmentId: string, connectionId: string, subject: string, userId: string, now: Date) =>
      db.insertInto('sso_identities').values({
        environment_id: environmentId, connection_id: connectionId, subject, user_id: userId, created_at: now, last_sign_in_at: now,
      }).execute(),
    recordIdentitySignIn: (environmentId: string, connectionId: string, subject: string, now: Date) =>
      db.updateTable('sso_identities').set({ last_sign_in_at: now }).where('environment_id', '=', environmentId)
        .where('connection_id', '=', connectionId).where('subject', '=', subject).execute(),
    deleteIdentity: (environmentId: string, connectionId: string, subject: string) =>
      db.deleteFrom('sso_identities').where('environment_id', '=', environmentId).where('connection_id', '=', connectionId)
        .where('subject', '=', subject).execute(),
    deleteIdentitiesOfUser: (environmentId: string, userId: string) =>
      db.deleteFrom('sso_identities').where('environment_id', '=', environmentId).where('user_id', '=', userId).execute(),

    pruneExpired: async (now: Date) =>
      await deleteInBatches(db, 'sso_requests', sql<boolean>`expires_at < ${now}::timestamptz`)
      + await deleteInBatches(db, 'sso_used_assertions', sql<boolean>`expires_at < ${now}::timestamptz`),
  };
}

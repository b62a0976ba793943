import { sql, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { deleteInBatches } from '../platform/db/batches.js';
import type { Db } from '../platform/db/database.js';
import type { OAuthProviderRow, UserIdentityRow } from '../platform/db/tables.js';
import type { ProviderType } from './schemas.js';

export type ProviderRecord = Selectable<OAuthProviderRow> & { type: ProviderType };

export interface ProviderConfig {
  type: ProviderType; name: string; clientId: string; clientSecretSealed: Buffer;
  issuer: string | null; authorizationUrl: string | null; tokenUrl: string | null; userInfoUrl: string | null;
  scopes: string[]; enabled: boolean;
}

export interface NewState {
  stateHash: Buffer; providerId: string; browserHash: Buffer; secretsSealed: Buffer; redirectUrl: string; expiresAt: Date;
}

export interface NewIdentity { userId: string; providerId: string; subject: string; email: string | null; emailVerified: boolean }
export type IdentityRecord = Selectable<UserIdentityRow>;

/** The environment's external providers, with their sealed client secrets. */
export function createProvidersStore(db: Db) {
  const providers = (environmentId: string) => db.selectFrom('oauth_providers').selectAll().where('environment_id', '=', environmentId);
  return {
    /** Creates or replaces the provider; `created_at` stays that of the first version. */
    upsert: (environmentId: string, id: string, config: ProviderConfig, now: Date) => {
      const values = {
        type: config.type, name: config.name, client_id: config.clientId, client_secret_sealed: config.clientSecretSealed,
        issuer: config.issuer, authorization_url: config.authorizationUrl, token_url: config.tokenUrl, user_info_url: config.userInfoUrl,
        scopes: config.scopes, enabled: config.enabled, updated_at: now,
      };
      return db.insertInto('oauth_providers').values({ environment_id: environmentId, id, ...values, created_at: now })
        .onConflict((oc) => oc.columns(['environment_id', 'id']).doUpdateSet(values))
        .returningAll().executeTakeFirstOrThrow() as Promise<ProviderRecord>;
    },
    find: (environmentId: string, id: string) =>
      providers(environmentId).where('id', '=', id).executeTakeFirst() as Promise<ProviderRecord | undefined>,
    list: (environmentId: string) => providers(environmentId).orderBy('id').execute() as Promise<ProviderRecord[]>,
    listEnabled: (environmentId: string) =>
      db.selectFrom('oauth_providers').select(['id', 'name', 'type']).where('environment_id', '=', environmentId)
        .where('enabled', '=', true).orderBy('id').execute(),
    delete: (environmentId: string, id: string) =>
      db.deleteFrom('oauth_providers').where('environment_id', '=', environmentId).where('id', '=', id)
        .executeTakeFirst().then((r) => r.numDeletedRows > 0n),
  };
}

/** Authorizations in flight: each state works once, before it expires. */
export function createStatesStore(db: Db) {
  return {
    insert: (environmentId: string, state: NewState, now: Date) =>
      db.insertInto('oauth_states').values({
        environment_id: environmentId, state_hash: state.stateHash, provider_id: state.providerId, browser_hash: state.browserHash,
        secrets_sealed: state.secretsSealed, redirect_url: state.redirectUrl, created_at: now, expires_at: state.expiresAt, used_at: null,
      }).execute(),
    /** Uses the state up in one statement, so of two callbacks with it (concurrent or not) one gets it. */
    consume: (environmentId: string, stateHash: Buffer, now: Date) =>
      db.updateTable('oauth_states').set({ used_at: now })
        .where('environment_id', '=', environmentId).where('state_hash', '=', stateHash)
        .where('used_at', 'is', null).where('expires_at', '>', now)
        .returning(['provider_id', 'browser_hash', 'secrets_sealed', 'redirect_url']).executeTakeFirst(),
    deleteExpired: (before: Date) => deleteInBatches(db, 'oauth_states', sql<boolean>`expires_at < ${before}::timestamptz`),
  };
}

/** Users' accounts at external providers. */
export function createIdentitiesStore(db: Db) {
  const identities = (environmentId: string) => db.selectFrom('user_identities').selectAll().where('environment_id', '=', environmentId);
  return {
    findBySubject: (environmentId: string, providerId: string, subject: string) =>
      identities(environmentId).where('provider_id', '=', providerId).where('subject', '=', subject).executeTakeFirst(),
    listForUser: (environmentId: string, userId: string) =>
      identities(environmentId).where('user_id', '=', userId).orderBy('id').execute(),
    insert: (environmentId: string, identity: NewIdentity, now: Date) =>
      db.insertInto('user_identities').values({
        environment_id: environmentId, id: uuidv7(), user_id: identity.userId, provider_id: identity.providerId, subject: identity.subject,
        email: identity.email, email_verified: identity.emailVerified, created_at: now, last_sign_in_at: now,
      }).returningAll().executeTakeFirstOrThrow(),
    /** A sign-in through the identity: what the provider says of the email now, and when. */
    recordSignIn: (environmentId: string, id: string, email: string | null, emailVerified: boolean, now: Date) =>
      db.updateTable('user_identities').set({ email, email_verified: emailVerified, last_sign_in_at: now })
        .where('environment_id', '=', environmentId).where('id', '=', id).execute(),
    /** An identity left behind by a deleted user: the next sign-in with it starts over. */
    deleteOne: (environmentId: string, id: string) =>
      db.deleteFrom('user_identities').where('environment_id', '=', environmentId).where('id', '=', id).execute(),
    /** Unlinks one identity of the user; undefined when the user has no such identity. */
    deleteForUser: (environmentId: string, userId: string, id: string) =>
      db.deleteFrom('user_identities').where('environment_id', '=', environmentId).where('user_id', '=', userId).where('id', '=', id)
        .returningAll().executeTakeFirst(),
    /** Erasure: every identity of the user. */
    deleteAllForUser: (environmentId: string, userId: string) =>
      db.deleteFrom('user_identities').where('environment_id', '=', environmentId).where('user_id', '=', userId)
        .executeTakeFirst().then((r) => Number(r.numDeletedRows)),
    countForUser: (environmentId: string, userId: string) =>
      identities(environmentId).clearSelect().select(sql<number>`count(*)::int`.as('n')).where('user_id', '=', userId)
        .executeTakeFirstOrThrow().then((r) => r.n),
  };
}

import { sql } from 'kysely';
import { jsonb, type Db } from '../platform/db/database.js';
import type { JsonObject } from '../platform/json.js';

/**
 * The reads of an export: what Gatehouse keeps about one user, in the archive's words. Each statement
 * filters on the environment and goes through an index on the user (or the user's email), so an export
 * costs the user's own rows, whatever the size of the environment. Never a password hash, a token hash,
 * a code, or private metadata (the customer's, never shown on the client plane).
 */
export function createExportStore(db: Db) {
  const rowsOf = <T = JsonObject>(query: ReturnType<typeof sql<T>>) => query.execute(db).then((r) => r.rows);
  return {
    user: (environmentId: string, userId: string) => rowsOf(sql<JsonObject>`
      select id, email, email_verified_at as "emailVerifiedAt", name, first_name as "firstName", last_name as "lastName", locale, status,
        registration_state as "registrationState", public_metadata as "publicMetadata", unsafe_metadata as "unsafeMetadata",
        created_at as "createdAt", updated_at as "updatedAt", deleted_at as "deletedAt"
      from users where environment_id = ${environmentId}::uuid and id = ${userId}::uuid`).then((rows) => rows[0] ?? null),
    /** Every email of the user (the primary's copy on the user row, and each address), which invitations are addressed to. */
    emailsOf: (environmentId: string, userId: string) => rowsOf(sql<{ email: string }>`
      select email from users where environment_id = ${environmentId}::uuid and id = ${userId}::uuid and email is not null
      union select email from email_addresses where environment_id = ${environmentId}::uuid and user_id = ${userId}::uuid`)
      .then((rows) => rows.map((row) => row.email)),
    /** Every address, primary first; never the hash of a code mailed to prove one. */
    emailAddresses: (environmentId: string, userId: string) => rowsOf(sql<JsonObject>`
      select id, email, is_primary as "isPrimary", verified_at as "verifiedAt", released_at as "releasedAt", created_at as "createdAt"
      from email_addresses where environment_id = ${environmentId}::uuid and user_id = ${userId}::uuid order by is_primary desc, email`),
    /** The second factors, never their secrets, and how many backup codes are left (never the codes or their hashes). */
    secondFactors: (environmentId: string, userId: string) => rowsOf(sql<JsonObject>`
      select f.id, f.type, f.name, f.created_at as "createdAt", f.confirmed_at as "confirmedAt", f.last_used_at as "lastUsedAt",
        (select count(*)::int from mfa_backup_codes b where b.environment_id = f.environment_id and b.user_id = f.user_id and b.used_at is null) as "backupCodesRemaining"
      from mfa_factors f where f.environment_id = ${environmentId}::uuid and f.user_id = ${userId}::uuid and f.confirmed_at is not null order by f.id`),
    /** The passkeys: their names, kinds and dates; never the public key or credential id (they identify the authenticator). */
    passkeys: (environmentId: string, userId: string) => rowsOf(sql<JsonObject>`
      select id, name, device_type as "deviceType", backed_up as "backedUp", rp_id as "rpId", created_at as "createdAt", last_used_at as "lastUsedAt"
      from passkeys where environment_id = ${environmentId}::uuid and user_id = ${userId}::uuid order by id`),
    sessions: (environmentId: string, userId: string) => rowsOf(sql<JsonObject>`
      select id, created_at as "createdAt", authenticated_at as "authenticatedAt", amr, last_active_at as "lastActiveAt", expires_at as "expiresAt", revoked_at as "revokedAt",
        ip_address as "ipAddress", user_agent as "userAgent", actor
      from sessions where environment_id = ${environmentId}::uuid and user_id = ${userId}::uuid order by id`),
    identities: (environmentId: string, userId: string) => rowsOf(sql<JsonObject>`
      select i.id, p.name as provider, i.subject, i.email, i.email_verified as "emailVerified", i.created_at as "createdAt", i.last_sign_in_at as "lastSignInAt"
      from user_identities i left join oauth_providers p on p.environment_id = i.environment_id and p.id = i.provider_id
      where i.environment_id = ${environmentId}::uuid and i.user_id = ${userId}::uuid order by i.id`),
    memberships: (environmentId: string, userId: string) => rowsOf(sql<JsonObject>`
      select m.organization_id as "organizationId", o.name as "organizationName", m.role, m.role_name as "roleName",
        m.public_metadata as "publicMetadata", m.created_at as "createdAt"
      from organization_memberships m join organizations o on o.environment_id = m.environment_id and o.id = m.organization_id
      where m.environment_id = ${environmentId}::uuid and m.user_id = ${userId}::uuid order by m.organization_id`),
    invitations: (environmentId: string, userId: string, emails: string[]) => rowsOf(sql<JsonObject>`
      select id, email, status, public_metadata as "publicMetadata", created_at as "createdAt", expires_at as "expiresAt", accepted_at as "acceptedAt", revoked_at as "revokedAt"
      from invitations where environment_id = ${environmentId}::uuid and (email = any(${emails}::text[]) or accepted_user_id = ${userId}::uuid) order by id`),
    organizationInvitations: (environmentId: string, userId: string, emails: string[]) => rowsOf(sql<JsonObject>`
      select id, organization_id as "organizationId", email, role, status, inviter_user_id as "inviterUserId", created_at as "createdAt",
        expires_at as "expiresAt", accepted_at as "acceptedAt", revoked_at as "revokedAt"
      from organization_invitations where environment_id = ${environmentId}::uuid and (email = any(${emails}::text[]) or accepted_user_id = ${userId}::uuid) order by id`),
    /** Events whose actor is the user or whose targets name the user: both indexes, OR-ed as bitmaps. */
    auditEvents: (environmentId: string, userId: string) => rowsOf(sql<JsonObject>`
      select id, sequence, action, result, occurred_at as "occurredAt", recorded_at as "recordedAt",
        jsonb_build_object('type', actor_type, 'id', actor_id, 'impersonatorId', actor_impersonator_id) as actor, targets,
        jsonb_build_object('ipAddress', ip_address, 'userAgent', user_agent) as context, producer, metadata
      from audit_events
      where environment_id = ${environmentId}::uuid
        and (actor_id = ${userId}::uuid or targets @> ${jsonb([{ type: 'user', id: userId }])}::jsonb)
      order by sequence`),
    dataRequests: (environmentId: string, userId: string) => rowsOf(sql<JsonObject>`
      select id, type, status, created_at as "createdAt", completes_at as "completesAt", ready_at as "readyAt", expires_at as "expiresAt",
        completed_at as "completedAt", cancelled_at as "cancelledAt"
      from data_requests where environment_id = ${environmentId}::uuid and user_id = ${userId}::uuid order by id`),
  };
}
export type ExportStore = ReturnType<typeof createExportStore>;

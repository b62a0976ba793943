import { sql, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import type { Db } from '../platform/db/database.js';
import type { InvitationStatus, OrganizationInvitationRow } from '../platform/db/tables.js';
import { toPage } from '../platform/http/pagination.js';
import type { OrganizationPageQuery } from '../organizations/schemas.js';
import type { OrganizationInvitation } from './schemas.js';

export interface NewOrganizationInvitation {
  organizationId: string; email: string; role: string; tokenHash: Buffer; inviterUserId: string | null; expiresAt: Date;
}

/** A PENDING row past its expiry reads as EXPIRED everywhere, whether or not the sweep stored it yet. */
const effectiveStatus = (row: Pick<OrganizationInvitationRow, 'status' | 'expires_at'>, now: Date): InvitationStatus =>
  row.status === 'PENDING' && row.expires_at <= now ? 'EXPIRED' : row.status;

export function createOrganizationInvitationsStore(db: Db) {
  const live = (environmentId: string, now: Date) =>
    db.updateTable('organization_invitations').where('environment_id', '=', environmentId).where('status', '=', 'PENDING').where('expires_at', '>', now);

  return {
    /** Serialises invitations of one email to one organization until the transaction ends (re-invite races). */
    lockEmail: (environmentId: string, organizationId: string, email: string) =>
      sql`select pg_advisory_xact_lock(hashtextextended(${`org-invitation:${environmentId}:${organizationId}:${email}`}, 0))`.execute(db).then(() => undefined),
    /** Ends the email's pending invitation to the organization (a re-invite replaces it); answers the ids revoked. */
    revokePendingFor: (environmentId: string, organizationId: string, email: string, now: Date) =>
      live(environmentId, now).where('organization_id', '=', organizationId).where('email', '=', email)
        .set({ status: 'REVOKED', revoked_at: now, updated_at: now }).returning('id').execute().then((rows) => rows.map((r) => r.id)),
    /** Stores EXPIRED for the email's pending invitation past its expiry, so a new one may be pending. */
    expirePendingFor: (environmentId: string, organizationId: string, email: string, now: Date) =>
      db.updateTable('organization_invitations').where('environment_id', '=', environmentId).where('organization_id', '=', organizationId)
        .where('email', '=', email).where('status', '=', 'PENDING').where('expires_at', '<=', now)
        .set({ status: 'EXPIRED', updated_at: now }).execute(),
    insert: (environmentId: string, values: NewOrganizationInvitation, now: Date) =>
      db.insertInto('organization_invitations').values({
        environment_id: environmentId, id: uuidv7(), organization_id: values.organizationId, email: values.email, role: values.role,
        status: 'PENDING', token_hash: values.tokenHash, inviter_user_id: values.inviterUserId, expires_at: values.expiresAt,
        created_at: now, updated_at: now,
      }).returningAll().executeTakeFirstOrThrow().then((row) => toInvitation(row, now)),
    findByToken: (environmentId: string, tokenHash: Buffer, now: Date) =>
      db.selectFrom('organization_invitations').selectAll().where('environment_id', '=', environmentId).where('token_hash', '=', tokenHash)
        .executeTakeFirst().then((row) => row && toInvitation(row, now)),
    find: (environmentId: string, organizationId: string, id: string, now: Date) =>
      db.selectFrom('organization_invitations').selectAll()
        .where('environment_id', '=', environmentId).where('organization_id', '=', organizationId).where('id', '=', id)
        .executeTakeFirst().then((row) => row && toInvitation(row, now)),
    /** The organization's live pending invitations, in id order. */
    async listPending(environmentId: string, organizationId: string, page: OrganizationPageQuery, now: Date) {
      let query = db.selectFrom('organization_invitations').selectAll()
        .where('environment_id', '=', environmentId).where('organization_id', '=', organizationId)
        .where('status', '=', 'PENDING').where('expires_at', '>', now);
      if (page.cursor) query = query.where('id', '>', page.cursor);
      const rows = await query.orderBy('id').limit(page.limit + 1).execute();
      return toPage(rows.map((row) => toInvitation(row, now)), page.limit);
    },
    /** The one statement that redeems a token: only a live PENDING invitation matches, so it works once. */
    accept: (environmentId: string, tokenHash: Buffer, userId: string, now: Date) =>
      live(environmentId, now).where('token_hash', '=', tokenHash)
        .set({ status: 'ACCEPTED', accepted_at: now, accepted_user_id: userId, updated_at: now })
        .returningAll().executeTakeFirst().then((row) => row && toInvitation(row, now)),
    /**
     * A member's invitation lives only as long as the member: once the inviter is no longer in the
     * organization, its pending invitation is revoked when someone tries to use it.
     */
    revokeIfInviterLeft: (environmentId: string, tokenHash: Buffer, now: Date) => sql`
      update organization_invitations i set status = 'REVOKED', revoked_at = ${now}, updated_at = ${now}
      where i.environment_id = ${environmentId} and i.token_hash = ${tokenHash} and i.status = 'PENDING' and i.inviter_user_id is not null
        and not exists (select from organization_memberships m
          where m.environment_id = i.environment_id and m.organization_id = i.organization_id and m.user_id = i.inviter_user_id)`.execute(db),
    revoke: (environmentId: string, organizationId: string, id: string, now: Date) =>
      live(environmentId, now).where('organization_id', '=', organizationId).where('id', '=', id)
        .set({ status: 'REVOKED', revoked_at: now, updated_at: now })
        .returningAll().executeTakeFirst().then((row) => row && toInvitation(row, now)),
  };
}

const toInvitation = (row: Selectable<OrganizationInvitationRow>, now: Date): OrganizationInvitation => ({
  id: row.id, organizationId: row.organization_id, email: row.email, role: row.role, status: effectiveStatus(row, now),
  expiresAt: row.expires_at.toISOString(), createdAt: row.created_at.toISOString(),
});

import { sql, type Selectable } from 'kysely';
import { deleteInBatches } from '../platform/db/batches.js';
import { isForeignKeyViolation, jsonb, type Db } from '../platform/db/database.js';
import type { Cte } from '../platform/db/cte.js';
import type { SessionRow, UserLock } from '../platform/db/tables.js';
import { toPage } from '../platform/http/pagination.js';
import type { ListSessionsQuery, Session, SessionActor, StartedSession } from './schemas.js';

export interface NewSession {
  id: string; userId: string; tokenHash: Buffer; actor: SessionActor | null; ipAddress: string | null; userAgent: string | null;
  idleTimeoutSeconds: number; expiresAt: Date;
  /** When the user last proved who they are in this session (password, second factor); null for an emailed code or impersonation. */
  authenticatedAt: Date | null;
  /** How they proved it (RFC 8176 values), and whether the session may only enrol a second factor (policy "required"). */
  amr: string[]; enrolmentOnly: boolean;
}

const ACTIVE_MEMBERSHIP_KEY = 'sessions_active_membership';

/** A session is live while not revoked, before its absolute expiry and within its idle timeout. */
const isLive = (now: Date) =>
  sql<boolean>`revoked_at is null and expires_at > ${now} and last_active_at + idle_timeout_seconds * interval '1 second' > ${now}`;

/** The insert of a session for the users selected after it (aliased `u`), which only the caller's FROM names. */
const insertSessionOf = (session: NewSession, now: Date) => sql`
  insert into sessions (environment_id, id, user_id, token_hash, actor, ip_address, user_agent,
                        created_at, last_active_at, idle_timeout_seconds, expires_at, authenticated_at, amr, enrolment_only)
  select u.environment_id, ${session.id}::uuid, u.id, ${session.tokenHash}, ${session.actor === null ? null : jsonb(session.actor)}::jsonb,
         ${session.ipAddress}, ${session.userAgent}, ${now}::timestamptz, ${now}::timestamptz,
         ${session.idleTimeoutSeconds}::integer, ${session.expiresAt}::timestamptz, ${session.authenticatedAt}::timestamptz,
         ${session.amr}::text[], ${session.enrolmentOnly}::boolean`;

/**
 * A session for the user a CTE of the caller's statement locked (FOR SHARE or by updating it), inserted
 * only while that user is active: the row lock holds a concurrent ban or delete back until commit, and
 * one that committed first leaves nothing to insert. A user banned mid-sign-in never keeps a session.
 */
export const insertSessionAfter = (user: Cte<UserLock>, session: NewSession, now: Date) => sql<Selectable<SessionRow>>`
  ${insertSessionOf(session, now)}
  from ${user.from} u where u.status = 'active'
  returning *`;

export function createSessionsStore(db: Db) {
  return {
    /**
     * The live session for a token, only while its user is active, with its active organization's id, slug
     * and the user's role there (primary-key lookups in the same statement, so a JWT's claims cost no round trip).
     */
    findLiveByToken: (environmentId: string, tokenHash: Buffer, now: Date) =>
      db.selectFrom('sessions as s')
        .innerJoin('users as u', (join) => join.onRef('u.environment_id', '=', 's.environment_id').onRef('u.id', '=', 's.user_id'))
        .leftJoin('organization_memberships as m', (join) => join.onRef('m.environment_id', '=', 's.environment_id')
          .onRef('m.organization_id', '=', 's.active_organization_id').onRef('m.user_id', '=', 's.user_id'))
        .leftJoin('organizations as o', (join) => join.onRef('o.environment_id', '=', 'm.environment_id').onRef('o.id', '=', 'm.organization_id'))
        .select(['s.id', 's.user_id', 's.actor', 's.last_active_at', 's.idle_timeout_seconds', 's.authenticated_at', 's.amr', 's.enrolment_only', 'u.public_metadata'])
        .select(['o.id as organization_id', 'o.slug as organization_slug', 'm.role as organization_role'])
        .where('s.environment_id', '=', environmentId).where('s.token_hash', '=', tokenHash)
        .where('u.status', '=', 'active').where(isLive(now))
        .executeTakeFirst(),
    /** Whether the user's session is live and the user active (a token minted from it still speaks for it). */
    isLive: (environmentId: string, userId: string, sessionId: string, now: Date) =>
      db.selectFrom('sessions as s')
        .innerJoin('users as u', (join) => join.onRef('u.environment_id', '=', 's.environment_id').onRef('u.id', '=', 's.user_id'))
        .select('s.id').where('s.environment_id', '=', environmentId).where('s.id', '=', sessionId).where('s.user_id', '=', userId)
        .where('u.status', '=', 'active').where(isLive(now))
        .executeTakeFirst().then((row) => row !== undefined),
    touch: (environmentId: string, sessionId: string, now: Date) =>
      db.updateTable('sessions').set({ last_active_at: now })
        .where('environment_id', '=', environmentId).where('id', '=', sessionId).execute(),
    /** Revokes every live session of the user but `keep` (when given); answers how many it revoked. */
    revokeAllForUser: (environmentId: string, userId: string, now: Date, keep?: string) => {
      let query = db.updateTable('sessions').set({ revoked_at: now })
        .where('environment_id', '=', environmentId).where('user_id', '=', userId).where('revoked_at', 'is', null);
      if (keep) query = query.where('id', '<>', keep);
      return query.executeTakeFirst().then((r) => Number(r.numUpdatedRows));
    },
    /**
     * The user passed a second factor in this live session (enrolling one): recently authenticated, the
     * factor added to its amr, and no longer held to enrolment.
     */
    markSecondFactor: (environmentId: string, sessionId: string, now: Date) =>
      sql`update sessions set authenticated_at = ${now}::timestamptz, enrolment_only = false,
            amr = amr || array(select v from unnest(array['otp', 'mfa']) v where v <> all(amr))
          where environment_id = ${environmentId}::uuid and id = ${sessionId}::uuid and revoked_at is null`.execute(db),
    /** The user has a second factor now: none of their sessions is held to enrolment any more. */
    endEnrolmentOnly: (environmentId: string, userId: string) =>
      db.updateTable('sessions').set({ enrolment_only: false })
        .where('environment_id', '=', environmentId).where('user_id', '=', userId).where('enrolment_only', '=', true).execute(),
    /** The user proved who they are again in this live session (a password check). */
    markAuthenticated: (environmentId: string, sessionId: string, now: Date) =>
      db.updateTable('sessions').set({ authenticated_at: now })
        .where('environment_id', '=', environmentId).where('id', '=', sessionId).where('revoked_at', 'is', null).execute(),
    /**
     * Points the live session at the user's membership of the organization (null: none). Undefined when
     * nothing changed; 'not_a_member' when the user has no membership there (the foreign key refuses it).
     */
    async setActiveOrganization(environmentId: string, sessionId: string, organizationId: string | null, now: Date) {
      try {
        return await db.updateTable('sessions').set({ active_organization_id: organizationId })
          .where('environment_id', '=', environmentId).where('id', '=', sessionId).where(isLive(now))
          .where('active_organization_id', 'is distinct from', organizationId)
          .returning('id').executeTakeFirst();
      } catch (err) {
        if (isForeignKeyViolation(err, ACTIVE_MEMBERSHIP_KEY)) return 'not_a_member' as const;
        throw err;
      }
    },
    /** Erasure: every session of the user, live or ended (their IPs and user agents go with them). */
    deleteAllForUser: (environmentId: string, userId: string) =>
      db.deleteFrom('sessions').where('environment_id', '=', environmentId).where('user_id', '=', userId)
        .executeTakeFirst().then((r) => Number(r.numDeletedRows)),
    /** Revokes one session of one user that is not revoked yet; undefined when there is no such session. */
    revokeOne: (environmentId: string, userId: string, sessionId: string, now: Date) =>
      db.updateTable('sessions').set({ revoked_at: now })
        .where('environment_id', '=', environmentId).where('user_id', '=', userId).where('id', '=', sessionId)
        .where('revoked_at', 'is', null)
        .returningAll().executeTakeFirst().then((row) => row && toSession(row, now)),
    find: (environmentId: string, userId: string, sessionId: string, now: Date) =>
      db.selectFrom('sessions').selectAll()
        .where('environment_id', '=', environmentId).where('user_id', '=', userId).where('id', '=', sessionId)
        .executeTakeFirst().then((row) => row && toSession(row, now)),
    async listForUser(environmentId: string, userId: string, query: ListSessionsQuery, now: Date) {
      let q = db.selectFrom('sessions').selectAll().where('environment_id', '=', environmentId).where('user_id', '=', userId);
      if (query.status === 'active') q = q.where(isLive(now));
      if (query.status === 'revoked') q = q.where('revoked_at', 'is not', null);
      if (query.status === 'expired') q = q.where('revoked_at', 'is', null).where(sql<boolean>`not (${isLive(now)})`);
      if (query.cursor) q = q.where('id', '>', query.cursor);
      const rows = await q.orderBy('id').limit(query.limit + 1).execute();
      return toPage(rows.map((r) => toSession(r, now)), query.limit);
    },
    /**
     * Housekeeping, in every environment: sessions revoked, or past their absolute expiry, before the
     * cut-off (two index range scans). A session that ended by idling goes once its absolute expiry is
     * that old too.
     */
    deleteEndedBefore: async (cutoff: Date) =>
      await deleteInBatches(db, 'sessions', sql<boolean>`expires_at < ${cutoff}::timestamptz`)
      + await deleteInBatches(db, 'sessions', sql<boolean>`revoked_at < ${cutoff}::timestamptz`),
  };
}

export const toStarted = (row: Selectable<SessionRow>): StartedSession => ({
  id: row.id, userId: row.user_id, createdAt: row.created_at.toISOString(), expiresAt: row.expires_at.toISOString(), actor: row.actor as SessionActor | null,
  amr: row.amr, enrolmentOnly: row.enrolment_only,
});

function statusOf(row: Selectable<SessionRow>, now: Date): Session['status'] {
  if (row.revoked_at) return 'revoked';
  const idleEnd = row.last_active_at.getTime() + row.idle_timeout_seconds * 1000;
  return row.expires_at > now && idleEnd > now.getTime() ? 'active' : 'expired';
}

const toSession = (row: Selectable<SessionRow>, now: Date): Session => ({
  id: row.id, userId: row.user_id, status: statusOf(row, now), actor: row.actor as SessionActor | null, ipAddress: row.ip_address, userAgent: row.user_agent,
  createdAt: row.created_at.toISOString(), lastActiveAt: row.last_active_at.toISOString(),
  expiresAt: row.expires_at.toISOString(), revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null, amr: row.amr,
  activeOrganizationId: row.active_organization_id,
});

import { sql, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import type { Db } from '../platform/db/database.js';
import type { ImpersonationRow } from '../platform/db/tables.js';
import { toPage } from '../platform/http/pagination.js';
import type { CallerContext } from '../platform/caller.js';
import type { JsonObject } from '../platform/json.js';
import type { Impersonation, Impersonator, ListImpersonationsQuery } from './schemas.js';

export interface NewImpersonation {
  tokenHash: Buffer; impersonator: Impersonator; targetUserId: string; reason: string; landingUrl: string | null; month: string; expiresAt: Date;
}

export function createImpersonationStore(db: Db) {
  const byId = (environmentId: string, id: string) =>
    db.selectFrom('impersonations').selectAll().where('environment_id', '=', environmentId).where('id', '=', id);

  return {
    usedIn: (environmentId: string, month: string) =>
      db.selectFrom('impersonation_usage').select('used').where('environment_id', '=', environmentId).where('month', '=', month)
        .executeTakeFirst().then((row) => row?.used ?? 0),
    /**
     * Counts one mint of the month while fewer than `quota` are counted: one conditional upsert, so
     * concurrent mints in any number of processes never pass the quota. Undefined when it is spent. It
     * runs in the mint's transaction, after its token was inserted, and holds the month's row until commit.
     */
    countMint: (environmentId: string, month: string, quota: number) =>
      sql<{ used: number }>`
        insert into impersonation_usage (environment_id, month, used)
        select ${environmentId}::uuid, ${month}, 1 where ${quota > 0}
        on conflict (environment_id, month)
        do update set used = impersonation_usage.used + 1 where impersonation_usage.used < ${quota}
        returning used`.execute(db).then((r) => r.rows[0]?.used),
    /**
     * Writes the ledger row only while the target and a user actor are both active users of the environment,
     * so the mint's user checks and its write are one statement. Undefined when either is not. An operator
     * actor is not a user of the environment (their session proved them): only the target is checked.
     */
    insertForActiveUsers: (environmentId: string, values: NewImpersonation, now: Date) => {
      const byUser = values.impersonator.type === 'user';
      return sql<Selectable<ImpersonationRow>>`
        insert into impersonations (environment_id, id, token_hash, actor_user_id, actor_operator_id, target_user_id, reason, landing_url, month, created_at, expires_at)
        select t.environment_id, ${uuidv7()}::uuid, ${values.tokenHash}, ${byUser ? sql`a.id` : sql`null`}, ${byUser ? null : values.impersonator.id}::uuid,
               t.id, ${values.reason}, ${values.landingUrl}, ${values.month}, ${now}::timestamptz, ${values.expiresAt}::timestamptz
        from users t
        ${byUser ? sql`join users a on a.environment_id = t.environment_id and a.id = ${values.impersonator.id} and a.status = 'active'` : sql``}
        where t.environment_id = ${environmentId} and t.id = ${values.targetUserId} and t.status = 'active'
        returning *`.execute(db).then((r) => r.rows[0] && toImpersonation(r.rows[0], now));
    },
    /**
     * The one statement that redeems a token: only a live one (not redeemed, not revoked, not expired)
     * matches, so a token works once however many redeem it at the same moment. It names the session the
     * caller starts next in the same transaction, and answers the target's user row with it (as JSON, for
     * the session's answer). `withLanding` also requires a landing URL (the browser link redirects to it).
     */
    redeem: (environmentId: string, tokenHash: Buffer, sessionId: string, context: CallerContext, now: Date, withLanding: boolean) =>
      sql<Selectable<ImpersonationRow> & { target: JsonObject }>`
        with redeemed as (
          update impersonations
          set redeemed_at = ${now}::timestamptz, redeemed_ip = ${context.ipAddress}, redeemed_user_agent = ${context.userAgent}, session_id = ${sessionId}::uuid
          where environment_id = ${environmentId} and token_hash = ${tokenHash}
            and redeemed_at is null and revoked_at is null and expires_at > ${now}::timestamptz ${withLanding ? sql`and landing_url is not null` : sql``}
          returning *)
        select r.*, to_jsonb(u) - 'password_hash' as target
        from redeemed r join users u on u.environment_id = r.environment_id and u.id = r.target_user_id`.execute(db).then((r) => r.rows[0]),
    /** Whether a token could be redeemed now by POST (it is live), whatever its landing URL. */
    isLive: (environmentId: string, tokenHash: Buffer, now: Date) =>
      db.selectFrom('impersonations').select('id').where('environment_id', '=', environmentId).where('token_hash', '=', tokenHash)
        .where('redeemed_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now)
        .executeTakeFirst().then((row) => row !== undefined),
    /** Revokes an impersonation not revoked yet; undefined when there is none, or it was revoked already. */
    revoke: (environmentId: string, id: string, now: Date) =>
      db.updateTable('impersonations').set({ revoked_at: now })
        .where('environment_id', '=', environmentId).where('id', '=', id).where('revoked_at', 'is', null)
        .returningAll().executeTakeFirst(),
    find: (environmentId: string, id: string, now: Date) =>
      byId(environmentId, id).executeTakeFirst().then((row) => row && toImpersonation(row, now)),
    /** The ledger in id (mint) order, by any of month, actor and target; each filter has an index in id order. */
    async list(environmentId: string, query: ListImpersonationsQuery, now: Date) {
      let q = db.selectFrom('impersonations').selectAll().where('environment_id', '=', environmentId);
      if (query.month) q = q.where('month', '=', query.month);
      if (query.actorUserId) q = q.where('actor_user_id', '=', query.actorUserId);
      if (query.targetUserId) q = q.where('target_user_id', '=', query.targetUserId);
      if (query.cursor) q = q.where('id', '>', query.cursor);
      const rows = await q.orderBy('id').limit(query.limit + 1).execute();
      return toPage(rows.map((row) => toImpersonation(row, now)), query.limit);
    },
  };
}
export type ImpersonationStore = ReturnType<typeof createImpersonationStore>;

function statusOf(row: Selectable<ImpersonationRow>, now: Date): Impersonation['status'] {
  if (row.revoked_at) return 'revoked';
  if (row.redeemed_at) return 'redeemed';
  return row.expires_at > now ? 'pending' : 'expired';
}

export const toImpersonation = (row: Selectable<ImpersonationRow>, now: Date): Impersonation => ({
  id: row.id, actorUserId: row.actor_user_id, actorOperatorId: row.actor_operator_id, targetUserId: row.target_user_id, reason: row.reason, landingUrl: row.landing_url,
  status: statusOf(row, now), month: row.month, createdAt: row.created_at.toISOString(), expiresAt: row.expires_at.toISOString(),
  redemption: row.redeemed_at
    ? { redeemedAt: row.redeemed_at.toISOString(), ipAddress: row.redeemed_ip, userAgent: row.redeemed_user_agent, sessionId: row.session_id }
    : null,
  revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null,
});

import { sql, type ExpressionBuilder, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { SWEEP_BATCH_SIZE, untilDone } from '../platform/db/batches.js';
import type { Db } from '../platform/db/database.js';
import { containsPattern, jsonb } from '../platform/db/database.js';
import type { InvitationRow, Tables } from '../platform/db/tables.js';
import type { PageQuery } from '../platform/http/common-schemas.js';
import { toPage } from '../platform/http/pagination.js';
import type { JsonObject } from '../platform/json.js';
import type { Invitation, InvitationFilter, InvitationStatus, InvitationSummary } from './schemas.js';

export interface NewInvitation {
  email: string; tokenHash: Buffer; redirectUrl: string | null; expiresAt: Date;
  publicMetadata: JsonObject; privateMetadata: JsonObject;
}

export interface StoredInvitation { invitation: Invitation; redirectUrl: string | null }

type Eb = ExpressionBuilder<Tables, 'invitations'>;

// Lists never carry metadata, so they never read it either.
const SUMMARY_COLUMNS = ['id', 'environment_id', 'email', 'status', 'expires_at', 'created_at', 'accepted_at', 'revoked_at'] as const;
type SummaryRow = Pick<Selectable<InvitationRow>, (typeof SUMMARY_COLUMNS)[number]>;

/**
 * Statuses as callers see them: a stored PENDING past its expiry is EXPIRED. The stored status stays
 * an indexable `status in (...)`, and only PENDING rows are told apart by expires_at.
 */
function effectiveStatusIn(eb: Eb, statuses: InvitationStatus[], now: Date) {
  const wanted = new Set(statuses);
  const stored = new Set(wanted);
  if (wanted.has('EXPIRED')) stored.add('PENDING');
  const conditions = [eb('status', 'in', [...stored])];
  if (wanted.has('PENDING') && !wanted.has('EXPIRED')) conditions.push(eb.or([eb('status', '!=', 'PENDING'), eb('expires_at', '>', now)]));
  if (wanted.has('EXPIRED') && !wanted.has('PENDING')) conditions.push(eb.or([eb('status', '!=', 'PENDING'), eb('expires_at', '<=', now)]));
  return eb.and(conditions);
}

export function createInvitationsStore(db: Db) {
  const live = (environmentId: string, now: Date) =>
    db.updateTable('invitations').where('environment_id', '=', environmentId).where('status', '=', 'PENDING').where('expires_at', '>', now);
  const stored = (row: Selectable<InvitationRow> | undefined, now: Date): StoredInvitation | undefined =>
    row && { invitation: toInvitation(row, now), redirectUrl: row.redirect_url };

  return {
    /** Serialises invitation changes for one email until the transaction ends (re-invite races). */
    lockEmail: (environmentId: string, email: string) =>
      sql`select pg_advisory_xact_lock(hashtextextended(${`invitation:${environmentId}:${email}`}, 0))`.execute(db).then(() => undefined),
    /** Ends the email's pending invitation: REVOKED while live, EXPIRED once past its expiry. */
    retirePending: (environmentId: string, email: string, now: Date) =>
      db.updateTable('invitations').where('environment_id', '=', environmentId).where('email', '=', email).where('status', '=', 'PENDING')
        .set({
          status: sql`case when expires_at > ${now} then 'REVOKED' else 'EXPIRED' end`,
          revoked_at: sql`case when expires_at > ${now} then ${now}::timestamptz end`,
          updated_at: now,
        }).returning(['id', 'status']).execute(),
    insert: (environmentId: string, values: NewInvitation, now: Date) =>
      db.insertInto('invitations').values({
        environment_id: environmentId, id: uuidv7(), email: values.email, status: 'PENDING', token_hash: values.tokenHash,
        redirect_url: values.redirectUrl, public_metadata: jsonb(values.publicMetadata), private_metadata: jsonb(values.privateMetadata),
        expires_at: values.expiresAt, created_at: now, updated_at: now,
      }).returningAll().executeTakeFirstOrThrow().then((row) => toInvitation(row, now)),
    find: (environmentId: string, id: string, now: Date) =>
      db.selectFrom('invitations').selectAll().where('environment_id', '=', environmentId).where('id', '=', id)
        .executeTakeFirst().then((row) => stored(row, now)),
    findForUpdate: (environmentId: string, id: string, now: Date) =>
      db.selectFrom('invitations').selectAll().where('environment_id', '=', environmentId).where('id', '=', id)
        .forUpdate().executeTakeFirst().then((row) => stored(row, now)),
    findByToken: (environmentId: string, tokenHash: Buffer, now: Date) =>
      db.selectFrom('invitations').selectAll().where('environment_id', '=', environmentId).where('token_hash', '=', tokenHash)
        .executeTakeFirst().then((row) => stored(row, now)),
    async list(environmentId: string, filter: InvitationFilter, page: PageQuery, now: Date) {
      let query = db.selectFrom('invitations').select(SUMMARY_COLUMNS).where('environment_id', '=', environmentId);
      if (filter.statuses?.length) query = query.where((eb) => effectiveStatusIn(eb, filter.statuses!, now));
      if (filter.emailSearch) query = query.where(sql<boolean>`email like ${containsPattern(filter.emailSearch)} escape '\\'`);
      if (filter.publicMetadata) query = query.where(sql<boolean>`public_metadata @> ${jsonb(filter.publicMetadata)}::jsonb`);
      if (filter.privateMetadata) query = query.where(sql<boolean>`private_metadata @> ${jsonb(filter.privateMetadata)}::jsonb`);
      if (page.cursor) query = query.where('id', '>', page.cursor);
      const rows = await query.orderBy('id').limit(page.limit + 1).execute();
      return toPage(rows.map((row) => toSummary(row, now)), page.limit);
    },
    /** The one statement that redeems a token: only a live PENDING invitation matches, so it works once. */
    accept: (environmentId: string, tokenHash: Buffer, userId: string, now: Date) =>
      live(environmentId, now).where('token_hash', '=', tokenHash)
        .set({ status: 'ACCEPTED', accepted_at: now, accepted_user_id: userId, updated_at: now })
        .returningAll().executeTakeFirst().then((row) => row && toInvitation(row, now)),
    revoke: (environmentId: string, id: string, now: Date) =>
      live(environmentId, now).where('id', '=', id).set({ status: 'REVOKED', revoked_at: now, updated_at: now })
        .returningAll().executeTakeFirst().then((row) => row && toInvitation(row, now)),
    /** A new token for a live invitation (resend); the old link stops working. */
    replaceToken: (environmentId: string, id: string, tokenHash: Buffer, now: Date) =>
      live(environmentId, now).where('id', '=', id).set({ token_hash: tokenHash, updated_at: now })
        .returningAll().executeTakeFirst().then((row) => stored(row, now)),
    setMetadata: (environmentId: string, id: string, bags: Pick<Invitation, 'publicMetadata' | 'privateMetadata'>, now: Date) =>
      db.updateTable('invitations').where('environment_id', '=', environmentId).where('id', '=', id)
        .set({ public_metadata: jsonb(bags.publicMetadata), private_metadata: jsonb(bags.privateMetadata), updated_at: now })
        .returningAll().executeTakeFirstOrThrow().then((row) => toInvitation(row, now)),
    /** Housekeeping: stores EXPIRED for pending invitations past their expiry (reads never wait for this), a batch at a time. */
    expireOverdue: (now: Date) => untilDone(() =>
      sql`update invitations set status = 'EXPIRED', updated_at = ${now}::timestamptz
          where ctid = any(array(select ctid from invitations where status = 'PENDING' and expires_at <= ${now}::timestamptz limit ${SWEEP_BATCH_SIZE}))
            and status = 'PENDING' and expires_at <= ${now}::timestamptz`.execute(db).then((r) => Number(r.numAffectedRows ?? 0n))),
  };
}
export type InvitationsStore = ReturnType<typeof createInvitationsStore>;

const effectiveStatus = (row: SummaryRow, now: Date): InvitationStatus =>
  row.status === 'PENDING' && row.expires_at <= now ? 'EXPIRED' : row.status;

const toSummary = (row: SummaryRow, now: Date): InvitationSummary => ({
  id: row.id,
  environmentId: row.environment_id,
  email: row.email,
  status: effectiveStatus(row, now),
  expiresAt: row.expires_at.toISOString(),
  createdAt: row.created_at.toISOString(),
  acceptedAt: row.accepted_at?.toISOString() ?? null,
  revokedAt: row.revoked_at?.toISOString() ?? null,
});

const toInvitation = (row: Selectable<InvitationRow>, now: Date): Invitation => ({
  ...toSummary(row, now), publicMetadata: row.public_metadata, privateMetadata: row.private_metadata,
});

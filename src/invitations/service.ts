import { recordOwnEvent } from '../audit/service.js';
import { isAllowedRedirect, urlOrigin } from '../environments/origins.js';
import type { EnvironmentRecord, EnvironmentsService } from '../environments/service.js';
import { invitationSignUpUrl, mailBrand } from '../environments/settings.js';
import { userCaller, type Caller, type CallerContext } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { PageQuery } from '../platform/http/common-schemas.js';
import type { Locale } from '../platform/i18n/catalogue.js';
import type { Mailer } from '../platform/mail/mailer.js';
import { assertMetadataBudget, mergeBags } from '../platform/metadata.js';
import type { RateLimiter } from '../platform/rate-limit.js';
import { normalizeEmail } from '../users/accounts.js';
import { emailTaken } from '../users/errors.js';
import { invitationLink, invitationMail } from './email.js';
import {
  invitationNotFound, invitationNotPending, invitationRateLimited, redirectUrlNotAllowed, signUpUrlNotConfigured, tokenUnusable,
} from './errors.js';
import type { CreateInvitationBody, Invitation, InvitationFilter, InvitationSummary, MetadataPatchBody } from './schemas.js';
import { createInvitationsStore } from './store.js';

const invitationTarget = (id: string) => [{ type: 'invitation', id }];

/**
 * Accepts the invitation for the user about to sign up with it, in the caller's transaction: the single
 * statement that lets a token work once, then its record. Any later failure rolls it back to PENDING.
 */
export async function acceptInvitation(trx: Db, environmentId: string, tokenHash: Buffer, userId: string, context: CallerContext, now: Date) {
  const invitations = createInvitationsStore(trx);
  const accepted = await invitations.accept(environmentId, tokenHash, userId, now);
  // A concurrent redeem got there first (or the state changed since the read): say which state it is in now.
  if (!accepted) throw tokenUnusable((await invitations.findByToken(environmentId, tokenHash, now))?.invitation.status);
  await recordOwnEvent(trx, environmentId, {
    action: 'invitation.accepted', ...userCaller(userId, context), targets: invitationTarget(accepted.id), metadata: { userId },
  }, now);
  return accepted;
}

export interface InvitationsDeps {
  db: Db; clock: Clock; mailer: Mailer; limiter: RateLimiter;
  environments: Pick<EnvironmentsService, 'record'>;
  users: { findCredentials(environmentId: string, email: string): Promise<unknown> };
}

const DEFAULT_EXPIRES_IN_DAYS = 30;
const DAY_MS = 86_400_000;

const toSummary = ({ publicMetadata: _p, privateMetadata: _q, ...summary }: Invitation): InvitationSummary => summary;

/** Environment invitations: Server API management, the email, and sign-up from the token. */
export function createInvitationsService({ db, clock, mailer, limiter, environments, users }: InvitationsDeps) {
  const store = createInvitationsStore(db);

  /** Records a change in the audit trail; the last statement of the change's transaction (it holds the sequence lock). */
  const record = (trx: Db, environmentId: string, action: string, invitationId: string, by: Caller, metadata = {}) =>
    recordOwnEvent(trx, environmentId, { action, ...by, targets: invitationTarget(invitationId), metadata }, clock.now());

  function requireSignUpUrl(env: EnvironmentRecord): string {
    const url = invitationSignUpUrl(env);
    if (!url) throw signUpUrlNotConfigured();
    return url;
  }

  /** Every invitation mailed (created or resent) counts against the environment's hourly limit, across processes. */
  async function countAgainstHourlyLimit(env: EnvironmentRecord) {
    const hit = await limiter.hit(env.id, 'invitations', { max: env.settings.invitationRateLimitPerHour, windowSeconds: 3600 });
    if (!hit.allowed) throw invitationRateLimited(hit.retryAfterSeconds);
  }

  /** Queues the mail in the transaction that stores the token: the link goes out if and only if the token is stored. */
  async function mail(trx: Db, env: EnvironmentRecord, signUpUrl: string, token: string, invitation: Invitation, redirectUrl: string | null, locale: Locale) {
    const link = invitationLink(signUpUrl, token, redirectUrl);
    await mailer.send(env.id, invitationMail(invitation.email, mailBrand(env), locale, link, new Date(invitation.expiresAt)), trx);
  }

  async function existing(environmentId: string, invitationId: string) {
    const found = await store.find(environmentId, invitationId, clock.now());
    if (!found) throw invitationNotFound();
    return found;
  }

  /** After a conditional change matched nothing: missing, or no longer pending. */
  async function explainNotPending(environmentId: string, invitationId: string): Promise<never> {
    throw invitationNotPending((await existing(environmentId, invitationId)).invitation.status);
  }

  return {
    /**
     * Creates a PENDING invitation and mails its link. A re-invite of an email with a pending invitation
     * replaces it: the earlier one becomes REVOKED and its link stops working. The mail is in `locale`
     * (the inviting request's Accept-Language): the invitee has no account, so no language of their own yet.
     */
    async create(environmentId: string, body: CreateInvitationBody, by: Caller, locale: Locale = 'en'): Promise<InvitationSummary> {
      const env = await environments.record(environmentId);
      assertMetadataBudget(body.publicMetadata, body.privateMetadata);
      const signUpUrl = requireSignUpUrl(env);
      const redirectUrl = body.redirectUrl ?? null;
      if (redirectUrl && !isAllowedRedirect(redirectUrl, [...env.allowedOrigins, urlOrigin(signUpUrl)!])) throw redirectUrlNotAllowed();
      const email = normalizeEmail(body.email);
      if (await users.findCredentials(environmentId, email)) throw emailTaken();
      await countAgainstHourlyLimit(env);
      const token = randomToken('inv_');
      const now = clock.now();
      const invitation = await inTransaction(db, async (trx) => {
        const invitations = createInvitationsStore(trx);
        await invitations.lockEmail(environmentId, email);
        const retired = await invitations.retirePending(environmentId, email, now);
        const created = await invitations.insert(environmentId, {
          email, tokenHash: sha256(token), redirectUrl,
          expiresAt: new Date(now.getTime() + (body.expiresInDays ?? DEFAULT_EXPIRES_IN_DAYS) * DAY_MS),
          publicMetadata: body.publicMetadata, privateMetadata: body.privateMetadata,
        }, now);
        await mail(trx, env, signUpUrl, token, created, redirectUrl, locale);
        for (const replaced of retired.filter((r) => r.status === 'REVOKED')) {
          await record(trx, environmentId, 'invitation.revoked', replaced.id, by, { reason: 'replaced', replacedBy: created.id });
        }
        await record(trx, environmentId, 'invitation.created', created.id, by, { expiresAt: created.expiresAt });
        return created;
      });
      return toSummary(invitation);
    },

    async get(environmentId: string, invitationId: string): Promise<Invitation> {
      return (await existing(environmentId, invitationId)).invitation;
    },

    /** Invitations matching every filter; metadata filters get the same 8 KB budget as the bags they search. */
    list(environmentId: string, filter: InvitationFilter, page: PageQuery) {
      assertMetadataBudget(filter.publicMetadata, filter.privateMetadata);
      return store.list(environmentId, filter, page, clock.now());
    },

    /** PENDING → REVOKED; any other state is 409 with the current status. */
    async revoke(environmentId: string, invitationId: string, by: Caller): Promise<InvitationSummary> {
      const revoked = await inTransaction(db, async (trx) => {
        const done = await createInvitationsStore(trx).revoke(environmentId, invitationId, clock.now());
        if (done) await record(trx, environmentId, 'invitation.revoked', invitationId, by);
        return done;
      });
      return revoked ? toSummary(revoked) : explainNotPending(environmentId, invitationId);
    },

    /** Mails the invitation again with a new token (only hashes are kept); the earlier link stops working, expiresAt stays. */
    async resend(environmentId: string, invitationId: string, by: Caller, locale: Locale = 'en'): Promise<InvitationSummary> {
      const env = await environments.record(environmentId);
      const signUpUrl = requireSignUpUrl(env);
      const { invitation } = await existing(environmentId, invitationId);
      if (invitation.status !== 'PENDING') throw invitationNotPending(invitation.status);
      await countAgainstHourlyLimit(env);
      const token = randomToken('inv_');
      const updated = await inTransaction(db, async (trx) => {
        const done = await createInvitationsStore(trx).replaceToken(environmentId, invitationId, sha256(token), clock.now());
        if (done) {
          await mail(trx, env, signUpUrl, token, done.invitation, done.redirectUrl, locale);
          await record(trx, environmentId, 'invitation.resent', invitationId, by);
        }
        return done;
      });
      if (!updated) return explainNotPending(environmentId, invitationId);
      return toSummary(updated.invitation);
    },

    /** Deep-merges the given bags into the locked row; the merged bags together must fit the budget. */
    mergeMetadata(environmentId: string, invitationId: string, patch: MetadataPatchBody): Promise<Invitation> {
      return inTransaction(db, async (trx) => {
        const invitations = createInvitationsStore(trx);
        const now = clock.now();
        const found = await invitations.findForUpdate(environmentId, invitationId, now);
        if (!found) throw invitationNotFound();
        const { publicMetadata, privateMetadata } = found.invitation;
        return invitations.setMetadata(environmentId, invitationId, mergeBags({ publicMetadata, privateMetadata }, patch), now);
      });
    },

    /** The pending invitation a sign-up token names; 404, 409 or 410 naming its state otherwise. */
    async pendingByToken(environmentId: string, token: string) {
      const tokenHash = sha256(token);
      const found = await store.findByToken(environmentId, tokenHash, clock.now());
      if (found?.invitation.status !== 'PENDING') throw tokenUnusable(found?.invitation.status);
      return { tokenHash, email: found.invitation.email };
    },

    /** Housekeeping: stores EXPIRED for invitations past their expiry. */
    expireOverdue: () => store.expireOverdue(clock.now()),
  };
}
export type InvitationsService = ReturnType<typeof createInvitationsService>;

import { recordOwnEvent } from '../audit/service.js';
import { frontendUrl, isAllowedRedirect } from '../environments/origins.js';
import type { EnvironmentsService } from '../environments/service.js';
import type { Actor, Caller, RequestContext } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import { ProblemError } from '../platform/http/problem.js';
import type { Metrics } from '../platform/metrics.js';
import { endSession, impersonationActor } from '../sessions/service.js';
import { clientUserFromJson } from '../users/accounts.js';
import { userDeleted } from '../users/errors.js';
import type { UsersService } from '../users/service.js';
import {
  actorDeleted, actorNotFound, actorRequired, impersonationDisabled, impersonationNotFound, impersonationNotInPlan, invalidToken, noLandingUrl,
  landingUrlNotAllowed, quotaExhausted, redirectUrlNotAllowed, selfImpersonation, userBanned, userNotActive,
} from './errors.js';
import type { Impersonation, Impersonator, ListImpersonationsQuery, MintBody, MintedToken, Usage } from './schemas.js';
import { createImpersonationStore } from './store.js';
import { monthOf, nextMonthStart, secondsToNextMonth } from './months.js';

/** The impersonator of a ledger row. */
const impersonatorOf = (row: { actor_user_id: string | null; actor_operator_id: string | null }): Impersonator =>
  (row.actor_operator_id !== null ? { type: 'operator', id: row.actor_operator_id } : { type: 'user', id: row.actor_user_id! });

/** The impersonator as the actor of the mint and redeem events: acting as themselves, not yet behind the target. */
const asActor = (impersonator: Impersonator): Actor => ({ type: impersonator.type, id: impersonator.id, impersonatorId: null });

/**
 * The mint's actor: actorUserId when sent (by any caller); else the operator whose session made the request.
 * A secret key must name the actor (400, as the schema required before operators could mint).
 */
function impersonatorFor(body: MintBody, by: Caller): Impersonator {
  if (body.actorUserId !== undefined) return { type: 'user', id: body.actorUserId };
  if (by.actor.type === 'operator' && by.actor.id !== null) return { type: 'operator', id: by.actor.id };
  throw actorRequired();
}

/** How a token is redeemed: by POST (a session answered like sign-in) or by the browser link (a redirect to the landing URL). */
export type RedeemBy = 'post' | 'link';

/**
 * Redeems the token for the session about to start (its id chosen first, so the ledger and the trail
 * name it), in the caller's transaction, and records it. The target to sign in, the operator behind them
 * and the landing URL; 401 invalid_token (or 400 landing_url_not_configured for a link) when the token
 * cannot be redeemed. If the session does not start, the caller's rollback leaves the token unredeemed.
 */
export async function redeemImpersonationToken(trx: Db, environmentId: string, token: string, sessionId: string, context: RequestContext, by: RedeemBy, now: Date) {
  const store = createImpersonationStore(trx);
  const tokenHash = sha256(token);
  const redeemed = await store.redeem(environmentId, tokenHash, sessionId, context, now, by === 'link');
  if (!redeemed) throw by === 'link' && (await store.isLive(environmentId, tokenHash, now)) ? noLandingUrl() : invalidToken();
  await recordOwnEvent(trx, environmentId, {
    action: 'impersonation.redeemed', actor: asActor(impersonatorOf(redeemed)), context, via: 'client_api',
    targets: [{ type: 'user', id: redeemed.target_user_id }, { type: 'session', id: sessionId }, { type: 'impersonation', id: redeemed.id }],
    metadata: { reason: redeemed.reason, by },
  }, now);
  const impersonator = impersonatorOf(redeemed);
  return { target: clientUserFromJson(redeemed.target), actor: impersonationActor(impersonator.id, impersonator.type), landingUrl: redeemed.landing_url };
}

export interface ImpersonationDeps {
  db: Db; clock: Clock;
  environments: Pick<EnvironmentsService, 'record'>;
  users: Pick<UsersService, 'get'>;
  metrics: Pick<Metrics, 'impersonationMints'>;
}


/** Mint, the usage ledger and its monthly quota, and redeem: support staff signing in as a user to see what they see. */
export function createImpersonationService({ db, clock, environments, users, metrics }: ImpersonationDeps) {
  const store = createImpersonationStore(db);

  /**
   * Why a mint was refused, read only once it was: the target, then the actor (a user; an operator was
   * checked by their session), 404 when absent (or of another environment), 403 when deleted or banned;
   * undefined when both are active.
   */
  async function whyUsersRefused(environmentId: string, targetUserId: string, impersonator: Impersonator): Promise<ProblemError | undefined> {
    const target = await users.get(environmentId, targetUserId);
    if (target.status === 'deleted') return userDeleted();
    if (target.status === 'banned') return userBanned('target');
    if (impersonator.type === 'operator') return undefined;
    const actor = await users.get(environmentId, impersonator.id).catch((err: unknown) => {
      throw err instanceof ProblemError && err.code === 'user_not_found' ? actorNotFound() : err;
    });
    if (actor.status === 'deleted') return actorDeleted();
    if (actor.status === 'banned') return userBanned('actor');
    return undefined;
  }

  /**
   * The mint's writes. The quota is reserved first by one statement of its own, so the month's counter
   * row is locked only for that statement; a mint that does not happen gives it back (a crash in between
   * leaves the quota one lower for the month, never one over). Then one transaction writes the ledger
   * row while both users are active, and the audit event with the reason.
   */
  async function mintCounted(environmentId: string, targetUserId: string, body: MintBody, impersonator: Impersonator, landingUrl: string | null, quota: number, by: Caller) {
    const now = clock.now();
    const month = monthOf(now);
    const token = randomToken('imp_');
    // The month's count goes up only in the transaction of a mint that inserted its token, and after it:
    // a mint refused for its users never holds a slot, even for a moment, that a valid one could need.
    const entry: Impersonation | undefined = await inTransaction(db, async (trx) => {
      const ledger = createImpersonationStore(trx);
      const inserted = await ledger.insertForActiveUsers(environmentId, {
        tokenHash: sha256(token), impersonator, targetUserId, reason: body.reason, landingUrl, month,
        expiresAt: new Date(now.getTime() + body.expiresInSeconds * 1000),
      }, now);
      if (!inserted) return undefined;
      if ((await ledger.countMint(environmentId, month, quota)) === undefined) {
        metrics.impersonationMints.inc({ result: 'quota_exhausted' });
        throw quotaExhausted(secondsToNextMonth(now), quota);
      }
      await recordOwnEvent(trx, environmentId, {
        action: 'impersonation.created', actor: asActor(impersonator), context: by.context, via: by.via,
        targets: [{ type: 'user', id: targetUserId }, { type: 'impersonation', id: inserted.id }],
        metadata: { reason: body.reason, expiresInSeconds: body.expiresInSeconds, mintedBy: { type: by.actor.type, id: by.actor.id } },
      }, now);
      return inserted;
    });
    if (!entry) throw (await whyUsersRefused(environmentId, targetUserId, impersonator)) ?? userNotActive();
    return { entry, token };
  }

  async function get(environmentId: string, id: string) {
    const entry = await store.find(environmentId, id, clock.now());
    if (!entry) throw impersonationNotFound();
    return entry;
  }

  return {
    /**
     * Mints a single-use token to sign in as the target, for actorUserId or else the operator of the
     * session that asks (400 without either). Checked in order: the redirect URL (400), the
     * environment's switch and plan (403), then, only once a write was refused, the target and the
     * actor (404, 403); the quota (429) only for a mint whose token was written.
     */
    async mint(environmentId: string, targetUserId: string, body: MintBody, by: Caller): Promise<MintedToken> {
      const impersonator = impersonatorFor(body, by);
      const { settings, allowedOrigins, frontendHost } = await environments.record(environmentId);
      if (body.redirectUrl !== undefined && !isAllowedRedirect(body.redirectUrl, allowedOrigins)) throw redirectUrlNotAllowed();
      const landingUrl = body.redirectUrl ?? settings.impersonationLandingUrl;
      if (landingUrl !== null && !isAllowedRedirect(landingUrl, allowedOrigins)) throw landingUrlNotAllowed();
      if (impersonator.type === 'user' && impersonator.id === targetUserId) throw selfImpersonation();
      if (!settings.impersonationEnabled) throw impersonationDisabled();
      if (!settings.plan.impersonation) throw impersonationNotInPlan();
      const { entry, token } = await mintCounted(environmentId, targetUserId, body, impersonator, landingUrl, settings.plan.impersonationQuotaPerMonth, by);
      metrics.impersonationMints.inc({ result: 'success' });
      const url = landingUrl === null ? null : `${frontendUrl(frontendHost)}/_svc/auth/session/impersonate?token=${token}`;
      return { id: entry.id, token, expiresInSeconds: body.expiresInSeconds, expiresAt: entry.expiresAt, url };
    },

    /** Stops a pending token from working, or ends the session a redeemed one started; revoking twice changes nothing. */
    async revoke(environmentId: string, id: string, by: Caller) {
      await inTransaction(db, async (trx) => {
        const now = clock.now();
        const revoked = await createImpersonationStore(trx).revoke(environmentId, id, now);
        if (!revoked) return;
        const endedSession = revoked.session_id !== null
          && (await endSession(trx, environmentId, revoked.target_user_id, revoked.session_id, now)) !== undefined;
        await recordOwnEvent(trx, environmentId, {
          action: 'impersonation.revoked', ...by,
          targets: [{ type: 'user', id: revoked.target_user_id }, { type: 'impersonation', id }], metadata: { endedSession },
        }, now);
      });
      return get(environmentId, id);
    },
    get,
    list: (environmentId: string, query: ListImpersonationsQuery) => store.list(environmentId, query, clock.now()),

    /** This month's mints against the plan's quota. */
    async usage(environmentId: string): Promise<Usage> {
      const now = clock.now();
      const month = monthOf(now);
      const [{ settings }, used] = await Promise.all([environments.record(environmentId), store.usedIn(environmentId, month)]);
      const quota = settings.plan.impersonationQuotaPerMonth;
      return { month, used, quota, remaining: Math.max(0, quota - used), resetsAt: nextMonthStart(now).toISOString() };
    },
  };
}
export type ImpersonationService = ReturnType<typeof createImpersonationService>;

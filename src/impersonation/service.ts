import { uuidv7 } from 'uuidv7';
import { recordOwnEvent } from '../audit/service.js';
import { frontendUrl, isAllowedRedirect } from '../environments/origins.js';
import type { EnvironmentContext, EnvironmentsService } from '../environments/service.js';
import type { Actor, Caller, RequestContext } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import { ProblemError } from '../platform/http/problem.js';
import type { Metrics } from '../platform/metrics.js';
import { endSession, impersonationActor, startSession } from '../sessions/service.js';
import { toClientUser } from '../users/accounts.js';
import { userDeleted } from '../users/errors.js';
import type { UsersService } from '../users/service.js';
import {
  actorDeleted, actorNotFound, impersonationDisabled, impersonationNotFound, impersonationNotInPlan, invalidToken, noLandingUrl,
  quotaExhausted, redirectUrlNotAllowed, selfImpersonation, userBanned, userNotActive,
} from './errors.js';
import type { ListImpersonationsQuery, MintBody, MintedToken, Usage } from './schemas.js';
import { createImpersonationStore } from './store.js';
import { monthOf, nextMonthStart, secondsToNextMonth } from './months.js';

export interface ImpersonationDeps {
  db: Db; clock: Clock;
  environments: Pick<EnvironmentsService, 'record'>;
  users: Pick<UsersService, 'get'>;
  metrics: Pick<Metrics, 'impersonationMints' | 'impersonationRedeems'>;
}

/** The operator as the actor of the mint and redeem events: acting as themselves, not yet behind the target. */
const operator = (actorUserId: string): Actor => ({ type: 'user', id: actorUserId, impersonatorId: null });

/** Rolls the mint's transaction back (its count included) when its statement wrote nothing. */
class NotMinted extends Error {}

/** How a token is redeemed: by POST (a session answered like sign-in) or by the browser link (a redirect to the landing URL). */
export type RedeemBy = 'post' | 'link';

/** Mint, the usage ledger and its monthly quota, and redeem: support staff signing in as a user to see what they see. */
export function createImpersonationService({ db, clock, environments, users, metrics }: ImpersonationDeps) {
  const store = createImpersonationStore(db);

  /**
   * Why a mint wrote nothing, read only after its statement matched nothing: the target, then the actor,
   * 404 when absent (or of another environment), 403 when deleted or banned; with both active, the quota.
   */
  async function whyNotMinted(environmentId: string, targetUserId: string, actorUserId: string, quota: number, now: Date): Promise<ProblemError> {
    const target = await users.get(environmentId, targetUserId);
    if (target.status === 'deleted') return userDeleted();
    if (target.status === 'banned') return userBanned('target');
    const actor = await users.get(environmentId, actorUserId).catch((err: unknown) => {
      throw err instanceof ProblemError && err.code === 'user_not_found' ? actorNotFound() : err;
    });
    if (actor.status === 'deleted') return actorDeleted();
    if (actor.status === 'banned') return userBanned('actor');
    metrics.impersonationMints.inc({ result: 'quota_exhausted' });
    return quotaExhausted(secondsToNextMonth(now), quota);
  }

  /**
   * One transaction: one statement counts the mint against the month's quota and writes the ledger row
   * while both users are active; then the audit event records the reason. Undefined when a user is not
   * active or the quota is spent: the transaction is rolled back, so nothing is stored and nothing counted.
   */
  function mintCounted(environmentId: string, targetUserId: string, body: MintBody, landingUrl: string | null, quota: number, by: Caller) {
    return inTransaction(db, async (trx) => {
      const now = clock.now();
      const token = randomToken('imp_');
      const entry = await createImpersonationStore(trx).insertCounted(environmentId, {
        tokenHash: sha256(token), actorUserId: body.actorUserId, targetUserId, reason: body.reason, landingUrl, month: monthOf(now),
        expiresAt: new Date(now.getTime() + body.expiresInSeconds * 1000),
      }, quota, now);
      if (!entry) throw new NotMinted();
      await recordOwnEvent(trx, environmentId, {
        action: 'impersonation.created', actor: operator(body.actorUserId), context: by.context, via: by.via,
        targets: [{ type: 'user', id: targetUserId }, { type: 'impersonation', id: entry.id }],
        metadata: { reason: body.reason, expiresInSeconds: body.expiresInSeconds, mintedBy: { type: by.actor.type, id: by.actor.id } },
      }, now);
      return { entry, token };
    }).catch((err: unknown) => {
      if (err instanceof NotMinted) return undefined;
      throw err;
    });
  }

  /** Redeems the token and starts the target's session in one transaction; the ledger row records when and from where. */
  function redeemIn(env: EnvironmentContext, token: string, from: RequestContext, by: RedeemBy) {
    const tokenHash = sha256(token);
    const { session, impersonationSessionLifetimeSeconds: cap } = env.settings;
    const lifetimes = { idleTimeoutSeconds: Math.min(session.idleTimeoutSeconds, cap), maxLifetimeSeconds: Math.min(session.maxLifetimeSeconds, cap) };
    return inTransaction(db, async (trx) => {
      const now = clock.now();
      const txStore = createImpersonationStore(trx);
      const sessionId = uuidv7();
      const redeemed = await txStore.redeem(env.id, tokenHash, sessionId, from, now, by === 'link');
      if (!redeemed) throw by === 'link' && (await txStore.isLive(env.id, tokenHash, now)) ? noLandingUrl() : invalidToken();
      const origin = { ...from, actor: impersonationActor(redeemed.actor_user_id) };
      const started = await startSession(trx, env.id, redeemed.target_user_id, lifetimes, origin, now, sessionId);
      // Banned or deleted since the mint: the transaction rolls back, so no session and the token stays unredeemed.
      if (!started) throw userNotActive();
      await recordOwnEvent(trx, env.id, {
        action: 'impersonation.redeemed', actor: operator(redeemed.actor_user_id), context: from, via: 'client_api',
        targets: [{ type: 'user', id: redeemed.target_user_id }, { type: 'session', id: started.session.id }, { type: 'impersonation', id: redeemed.id }],
        metadata: { reason: redeemed.reason, by },
      }, now);
      return { ...started, userId: redeemed.target_user_id, landingUrl: redeemed.landing_url };
    });
  }

  async function get(environmentId: string, id: string) {
    const entry = await store.find(environmentId, id, clock.now());
    if (!entry) throw impersonationNotFound();
    return entry;
  }

  return {
    /**
     * Mints a single-use token to sign in as the target. Checked in order: the redirect URL (400), the
     * environment's switch and plan (403), then, only when the mint's one statement wrote nothing, the
     * target and the actor (404, 403) and the quota (429).
     */
    async mint(environmentId: string, targetUserId: string, body: MintBody, by: Caller): Promise<MintedToken> {
      const { settings, allowedOrigins, frontendHost } = await environments.record(environmentId);
      if (body.redirectUrl !== undefined && !isAllowedRedirect(body.redirectUrl, allowedOrigins)) throw redirectUrlNotAllowed();
      if (body.actorUserId === targetUserId) throw selfImpersonation();
      if (!settings.impersonationEnabled) throw impersonationDisabled();
      if (!settings.plan.impersonation) throw impersonationNotInPlan();
      const landingUrl = body.redirectUrl ?? settings.impersonationLandingUrl;
      const quota = settings.plan.impersonationQuotaPerMonth;
      const minted = await mintCounted(environmentId, targetUserId, body, landingUrl, quota, by);
      if (!minted) throw await whyNotMinted(environmentId, targetUserId, body.actorUserId, quota, clock.now());
      const { entry, token } = minted;
      metrics.impersonationMints.inc({ result: 'success' });
      const url = landingUrl === null ? null : `${frontendUrl(frontendHost)}/_svc/auth/session/impersonate?token=${token}`;
      return { id: entry.id, token, expiresInSeconds: body.expiresInSeconds, expiresAt: entry.expiresAt, url };
    },

    /** The target's session, carrying the actor; every refusal is counted by its reason. */
    async redeem(env: EnvironmentContext, token: string, from: RequestContext, by: RedeemBy) {
      try {
        const redeemed = await redeemIn(env, token, from, by);
        const user = toClientUser(await users.get(env.id, redeemed.userId));
        metrics.impersonationRedeems.inc({ result: 'success' });
        return { ...redeemed, user };
      } catch (err) {
        metrics.impersonationRedeems.inc({ result: err instanceof ProblemError ? err.code : 'error' });
        throw err;
      }
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

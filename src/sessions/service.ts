import { uuidv7 } from 'uuidv7';
import { recordOwnEvent } from '../audit/service.js';
import type { Caller, CallerContext } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import type { Cte } from '../platform/db/cte.js';
import type { UserLock } from '../platform/db/tables.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { SessionContext } from '../platform/http/planes.js';
import { ProblemError } from '../platform/http/problem.js';
import type { JsonObject } from '../platform/json.js';
import { DAY_MS } from '../platform/maintenance.js';
import { activeOrganizationNotFound } from './errors.js';
import type { ListSessionsQuery, SessionActor } from './schemas.js';
import { createSessionsStore, insertSessionAfter, toStarted, type NewSession } from './store.js';

/** The session's active organization as its JWTs name it (org_id, org_slug, org_role). */
export interface ActiveOrganization { id: string; slug: string | null; role: string }

declare module '../platform/http/planes.js' {
  /**
   * The user's public metadata, the session's amr and its active organization come with the session check
   * (in the same statement), for the session's JWT.
   */
  interface SessionContext { publicMetadata: JsonObject; amr: string[]; activeOrganization: ActiveOrganization | null }
}

export interface SessionLifetimes { idleTimeoutSeconds: number; maxLifetimeSeconds: number }
/** Where a session starts from: the request's context, and the actor of an impersonated session. */
export interface SessionStartContext extends CallerContext { actor?: SessionActor | null }

/** What a new session knows of how its user proved who they are. */
export type SessionProof = Pick<NewSession, 'authenticatedAt' | 'amr' | 'enrolmentOnly'>;

/** How long a password or second-factor check counts as recent for a sensitive change (contract §3d). */
export const RECENT_AUTHENTICATION_MS = 10 * 60_000;

// Writing last-activity on every request would turn each read into a write. A minute's precision is
// plenty for long idle timeouts; a short one is kept to a tenth of itself, or a session in steady use
// (say every 20 s with a 30 s timeout) would expire between two writes.
const TOUCH_INTERVAL_MS = 60_000;
const touchIntervalMs = (idleTimeoutSeconds: number) => Math.min(TOUCH_INTERVAL_MS, idleTimeoutSeconds * 100);

/**
 * The actor of an impersonated session, in the shape audit events give their actor: the operator who
 * impersonates is both its `id` and its `impersonatorId`, as every event of that session names them.
 * Its JWTs carry the same operator as an RFC 8693 `act` claim (`{sub}`).
 */
export const impersonationActor = (impersonatorId: string, type: SessionActor['type'] = 'user'): SessionActor =>
  ({ type, id: impersonatorId, impersonatorId });

/** The actor a session shows (in `GET /_svc/me`), from its context; null when nobody impersonates. */
export const actorOf = (session: SessionContext): SessionActor | null =>
  session.impersonatorId === null ? null : impersonationActor(session.impersonatorId, session.impersonatorType ?? 'user');

/** The operator behind a stored session's actor, or null. */
function impersonatorOf(actor: JsonObject | null): string | null {
  const id = actor?.impersonatorId;
  return typeof id === 'string' ? id : null;
}

/** Whether a stored session's impersonator is a user of the environment or a dashboard operator; null when none. */
const impersonatorTypeOf = (actor: JsonObject | null): SessionActor['type'] | null =>
  (impersonatorOf(actor) === null ? null : actor?.type === 'operator' ? 'operator' : 'user');

const sessionNotFound = () => new ProblemError(404, 'resource_not_found', 'No session with this id for this user.');

/**
 * A new session for the user, as a CTE body after the caller's CTE that locks that user
 * (auth's `issueSession`, the one way a session starts): a fresh random token at every sign-in (no
 * fixation), only its hash stored; no row when the user is no longer active. `id` is chosen by a caller
 * that names the session before it starts (an impersonation redeemed). `started` reads its row.
 */
export function sessionAfter(userId: string, lifetimes: SessionLifetimes, context: SessionStartContext, now: Date, proof: SessionProof, id = uuidv7()) {
  const { session, token } = newSession(userId, lifetimes, context, now, proof, id);
  return { id: session.id, token, statement: (user: Cte<UserLock>) => insertSessionAfter(user, session, now), started: toStarted };
}

function newSession(userId: string, lifetimes: SessionLifetimes, context: SessionStartContext, now: Date, proof: SessionProof, id: string) {
  const token = randomToken('sess_');
  const session: NewSession = {
    id, userId, tokenHash: sha256(token), actor: context.actor ?? null, ipAddress: context.ipAddress, userAgent: context.userAgent,
    idleTimeoutSeconds: lifetimes.idleTimeoutSeconds, expiresAt: new Date(now.getTime() + lifetimes.maxLifetimeSeconds * 1000), ...proof,
  };
  return { session, token };
}

/** Revokes every live session of the user (but `keep`, when given) in the caller's transaction; answers how many it revoked. */
export const revokeAllSessions = (db: Db, environmentId: string, userId: string, now: Date, keep?: string) =>
  createSessionsStore(db).revokeAllForUser(environmentId, userId, now, keep);

/** The user passed a second factor in this session (enrolling one), in the caller's transaction: recent, amr with otp and mfa, not held to enrolment. */
export const markSessionSecondFactor = (db: Db, environmentId: string, sessionId: string, now: Date) =>
  createSessionsStore(db).markSecondFactor(environmentId, sessionId, now);

/** The user has a second factor now: their sessions held to enrolment are free, in the caller's transaction. */
export const endEnrolmentOnly = (db: Db, environmentId: string, userId: string) => createSessionsStore(db).endEnrolmentOnly(environmentId, userId);

/** The user proved who they are again in this session (a password check), in the caller's transaction. */
export const markSessionAuthenticated = (db: Db, environmentId: string, sessionId: string, now: Date) =>
  createSessionsStore(db).markAuthenticated(environmentId, sessionId, now);

/**
 * Erasure, in the caller's transaction: deletes every session of the user, live or ended, so the next
 * request with any of them is 401 and no IP or user agent of theirs is left. Answers how many there were.
 */
export const deleteAllSessions = (db: Db, environmentId: string, userId: string) =>
  createSessionsStore(db).deleteAllForUser(environmentId, userId);

/** Ends one session of the user in the caller's transaction (an impersonation revoked); undefined when it had ended already. */
export const endSession = (db: Db, environmentId: string, userId: string, sessionId: string, now: Date) =>
  createSessionsStore(db).revokeOne(environmentId, userId, sessionId, now);

/** Client sessions: authenticate, list and revoke. */
export function createSessionsService({ db, clock }: { db: Db; clock: Clock }) {
  const store = createSessionsStore(db);
  return {
    async authenticate(environmentId: string, token: string): Promise<SessionContext | undefined> {
      if (!token.startsWith('sess_')) return undefined;
      const now = clock.now();
      const found = await store.findLiveByToken(environmentId, sha256(token), now);
      if (!found) return undefined;
      if (now.getTime() - found.last_active_at.getTime() > touchIntervalMs(found.idle_timeout_seconds)) await store.touch(environmentId, found.id, now);
      const recentlyAuthenticated = found.authenticated_at !== null && now.getTime() - found.authenticated_at.getTime() <= RECENT_AUTHENTICATION_MS;
      return {
        id: found.id, userId: found.user_id, impersonatorId: impersonatorOf(found.actor), impersonatorType: impersonatorTypeOf(found.actor), recentlyAuthenticated, enrolmentOnly: found.enrolment_only,
        amr: found.amr, publicMetadata: found.public_metadata,
        activeOrganization: found.organization_id === null ? null : { id: found.organization_id, slug: found.organization_slug, role: found.organization_role! },
      };
    },
    /**
     * Revokes one session of the user and records it in the same transaction; revoking a revoked session
     * again answers the same and records nothing. `reason` tells a sign-out from a revocation.
     */
    revoke: (environmentId: string, userId: string, sessionId: string, by: Caller, reason: 'sign_out' | 'revoke' = 'revoke') =>
      inTransaction(db, async (trx) => {
        const sessions = createSessionsStore(trx);
        const now = clock.now();
        const revoked = await sessions.revokeOne(environmentId, userId, sessionId, now);
        if (revoked) {
          await recordOwnEvent(trx, environmentId, {
            action: 'session.revoked', ...by, targets: [{ type: 'session', id: sessionId }, { type: 'user', id: userId }], metadata: { reason },
          }, now);
          return revoked;
        }
        const session = await sessions.find(environmentId, userId, sessionId, now);
        if (!session) throw sessionNotFound();
        return session;
      }),
    /**
     * Makes one of the user's organizations the session's active one, or none (null); its JWTs then carry
     * org_id, org_role and org_slug. Not a member: 404 organization_not_found, as for an organization that
     * does not exist (another environment's included). A change is recorded; setting the same again is not.
     */
    setActiveOrganization: (environmentId: string, session: SessionContext, organizationId: string | null, by: Caller) =>
      inTransaction(db, async (trx) => {
        const sessions = createSessionsStore(trx);
        const now = clock.now();
        const changed = await sessions.setActiveOrganization(environmentId, session.id, organizationId, now);
        if (changed === 'not_a_member') throw activeOrganizationNotFound();
        if (changed) {
          await recordOwnEvent(trx, environmentId, {
            action: 'session.active_organization_changed', ...by, metadata: { organizationId },
            targets: [{ type: 'session', id: session.id }, { type: 'user', id: session.userId }, ...(organizationId ? [{ type: 'organization', id: organizationId }] : [])],
          }, now);
        }
        return (await sessions.find(environmentId, session.userId, session.id, now))!;
      }),
    isLive: (environmentId: string, userId: string, sessionId: string) => store.isLive(environmentId, userId, sessionId, clock.now()),
    listForUser: (environmentId: string, userId: string, query: ListSessionsQuery) =>
      store.listForUser(environmentId, userId, query, clock.now()),
    /** Housekeeping: sessions that ended (revoked, or past their absolute expiry) more than `retentionDays` ago. */
    pruneEnded: (retentionDays: number) => store.deleteEndedBefore(new Date(clock.now().getTime() - retentionDays * DAY_MS)),
  };
}
export type SessionsService = ReturnType<typeof createSessionsService>;

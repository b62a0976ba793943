import { recordOwnEventAfter, type OwnEvent } from '../../audit/service.js';
import type { EnvironmentContext } from '../../environments/service.js';
import type { Clock } from '../../platform/clock.js';
import type { Cte, CteChain } from '../../platform/db/cte.js';
import type { Db } from '../../platform/db/database.js';
import type { UserLock } from '../../platform/db/tables.js';
import type { JsonObject } from '../../platform/json.js';
import type { StartedSession } from '../../sessions/schemas.js';
import { sessionAfter, type SessionLifetimes, type SessionProof, type SessionStartContext } from '../../sessions/service.js';
import { toClientUser } from '../../users/accounts.js';
import { lockForSignIn } from '../../users/service.js';
import type { ClientUser } from '../../users/schemas.js';
import { userNotActive } from '../errors.js';
import { insertSignedInSession } from '../store.js';

/** The environment a client-plane flow runs in. */
export type AuthEnvironment = EnvironmentContext;
/** The environment of a flow that sends mail: its name brands the mail when no product name is set. */
export type MailingEnvironment = AuthEnvironment & { name: string };

/** How a user proved who they are, as `user.signed_in` records it. */
export type SignInMethod =
  | 'password' | 'sign_up' | 'email_code' | 'password_reset' | 'invitation' | 'organization_invitation' | 'impersonation' | 'oauth' | 'sso' | 'passkey';

/** A flow that signed the user in: the client form of the user, the session and its token (cookie or body). */
export interface SignedIn { user: ClientUser; session: StartedSession; token: string }

/**
 * What a sign-in ends in, answered by `answerSignIn` (routes/answer.ts), the one place that knows each:
 * `complete` starts a session; `pending_verification` waits for the emailed code (a sign-up). The
 * second-factor step adds its own status here and there, and nowhere else.
 */
export type SignInResult =
  | ({ status: 'complete' } & SignedIn)
  | { status: 'pending_verification'; user: ClientUser }
  | { status: 'mfa_required'; challengeToken: string; factors: string[] };

export const complete = (signedIn: SignedIn): SignInResult => ({ status: 'complete', ...signedIn });

/**
 * The ways in that prove who the user is, so the session starts recently authenticated (contract §3d);
 * an emailed code alone (verification, invitation, reset) or an impersonation does not.
 */
const PROVES_IDENTITY: ReadonlySet<SignInMethod> = new Set(['password', 'sign_up', 'oauth', 'sso', 'passkey']);

/**
 * The ways in that satisfy mfa.policy "required" by themselves: a passkey is a key and its unlock (user
 * verification is required), phishing-resistant, so it is never held to enrolment.
 */
const MULTI_FACTOR: ReadonlySet<SignInMethod> = new Set(['passkey']);

/**
 * The session's `amr` (RFC 8176) for each way in. An emailed code is `email`, as Okta names it (RFC 8176
 * has no value for it); an impersonation proves nothing of the user, and its JWT's `act` says who acts.
 */
const FIRST_STEP_AMR: Record<SignInMethod, string[]> = {
  password: ['pwd'], sign_up: ['pwd'], oauth: ['fed'], sso: ['fed'],
  email_code: ['email'], password_reset: ['email'], invitation: ['email'], organization_invitation: ['email'], impersonation: [],
  // What a passkey proves depends on the key (hwk or swk): the sign-in passes its own (IssueOptions.amr).
  passkey: ['hwk', 'user', 'mfa'],
};

/**
 * How the session's user proved who they are: recent after a password, OAuth or second factor; `otp` and
 * `mfa` after a second factor; held to enrolment where the environment requires a factor and none was shown
 * (a support session is never held).
 */
function proofOf(env: AuthEnvironment, method: SignInMethod, options: IssueOptions, now: Date): SessionProof {
  const secondFactor = options.secondFactor ?? false;
  const firstStep = options.amr ?? FIRST_STEP_AMR[method];
  return {
    authenticatedAt: secondFactor || PROVES_IDENTITY.has(method) ? now : null,
    amr: secondFactor ? [...firstStep, 'otp', 'mfa'] : firstStep,
    enrolmentOnly: env.settings.mfa.policy === 'required' && !secondFactor && method !== 'impersonation' && !MULTI_FACTOR.has(method),
  };
}

export interface IssueOptions {
  /**
   * Adds the CTEs that lock the user, and any write that must commit with the session (the password
   * path clears the failure count and gives the client's attempt back). Default: the user FOR SHARE.
   */
  lockUser?: { name: string; add: (chain: CteChain) => Cte<UserLock> };
  /** The session's id, for a caller that names the session before it starts (an impersonation redeemed). */
  sessionId?: string;
  /** The user passed a second factor after the first step (the challenge step). */
  secondFactor?: boolean;
  /** The session's amr when the way in decides it per sign-in (a passkey: hwk or swk), instead of the method's. */
  amr?: string[];
}

/** The trail's record of a sign-in: who, the session it started, and how they proved who they are. */
const signedInEvent = (userId: string, sessionId: string, context: SessionStartContext, method: SignInMethod, details: JsonObject): OwnEvent => ({
  action: 'user.signed_in',
  actor: { type: 'user', id: userId, impersonatorId: context.actor?.impersonatorId ?? null },
  context: { ipAddress: context.ipAddress, userAgent: context.userAgent }, via: 'client_api',
  targets: [{ type: 'user', id: userId }, { type: 'session', id: sessionId }], metadata: { method, ...details },
});

/** An impersonated session lasts at most the environment's impersonationSessionLifetimeSeconds. */
function lifetimesFor(env: AuthEnvironment, context: SessionStartContext): SessionLifetimes {
  const { session, impersonationSessionLifetimeSeconds: cap } = env.settings;
  if (!context.actor) return session;
  return { idleTimeoutSeconds: Math.min(session.idleTimeoutSeconds, cap), maxLifetimeSeconds: Math.min(session.maxLifetimeSeconds, cap) };
}

const plainLock = (environmentId: string, userId: string) => ({
  name: 'issue_session', add: (chain: CteChain) => chain.add('signed_in', lockForSignIn(environmentId, userId)),
});

/**
 * The one way a session starts. In ONE statement, in the caller's transaction: the user locked, the
 * session inserted only while the user is active, and `user.signed_in` recorded with the method.
 * A user banned or deleted since the flow checked them gets 403 user_not_active and no session.
 */
export function sessionIssuer(clock: Clock) {
  return async function issueSession(
    trx: Db, env: AuthEnvironment, user: ClientUser, context: SessionStartContext, method: SignInMethod, details: JsonObject = {}, options: IssueOptions = {},
  ): Promise<SignedIn> {
    const now = clock.now();
    const lock = options.lockUser ?? plainLock(env.id, user.id);
    const session = sessionAfter(user.id, lifetimesFor(env, context), context, now, proofOf(env, method, options, now), options.sessionId);
    const row = await insertSignedInSession(trx, lock.name, {
      lockUser: lock.add,
      session: session.statement,
      event: (chain, started) => recordOwnEventAfter(chain, started, env.id, signedInEvent(user.id, session.id, context, method, details), now),
    });
    if (!row) throw userNotActive();
    return { user: toClientUser(user), session: session.started(row), token: session.token };
  };
}
export type IssueSession = ReturnType<typeof sessionIssuer>;

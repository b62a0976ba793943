import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { AccountService } from '../../account/service.js';
import type { PasskeySignIn } from '../../auth/service/passkeys.js';
import type { FactorsService } from '../../factors/service.js';
import type { PasskeysService } from '../../passkeys/service.js';
import type { Caller, RequestContext } from '../../platform/caller.js';
import type { Db } from '../../platform/db/database.js';
import {
  assertSessionMay, NOT_UNDER_IMPERSONATION, OPEN_DURING_ENROLMENT, RECENTLY_AUTHENTICATED, type ClientEnvironment, type SessionContext, type SessionRules,
} from '../../platform/http/planes.js';
import { ProblemError } from '../../platform/http/problem.js';
import type { SessionsService } from '../../sessions/service.js';
import { userCredentials } from '../../users/accounts.js';
import type { Outcome } from '../service.js';
import type { ChangePasswordForm } from './schemas.js';

export interface SecurityPagesDeps {
  db: Db;
  account: Pick<AccountService, 'changePassword' | 'reauthenticate'>;
  factors: Pick<FactorsService, 'overview' | 'enrolTotp' | 'confirmTotp' | 'regenerateBackupCodes' | 'remove'>;
  passkeys: Pick<PasskeysService, 'list' | 'rename' | 'remove'>;
  sessions: Pick<SessionsService, 'listForUser' | 'revoke'>;
  passkeySignIn: Pick<PasskeySignIn, 'signIn'>;
}

/** A step of the tab: done (with what it answers), or refused with the problem the API would have answered. */
export type Step<T = undefined> = { kind: 'done'; value: T } | { kind: 'refused'; problem: ProblemError };

/** The signed-in user on the tab: the environment, the cookie's session, and where the request came from. */
export interface SecurityCaller { env: ClientEnvironment; session: SessionContext; context: RequestContext }

// The route options of the client plane's routes each step mirrors (factors/, passkeys/, sessions/, account/ routes).
const OWN = NOT_UNDER_IMPERSONATION;
const ENROLMENT = { ...NOT_UNDER_IMPERSONATION, ...OPEN_DURING_ENROLMENT };
const SECURE = { ...NOT_UNDER_IMPERSONATION, ...RECENTLY_AUTHENTICATED };

/** The sessions the tab lists: more than anyone keeps open; the API pages through the rest. */
const SESSIONS_SHOWN = 100;

/**
 * Runs a step under the rules of the API route it mirrors; a refusal the page can explain (wrong password,
 * a code, a recent sign-in needed) comes back as such, anything else stays an error.
 */
async function step<T>(session: SessionContext, rules: SessionRules, run: () => Promise<T>): Promise<Step<T>> {
  try {
    assertSessionMay(session, rules);
    return { kind: 'done', value: await run() };
  } catch (err) {
    if (err instanceof ProblemError && err.status < 500) return { kind: 'refused', problem: err };
    throw err;
  }
}

const callerOf = ({ session, context }: SecurityCaller): Caller =>
  ({ actor: { type: 'user', id: session.userId, impersonatorId: session.impersonatorId }, context, via: 'client_api' });

/**
 * The steps of the account's security tab and of the passkey sign-in. Each calls the very service the
 * client plane's route calls, under that route's rules (impersonation, enrolment, recent sign-in), so rate
 * limits, the audit trail and the recent-authentication rule are the API's own.
 */
export function createSecurityPages({ db, account, factors, passkeys, sessions, passkeySignIn }: SecurityPagesDeps) {
  const accountCaller = (who: SecurityCaller) => ({ env: who.env, session: who.session, caller: callerOf(who) });
  return {
    /** What the tab shows: second factors, passkeys, and (except to a session held to enrolment, as on the API) the live sessions. */
    async overview({ env, session }: SecurityCaller) {
      const [mfa, keys, live, credentials] = await Promise.all([
        factors.overview(env.id, session.userId),
        passkeys.list(env.id, session.userId),
        session.enrolmentOnly ? undefined : sessions.listForUser(env.id, session.userId, { status: 'active', limit: SESSIONS_SHOWN }),
        userCredentials(db, env.id, session.userId),
      ]);
      return { mfa, passkeys: keys.items, sessions: live?.items ?? null, hasPassword: credentials?.passwordHash != null };
    },

    changePassword: (who: SecurityCaller, form: ChangePasswordForm) => step(who.session, OWN, () => account.changePassword(accountCaller(who), {
      ...(form.currentPassword && { currentPassword: form.currentPassword }), newPassword: form.newPassword, signOutOtherSessions: form.signOutOtherSessions === 'true',
    })),

    reauthenticate: (who: SecurityCaller, password: string) => step(who.session, OWN, () => account.reauthenticate(accountCaller(who), { password })),

    enrolTotp: (who: SecurityCaller) => step(who.session, ENROLMENT, () => factors.enrolTotp(who.env, who.session.userId)),

    confirmTotp: (who: SecurityCaller, factorId: string, code: string) => step(who.session, ENROLMENT, () =>
      factors.confirmTotp(who.env, who.session.userId, who.session.id, factorId, code.trim(), callerOf(who))),

    regenerateBackupCodes: (who: SecurityCaller) => step(who.session, SECURE, () => factors.regenerateBackupCodes(who.env, who.session.userId, callerOf(who))),

    removeFactor: (who: SecurityCaller, factorId: string) => step(who.session, SECURE, () => factors.remove(who.env, who.session.userId, factorId, callerOf(who))),

    renamePasskey: (who: SecurityCaller, passkeyId: string, name: string) => step(who.session, OWN, () => passkeys.rename(who.env.id, who.session.userId, passkeyId, name)),

    removePasskey: (who: SecurityCaller, passkeyId: string) => step(who.session, SECURE, () => passkeys.remove(who.env, who.session.userId, passkeyId, callerOf(who))),

    revokeSession: (who: SecurityCaller, sessionId: string) => step(who.session, OWN, () => sessions.revoke(who.env.id, who.session.userId, sessionId, callerOf(who))),

    /** A passkey's assertion, as the client plane's passkey sign-in takes it; complete by itself, never a second step. */
    async signInWithPasskey(env: ClientEnvironment, response: AuthenticationResponseJSON, to: string, context: RequestContext): Promise<Outcome> {
      try {
        const result = await passkeySignIn.signIn(env, response, context);
        if (result.status !== 'complete') throw new Error(`a passkey sign-in ended in ${result.status}`);
        return { kind: 'signed_in', signedIn: result, to };
      } catch (err) {
        if (err instanceof ProblemError && err.status < 500) return { kind: 'refused', problem: err };
        throw err;
      }
    },
  };
}
export type SecurityPages = ReturnType<typeof createSecurityPages>;

import type { AccountService } from '../../account/service.js';
import type { DataRequestsService } from '../../data-requests/service.js';
import type { EmailAddressesService } from '../../email-addresses/service.js';
import type { OAuthService } from '../../oauth/service.js';
import type { MemberActions } from '../../organizations/member-actions.js';
import type { Caller, RequestContext } from '../../platform/caller.js';
import {
  assertSessionMay, NOT_UNDER_IMPERSONATION, RECENTLY_AUTHENTICATED, type ClientEnvironment, type SessionContext, type SessionRules,
} from '../../platform/http/planes.js';
import { ProblemError } from '../../platform/http/problem.js';
import type { UsersService } from '../../users/service.js';

export interface AccountPagesDeps {
  users: Pick<UsersService, 'get' | 'update'>;
  emailAddresses: Pick<EmailAddressesService, 'list' | 'add' | 'verify' | 'makePrimary' | 'remove'>;
  account: Pick<AccountService, 'reauthenticate' | 'deleteOwnAccount'>;
  oauth: Pick<OAuthService, 'listOwnIdentities' | 'unlink'>;
  organizations: Pick<MemberActions, 'listMine' | 'leave'>;
  dataRequests: Pick<DataRequestsService, 'request' | 'listForUser' | 'download' | 'cancel'>;
  /** The environment's enabled providers, for their names beside the linked identities. */
  providers(environmentId: string): Promise<{ items: { id: string; name: string }[] }>;
}

/** The signed-in user on a page: the environment, the cookie's session and where the request came from. */
export interface AccountVisitor { env: ClientEnvironment; session: SessionContext; context: RequestContext }

/** What an account step ended in: done (the tab again, with a notice), or refused with the problem the API would answer. */
export type StepOutcome = { kind: 'done' } | { kind: 'refused'; problem: ProblemError };

/** The profile fields PATCH /_svc/me takes, as the form sends them (an empty field clears the value). */
export interface ProfileChanges { firstName: string; lastName: string; locale: string }

/** A list shows this many; nobody has more addresses (10 at most), identities or organizations on one page in practice. */
const LIST_LIMIT = { limit: 100 };

const callerOf = ({ session, context }: AccountVisitor): Caller =>
  ({ actor: { type: 'user', id: session.userId, impersonatorId: session.impersonatorId }, context, via: 'client_api' });

/**
 * Runs a step under the rules of the client-plane route it stands for (impersonation, enrolment, recent
 * authentication), and turns a refusal the page can explain into an outcome; a fault stays a fault.
 */
async function step(visitor: AccountVisitor, rules: SessionRules, act: () => Promise<unknown>): Promise<StepOutcome> {
  try {
    assertSessionMay(visitor.session, rules);
    await act();
    return { kind: 'done' };
  } catch (err) {
    if (err instanceof ProblemError && err.status < 500) return { kind: 'refused', problem: err };
    throw err;
  }
}

const SENSITIVE = { ...NOT_UNDER_IMPERSONATION, ...RECENTLY_AUTHENTICATED };

/**
 * The steps of the account pages (/account and /account/data). Each calls the service the client plane's
 * route calls, under that route's session rules, so rate limits, the audit trail, recent authentication and
 * enumeration protection are the API's own.
 */
export function createAccountPages(deps: AccountPagesDeps) {
  const { users, emailAddresses, account, oauth, organizations, dataRequests } = deps;
  const who = (visitor: AccountVisitor) => ({ env: visitor.env, session: visitor.session, caller: callerOf(visitor) });
  return {
    /** What the profile tab shows, read as GET /_svc/me, /me/email-addresses, /me/identities and /organizations read it. */
    async profile({ env, session }: AccountVisitor) {
      assertSessionMay(session, {});
      const [user, addresses, identities, memberships, providers] = await Promise.all([
        users.get(env.id, session.userId),
        emailAddresses.list(env.id, session.userId),
        oauth.listOwnIdentities(env.id, session.userId),
        organizations.listMine(env.id, session.userId, LIST_LIMIT),
        deps.providers(env.id),
      ]);
      const providerName = new Map(providers.items.map((p) => [p.id, p.name]));
      return {
        user,
        addresses: addresses.items,
        identities: identities.items.map((i) => ({ ...i, providerName: providerName.get(i.provider) ?? i.provider })),
        organizations: memberships.items,
      };
    },

    /** What the data tab shows: the user's requests, newest first, and whether the account may be deleted here. */
    async data({ env, session }: AccountVisitor) {
      assertSessionMay(session, {});
      const requests = await dataRequests.listForUser(env.id, session.userId, LIST_LIMIT);
      return { requests: requests.items, selfDeletionEnabled: env.settings.selfDeletionEnabled };
    },

    updateProfile: (visitor: AccountVisitor, form: ProfileChanges) => step(visitor, {}, () => users.update(visitor.env.id, visitor.session.userId, {
      firstName: form.firstName.trim() || null, lastName: form.lastName.trim() || null, locale: form.locale === 'en' || form.locale === 'da' ? form.locale : null,
    }, callerOf(visitor))),

    addEmailAddress: (visitor: AccountVisitor, email: string) =>
      step(visitor, NOT_UNDER_IMPERSONATION, () => emailAddresses.add(visitor.env.id, visitor.session.userId, email, callerOf(visitor))),
    verifyEmailAddress: (visitor: AccountVisitor, addressId: string, code: string) =>
      step(visitor, NOT_UNDER_IMPERSONATION, () => emailAddresses.verify(visitor.env.id, visitor.session.userId, addressId, code.trim(), callerOf(visitor))),
    makePrimary: (visitor: AccountVisitor, addressId: string) =>
      step(visitor, SENSITIVE, () => emailAddresses.makePrimary(visitor.env.id, visitor.session.userId, addressId, callerOf(visitor))),
    removeEmailAddress: (visitor: AccountVisitor, addressId: string) =>
      step(visitor, NOT_UNDER_IMPERSONATION, () => emailAddresses.remove(visitor.env.id, visitor.session.userId, addressId, callerOf(visitor))),

    unlinkIdentity: (visitor: AccountVisitor, identityId: string) =>
      step(visitor, {}, () => oauth.unlink(visitor.env.id, visitor.session, identityId, callerOf(visitor))),
    leaveOrganization: (visitor: AccountVisitor, organizationId: string) =>
      step(visitor, {}, () => organizations.leave(visitor.env.id, organizationId, visitor.session.userId, callerOf(visitor))),

    requestData: (visitor: AccountVisitor, type: 'export' | 'erasure') =>
      step(visitor, SENSITIVE, () => dataRequests.request(visitor.env.id, visitor.session.userId, { type }, callerOf(visitor))),
    cancelDataRequest: (visitor: AccountVisitor, requestId: string) =>
      step(visitor, NOT_UNDER_IMPERSONATION, () => dataRequests.cancel(visitor.env.id, requestId, callerOf(visitor), visitor.session.userId)),
    /** The archive of a ready export, as GET /_svc/me/data-requests/{id}/download answers it; its refusals are thrown. */
    download({ env, session }: AccountVisitor, requestId: string) {
      assertSessionMay(session, {});
      return dataRequests.download(env.id, session.userId, requestId);
    },

    /** POST /_svc/me/reauthenticate with the password: the session counts as recently authenticated for 10 minutes. */
    reauthenticate: (visitor: AccountVisitor, password: string) =>
      step(visitor, NOT_UNDER_IMPERSONATION, () => account.reauthenticate(who(visitor), { password })),

    /** DELETE /_svc/me: the soft delete, every session revoked (the page clears the cookie). */
    deleteAccount: (visitor: AccountVisitor) => step(visitor, SENSITIVE, () => account.deleteOwnAccount(who(visitor))),
  };
}
export type AccountPages = ReturnType<typeof createAccountPages>;

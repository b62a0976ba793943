import { timingSafeEqual } from 'node:crypto';
import { recordOwnEvent } from '../audit/service.js';
import { isAllowedRedirect } from '../environments/origins.js';
import { userCaller, type Caller, type RequestContext } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/encryption.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, transactionWithLock, type Db } from '../platform/db/database.js';
import type { ClientEnvironment, SessionContext } from '../platform/http/planes.js';
import { ProblemError } from '../platform/http/problem.js';
import type { Metrics } from '../platform/metrics.js';
import { enrollByVerifiedEmail } from '../organization-domains/service.js';
import { revokeAllSessions } from '../sessions/service.js';
import { insertUser, isAcceptableEmail, joinName, lockLiveUserByEmail, lockUserCredentials, normalizeEmail, proveEmailByProvider } from '../users/accounts.js';
import type { User } from '../users/schemas.js';
import type { UsersService } from '../users/service.js';
import { identityNotFound, impersonatedUnlink, invalidState, lastSignInMethod, redirectUrlNotAllowed } from './errors.js';
import { resolveEndpoints } from './presets.js';
import { callbackUrl } from './provider-admin.js';
import { OAuthFailure, type AuthorizationSecrets, type Profile, type ProviderSettings, type RelyingParty } from './relying-party.js';
import type { Identity } from './schemas.js';
import { createIdentitiesStore, createProvidersStore, createStatesStore, type IdentityRecord, type ProviderRecord } from './store.js';

/**
 * Erasure, in the caller's transaction: deletes the user's external identities (provider subjects and the
 * emails providers reported); a later sign-in with one starts over. Answers how many there were.
 */
export const deleteUserIdentities = (trx: Db, environmentId: string, userId: string) =>
  createIdentitiesStore(trx).deleteAllForUser(environmentId, userId);

export interface OAuthDeps {
  db: Db; clock: Clock; sealer: Sealer; relyingParty: RelyingParty;
  users: Pick<UsersService, 'get'>;
  metrics: Pick<Metrics, 'oauthSignIns'>;
}

/** How long a started sign-in may take at the provider before its state stops working. */
export const STATE_LIFETIME_SECONDS = 600;

/** Where a callback sends the browser: with what the sign-in answered, or back with an error code. */
export type CallbackResult<T, Code extends string = OAuthFailure['code']> =
  | { outcome: 'signed_in'; redirectUrl: string; signedIn: T }
  | { outcome: 'failed'; redirectUrl: string; code: Code; reason: string };

/** What signs the profile's user in (auth's session issuer), in the transaction that found or linked them. */
export type SignInUser<T> = (trx: Db, user: User) => Promise<T>;

const toIdentity = (row: IdentityRecord): Identity => ({
  id: row.id, provider: row.provider_id, subject: row.subject, email: row.email, emailVerified: row.email_verified,
  createdAt: row.created_at.toISOString(), lastSignInAt: row.last_sign_in_at.toISOString(),
});

/** Two callbacks for the same new account wait for each other, in every process: the second finds the first's user. */
const identityLockKey = (environmentId: string, providerId: string, subject: string) =>
  sha256(`${environmentId}\n${providerId}\n${subject}`).readIntBE(0, 6);

const fail = (code: OAuthFailure['code'], message: string) => new OAuthFailure(code, message);

/** External sign-in: the authorization dance, and the identities it links. */
export function createOAuthService({ db, clock, sealer, relyingParty, users, metrics }: OAuthDeps) {
  const providers = createProvidersStore(db);
  const states = createStatesStore(db);
  const identities = createIdentitiesStore(db);

  /** What the relying party runs a provider with; the key changes with every edit, so no stale configuration is used. */
  const settingsOf = (row: ProviderRecord): ProviderSettings => ({
    key: `${row.environment_id}:${row.id}:${row.updated_at.getTime()}`, type: row.type, clientId: row.client_id,
    clientSecret: () => sealer.open(row.client_secret_sealed).toString('utf8'),
    ...resolveEndpoints(row.type, { issuer: row.issuer, authorizationUrl: row.authorization_url, tokenUrl: row.token_url, userInfoUrl: row.user_info_url, scopes: row.scopes }),
  });

  const listOwnIdentities = async (environmentId: string, userId: string) =>
    ({ items: (await identities.listForUser(environmentId, userId)).map(toIdentity) });

  /** The provider's row when it exists and is enabled; else the failure that sends the browser back. */
  function enabled(row: ProviderRecord | undefined, providerId: string) {
    if (!row?.enabled) throw fail('provider_not_found', `no enabled provider "${providerId}"`);
    return row;
  }

  const recordUserEvent = (trx: Db, environmentId: string, userId: string, action: string, by: Caller, metadata = {}) =>
    recordOwnEvent(trx, environmentId, { action, ...by, targets: [{ type: 'user', id: userId }], metadata }, clock.now());

  /** Links the profile's identity to the user, in the caller's transaction, and records it. */
  async function link(trx: Db, env: ClientEnvironment, user: User, providerId: string, profile: Profile, context: RequestContext) {
    const identity = await createIdentitiesStore(trx).insert(env.id, {
      userId: user.id, providerId, subject: profile.subject, email: profile.email, emailVerified: profile.emailVerified,
    }, clock.now());
    await recordOwnEvent(trx, env.id, {
      action: 'user.identity_linked', ...userCaller(user.id, context),
      targets: [{ type: 'user', id: user.id }, { type: 'identity', id: identity.id }], metadata: { provider: providerId },
    }, clock.now());
  }

  /** The user the identity already belongs to; undefined when it belongs to nobody (or to a deleted user, whose link goes). */
  async function userOfIdentity(trx: Db, env: ClientEnvironment, providerId: string, profile: Profile) {
    const store = createIdentitiesStore(trx);
    const identity = await store.findBySubject(env.id, providerId, profile.subject);
    if (!identity) return undefined;
    const found = await lockUserCredentials(trx, env.id, identity.user_id);
    if (!found || found.user.status === 'deleted') {
      await store.deleteOne(env.id, identity.id);
      return undefined;
    }
    await store.recordSignIn(env.id, identity.id, profile.email, profile.emailVerified, clock.now());
    return found.user;
  }

  /**
   * The live user with the provider's verified email, when the environment links by email. A user who had
   * never proven that email gets it verified and loses the unproven password and its sessions: whoever
   * signed up with another's address first must not keep a way into the owner's account.
   */
  async function userToLink(trx: Db, env: ClientEnvironment, profile: Profile, context: RequestContext) {
    if (!profile.email || !profile.emailVerified || !env.settings.oauthLinkVerifiedEmails) return undefined;
    const user = await lockLiveUserByEmail(trx, env.id, profile.email);
    if (!user || user.emailVerifiedAt !== null || user.status !== 'active') return user;
    const now = clock.now();
    const proven = (await proveEmailByProvider(trx, env.id, user.id, now))!;
    const revokedSessions = await revokeAllSessions(trx, env.id, user.id, now);
    await recordUserEvent(trx, env.id, user.id, 'user.email_verified', userCaller(user.id, context), { via: 'oauth', passwordRemoved: true, revokedSessions });
    await enrollByVerifiedEmail(trx, env.id, proven, now);
    return proven;
  }

  /** A new user from the profile, under the environment's sign-up rules and the API's email rule. */
  async function createUser(trx: Db, env: ClientEnvironment, providerId: string, profile: Profile, context: RequestContext) {
    const { requiredFields } = env.settings;
    if (requiredFields.includes('email') && !profile.email) throw fail('email_required', 'the provider gave no email and the environment requires one');
    if (profile.email && !isAcceptableEmail(normalizeEmail(profile.email))) throw fail('email_invalid', 'the provider gave an email the API would refuse');
    if (requiredFields.includes('name') && !(profile.name || (profile.firstName && profile.lastName))) throw fail('name_required', 'the provider gave no name and the environment requires one');
    const now = clock.now();
    const user = await insertUser(trx, env.id, {
      email: profile.email && normalizeEmail(profile.email), emailVerifiedAt: profile.email && profile.emailVerified ? now : null,
      registrationState: 'complete', passwordHash: null, firstName: profile.firstName, lastName: profile.lastName,
      name: profile.name ?? joinName(profile.firstName, profile.lastName), publicMetadata: {}, privateMetadata: {}, unsafeMetadata: {},
    }, now).catch((err: unknown) => {
      if (err instanceof ProblemError && err.code === 'email_taken') throw fail('email_taken', 'another account has the email and it cannot be linked');
      throw err;
    });
    await recordUserEvent(trx, env.id, user.id, 'user.signed_up', userCaller(user.id, context), { method: 'oauth', provider: providerId });
    await enrollByVerifiedEmail(trx, env.id, user, now);
    return user;
  }

  /** The user the profile's email links to, or a new one; the identity is linked to it. */
  async function linkedUser(trx: Db, env: ClientEnvironment, providerId: string, profile: Profile, context: RequestContext) {
    const user = await userToLink(trx, env, profile, context) ?? await createUser(trx, env, providerId, profile, context);
    await link(trx, env, user, providerId, profile, context);
    return user;
  }

  /** Finds, links or creates the user and signs them in, in one transaction (a refusal undoes all of it). */
  const signInWithProfile = <T>(env: ClientEnvironment, providerId: string, profile: Profile, context: RequestContext, signIn: SignInUser<T>) =>
    transactionWithLock(db, identityLockKey(env.id, providerId, profile.subject), async (trx) => {
      const user = await userOfIdentity(trx, env, providerId, profile) ?? await linkedUser(trx, env, providerId, profile, context);
      if (user.status === 'banned') throw fail('user_banned', 'the user is banned');
      return signIn(trx, user);
    });

  function sameBrowser(expectedHash: Buffer, browserToken: string | undefined) {
    return browserToken !== undefined && timingSafeEqual(expectedHash, sha256(browserToken));
  }

  /** Runs the callback's steps; an OAuthFailure becomes the error code the browser goes back with. Counted by provider type. */
  async function finish<T>(redirectUrl: string, type: string, run: () => Promise<T>): Promise<CallbackResult<T>> {
    try {
      const signedIn = await run();
      metrics.oauthSignIns.inc({ provider_type: type, result: 'success' });
      return { outcome: 'signed_in', redirectUrl, signedIn };
    } catch (err) {
      if (!(err instanceof OAuthFailure)) throw err;
      metrics.oauthSignIns.inc({ provider_type: type, result: err.code });
      return { outcome: 'failed', redirectUrl, code: err.code, reason: err.message };
    }
  }

  return {
    // Client plane: the dance.
    listEnabled: async (environmentId: string) => ({ items: await providers.listEnabled(environmentId) }),

    /**
     * Starts a sign-in: a single-use state bound to this browser (the returned token goes in an HttpOnly
     * cookie), PKCE and, for OpenID Connect, a nonce. Answers the provider's URL, or the failure to send
     * the browser back with; a redirect URL outside the allowed origins is refused before anything else.
     */
    async authorize(env: ClientEnvironment, providerId: string, redirectUrl: string): Promise<{ location: string; browserToken: string } | CallbackResult<never>> {
      if (!isAllowedRedirect(redirectUrl, env.allowedOrigins)) throw redirectUrlNotAllowed();
      try {
        const provider = settingsOf(enabled(await providers.find(env.id, providerId), providerId));
        const state = randomToken('');
        const browserToken = randomToken('');
        const { url, secrets } = await relyingParty.authorizationUrl(provider, callbackUrl(env, providerId), state);
        const now = clock.now();
        await states.insert(env.id, {
          stateHash: sha256(state), providerId, browserHash: sha256(browserToken), redirectUrl,
          secretsSealed: sealer.seal(Buffer.from(JSON.stringify(secrets))), expiresAt: new Date(now.getTime() + STATE_LIFETIME_SECONDS * 1000),
        }, now);
        return { location: url.href, browserToken };
      } catch (err) {
        if (!(err instanceof OAuthFailure)) throw err;
        return { outcome: 'failed', redirectUrl, code: err.code, reason: err.message };
      }
    },

    /**
     * The provider sent the browser back. The state is used up first (once, whatever follows); without a
     * live state there is no safe place to send the browser, so that is a problem answer. Everything
     * after it ends in a redirect to the state's own redirect URL: signed in, or with an error code.
     */
    async callback<T>(env: ClientEnvironment, providerId: string, query: Record<string, string | undefined>, rawQuery: string,
      browserToken: string | undefined, context: RequestContext, signIn: SignInUser<T>): Promise<CallbackResult<T>> {
      const state = query.state;
      if (!state) throw invalidState();
      const pending = await states.consume(env.id, sha256(state), clock.now());
      if (!pending) throw invalidState();
      const row = await providers.find(env.id, providerId);
      return finish(pending.redirect_url, row?.type ?? 'unknown', async () => {
        if (pending.provider_id !== providerId || !sameBrowser(pending.browser_hash, browserToken)) {
          throw fail('state_mismatch', 'the state was started for another provider or in another browser');
        }
        if (query.error) throw fail(query.error === 'access_denied' ? 'access_denied' : 'provider_error', `the provider answered error=${query.error}`);
        const provider = settingsOf(enabled(row, providerId));
        const secrets = JSON.parse(sealer.open(pending.secrets_sealed).toString('utf8')) as AuthorizationSecrets;
        const url = new URL(`${callbackUrl(env, providerId)}?${rawQuery}`);
        const profile = await relyingParty.signIn(provider, url, state, secrets);
        return signInWithProfile(env, providerId, profile, context, signIn);
      });
    },

    // Identities.
    /** A user's identities (Server API): 404 for a user the environment does not have. */
    async listIdentities(environmentId: string, userId: string) {
      await users.get(environmentId, userId);
      return listOwnIdentities(environmentId, userId);
    },
    listOwnIdentities,
    /** Unlinks one of the signed-in user's identities, unless it is the last way to sign in (no password, no other identity). */
    unlink: (environmentId: string, session: SessionContext, identityId: string, by: Caller) => {
      if (session.impersonatorId !== null) throw impersonatedUnlink();
      return inTransaction(db, async (trx) => {
        const found = await lockUserCredentials(trx, environmentId, session.userId);
        const store = createIdentitiesStore(trx);
        const removed = await store.deleteForUser(environmentId, session.userId, identityId);
        if (!removed) throw identityNotFound();
        if (!found?.passwordHash && (await store.countForUser(environmentId, session.userId)) === 0) throw lastSignInMethod();
        await recordOwnEvent(trx, environmentId, {
          action: 'user.identity_unlinked', ...by, targets: [{ type: 'user', id: session.userId }, { type: 'identity', id: identityId }],
          metadata: { provider: removed.provider_id },
        }, clock.now());
      });
    },
    pruneExpiredStates: () => states.deleteExpired(clock.now()),
  };
}
export type OAuthService = ReturnType<typeof createOAuthService>;

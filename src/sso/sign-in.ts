import { randomBytes, timingSafeEqual } from 'node:crypto';
import { isAllowedRedirect } from '../environments/origins.js';
import { redirectUrlNotAllowed } from '../oauth/errors.js';
import { resolveEndpoints } from '../oauth/presets.js';
import { OAuthFailure, type AuthorizationSecrets, type Profile, type ProviderSettings, type RelyingParty } from '../oauth/relying-party.js';
import type { CallbackResult, SignInUser } from '../oauth/service.js';
import { mappedRole, type Role } from '../organizations/roles.js';
import { joinOrganization, lockOrganization, membershipIn, type OrganizationsService } from '../organizations/service.js';
import { userCaller, type RequestContext } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/encryption.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { transactionWithLock, type Db } from '../platform/db/database.js';
import type { ClientEnvironment } from '../platform/http/planes.js';
import { isUuid } from '../platform/ids.js';
import type { Mailer } from '../platform/mail/mailer.js';
import { lockUserCredentials, normalizeEmail } from '../users/accounts.js';
import type { User } from '../users/schemas.js';
import { invalidSsoState, missingSsoTarget } from './errors.js';
import { createFirstSignIn, SsoFailure, type SsoErrorCode, type SsoProfile } from './first-sign-in.js';
import { SamlRefusal, type SamlAssertion, type SamlServiceProvider, type SamlSettings } from './saml.js';
import { ssoUrl } from './service.js';
import { createSsoStore, type ConnectionRecord } from './store.js';

/** How long a started sign-in may take at the IdP. */
export const SSO_REQUEST_LIFETIME_SECONDS = 600;

export interface SsoSignInDeps {
  db: Db; clock: Clock; sealer: Sealer; saml: SamlServiceProvider; relyingParty: RelyingParty; mailer: Mailer;
  organizations: Pick<OrganizationsService, 'rolesOf'>;
}

/** An OpenID `email_verified` claim: true or false (as a boolean or, as some IdPs send it, a string), null when absent. */
const emailVerifiedClaim = (value: unknown) => (value === undefined || value === null ? null : value === true || value === 'true');

const groupsIn = (value: unknown) => (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string' && v !== '');

/** Two sign-ins of one new subject wait for each other, in every process: the second finds the first's user. */
const identityLockKey = (environmentId: string, connectionId: string, subject: string) => sha256(`sso\n${environmentId}\n${connectionId}\n${subject}`).readIntBE(0, 6);

const sameBrowser = (expectedHash: Buffer, browserToken: string | undefined) =>
  browserToken !== undefined && timingSafeEqual(expectedHash, sha256(browserToken));

/**
 * Enterprise sign-in through an organization's connection: the organization's verified domain (or its id) finds
 * the connection, the browser goes to the IdP, and the IdP's answer (a SAML response on the ACS, an OpenID Connect
 * callback) signs the user in, creating the user and the membership on a first sign-in (JIT).
 */
export function createSsoSignIn({ db, clock, sealer, saml, relyingParty, mailer, organizations }: SsoSignInDeps) {
  const store = createSsoStore(db);
  const firstSignIn = createFirstSignIn({ clock, mailer });

  const samlSettings = (env: ClientEnvironment, row: ConnectionRecord): SamlSettings => ({
    spEntityId: ssoUrl(env.frontendHost, row.id, 'metadata'), acsUrl: ssoUrl(env.frontendHost, row.id, 'acs'), groupsAttribute: row.groups_attribute,
    idp: { entityId: row.idp_entity_id!, ssoUrl: row.idp_sso_url!, certificates: row.idp_certificates! },
  });

  const oidcSettings = (row: ConnectionRecord): ProviderSettings => ({
    key: `sso:${row.environment_id}:${row.id}:${row.updated_at.getTime()}`, type: 'oidc', clientId: row.client_id!,
    clientSecret: () => sealer.open(row.client_secret_sealed!).toString('utf8'),
    ...resolveEndpoints('oidc', { issuer: row.issuer, scopes: row.scopes ?? undefined }),
  });

  /** A connection by the id a route's path names (anything but a UUID names none). */
  const connectionById = async (env: ClientEnvironment, connectionId: string) => (isUuid(connectionId) ? store.findById(env.id, connectionId) : undefined);

  async function connectionFor(env: ClientEnvironment, query: { email?: string; organization_id?: string }) {
    if (query.organization_id) return isUuid(query.organization_id) ? store.firstEnabled(env.id, query.organization_id) : undefined;
    return store.findByEmailDomain(env.id, normalizeEmail(query.email!));
  }

  /** The IdP's URL for a new sign-in, and the request it answers (single use, bound to this browser). */
  async function start(env: ClientEnvironment, row: ConnectionRecord, redirectUrl: string) {
    const browserToken = randomToken('');
    let location: string;
    let key: string;
    let secrets: AuthorizationSecrets | null = null;
    if (row.type === 'saml') {
      key = `_${randomBytes(20).toString('hex')}`;
      location = await saml.authorizeUrl(samlSettings(env, row), key);
    } else {
      key = randomToken('');
      const started = await relyingParty.authorizationUrl(oidcSettings(row), ssoUrl(env.frontendHost, row.id, 'callback'), key);
      location = started.url.href;
      secrets = started.secrets;
    }
    const now = clock.now();
    await store.insertRequest(env.id, {
      keyHash: sha256(key), connectionId: row.id, browserHash: sha256(browserToken), redirectUrl,
      secretsSealed: secrets && sealer.seal(Buffer.from(JSON.stringify(secrets))), expiresAt: new Date(now.getTime() + SSO_REQUEST_LIFETIME_SECONDS * 1000),
    }, now);
    return { location, browserToken };
  }

  /** Runs what follows the IdP; an SsoFailure (or the relying party's OAuthFailure) becomes the code the browser goes back with. */
  async function finish<T>(redirectUrl: string, run: () => Promise<T>): Promise<CallbackResult<T, SsoErrorCode>> {
    try {
      return { outcome: 'signed_in', redirectUrl, signedIn: await run() };
    } catch (err) {
      if (err instanceof SsoFailure || err instanceof OAuthFailure) return { outcome: 'failed', redirectUrl, code: err.code, reason: err.message };
      throw err;
    }
  }

  /** The request a response answers, used up (400 when it is unknown, expired or used); `matches`: it is this connection's, started in this browser. */
  async function consume(env: ClientEnvironment, key: string, connectionId: string, browserToken: string | undefined) {
    const request = await store.consumeRequest(env.id, sha256(key), clock.now());
    if (!request) throw invalidSsoState();
    const matches = request.connection_id === connectionId && sameBrowser(request.browser_hash, browserToken);
    return { request, matches };
  }

  /** The live user the subject is linked to, else undefined (a link to a deleted user goes). */
  async function linkedUser(trx: Db, env: ClientEnvironment, row: ConnectionRecord, subject: string) {
    const sso = createSsoStore(trx);
    const identity = await sso.findIdentity(env.id, row.id, subject);
    if (!identity) return undefined;
    const found = await lockUserCredentials(trx, env.id, identity.user_id);
    if (!found || found.user.status === 'deleted') {
      await sso.deleteIdentity(env.id, row.id, subject);
      return undefined;
    }
    await sso.recordIdentitySignIn(env.id, row.id, subject, clock.now());
    return found.user;
  }

  /** Makes the user a member of the connection's organization, with the role their groups map to, unless they are one. */
  async function provisionMembership(trx: Db, env: ClientEnvironment, row: ConnectionRecord, user: User, role: Role, context: RequestContext) {
    if (await membershipIn(trx, env.id, row.organization_id, user.id)) return;
    await lockOrganization(trx, env.id, row.organization_id);
    await joinOrganization(trx, env.id, row.organization_id, user.id, role, userCaller(user.id, context), clock.now());
  }

  /** Finds, links or creates the user and signs them in, in one transaction (a refusal undoes all of it). */
  async function signInWithProfile<T>(env: ClientEnvironment, row: ConnectionRecord, profile: SsoProfile, context: RequestContext, signIn: SignInUser<T>) {
    // Read before the transaction: it must not wait on a second connection while it holds its own.
    const role = mappedRole((await organizations.rolesOf(env.id, row.organization_id)).roles, row.group_roles as Record<string, string>, profile.groups);
    return transactionWithLock(db, identityLockKey(env.id, row.id, profile.subject), async (trx) => {
      const user = await linkedUser(trx, env, row, profile.subject) ?? await firstSignIn(trx, env, row, profile, context);
      if (user.status === 'banned') throw new SsoFailure('user_banned', 'the user is banned');
      await provisionMembership(trx, env, row, user, role, context);
      return signIn(trx, user);
    });
  }

  // SAML has no standard statement of whether the IdP verified the email.
  const fromSaml = (assertion: SamlAssertion): SsoProfile => ({ ...assertion, emailVerified: null });

  const fromOidc = (row: ConnectionRecord, profile: Profile): SsoProfile => ({
    subject: profile.subject, email: profile.email, emailVerified: emailVerifiedClaim(profile.claims.email_verified),
    firstName: profile.firstName, lastName: profile.lastName, name: profile.name, groups: groupsIn(profile.claims[row.groups_attribute]),
  });

  return {
    /**
     * Starts a sign-in: `redirect_url` must be allowed (400 otherwise); the connection is the organization's
     * (by `organization_id`, or by the verified domain of `email`). Without one, the browser goes straight back
     * with `error=sso_connection_not_found`.
     */
    async authorize(env: ClientEnvironment, query: { redirect_url: string; email?: string; organization_id?: string }):
      Promise<{ location: string; browserToken: string } | CallbackResult<never, SsoErrorCode>> {
      if (!isAllowedRedirect(query.redirect_url, env.allowedOrigins)) throw redirectUrlNotAllowed();
      if (!query.email && !query.organization_id) throw missingSsoTarget();
      const row = await connectionFor(env, query);
      if (!row) return { outcome: 'failed', redirectUrl: query.redirect_url, code: 'sso_connection_not_found', reason: 'no enabled SSO connection for this email or organization' };
      try {
        return await start(env, row, query.redirect_url);
      } catch (err) {
        if (!(err instanceof OAuthFailure)) throw err;
        return { outcome: 'failed', redirectUrl: query.redirect_url, code: err.code, reason: err.message };
      }
    },

    /**
     * A SAML response posted to the ACS. A response that fails validation (signature, issuer, audience,
     * recipient, time, or not answering a live request of this service) is 400: it cannot be trusted to say
     * where the browser came from. A valid one uses its request up, then ends in a redirect to the request's URL.
     */
    async acs<T>(env: ClientEnvironment, connectionId: string, samlResponse: string, browserToken: string | undefined, context: RequestContext, signIn: SignInUser<T>) {
      const row = await connectionById(env, connectionId);
      if (!row?.enabled || row.type !== 'saml') throw invalidSsoState();
      const settings = samlSettings(env, row);
      let assertion;
      try {
        assertion = await saml.validate(settings, samlResponse, (requestId) => store.hasLiveRequest(env.id, sha256(requestId), clock.now()));
      } catch (err) {
        if (err instanceof SamlRefusal) throw Object.assign(invalidSsoState(), { cause: err });
        throw err;
      }
      const { request, matches } = await consume(env, assertion.inResponseTo, row.id, browserToken);
      return finish(request.redirect_url, async () => {
        if (!matches) throw new SsoFailure('state_mismatch', 'the response answers a request of another connection or browser');
        if (!(await store.useAssertion(env.id, row.id, assertion.assertionId, assertion.notOnOrAfter))) throw new SsoFailure('invalid_response', 'the assertion was used before');
        return signInWithProfile(env, row, fromSaml(assertion), context, signIn);
      });
    },

    /** An OpenID Connect IdP sent the browser back: the state is used up first, then the code exchanged and the ID token validated. */
    async callback<T>(env: ClientEnvironment, connectionId: string, query: Record<string, string | undefined>, rawQuery: string,
      browserToken: string | undefined, context: RequestContext, signIn: SignInUser<T>) {
      if (!query.state) throw invalidSsoState();
      const { request, matches } = await consume(env, query.state, connectionId, browserToken);
      const row = await store.findById(env.id, request.connection_id);
      return finish(request.redirect_url, async () => {
        if (!matches || !row?.enabled || row.type !== 'oidc') throw new SsoFailure('state_mismatch', 'the state was started for another connection or in another browser');
        if (query.error) throw new SsoFailure(query.error === 'access_denied' ? 'access_denied' : 'provider_error', `the IdP answered error=${query.error}`);
        const secrets = JSON.parse(sealer.open(request.secrets_sealed!).toString('utf8')) as AuthorizationSecrets;
        const url = new URL(`${ssoUrl(env.frontendHost, row.id, 'callback')}?${rawQuery}`);
        const profile = await relyingParty.signIn(oidcSettings(row), url, query.state!, secrets);
        return signInWithProfile(env, row, fromOidc(row, profile), context, signIn);
      });
    },

    /** The service provider metadata of a SAML connection; undefined when there is no such enabled connection. */
    async metadata(env: ClientEnvironment, connectionId: string) {
      const row = await connectionById(env, connectionId);
      return row?.type === 'saml' ? saml.metadata(samlSettings(env, row)) : undefined;
    },
  };
}
export type SsoSignIn = ReturnType<typeof createSsoSignIn>;

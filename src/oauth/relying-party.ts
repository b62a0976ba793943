import type * as OpenIdClient from 'openid-client';
import { createCache } from '../platform/cache.js';
import { identityProviderFetch, RefusedTarget } from '../platform/net/outbound.js';
import type { Clock } from '../platform/clock.js';
import { isLoopback, type Endpoints } from './presets.js';
import type { ProviderType } from './schemas.js';

/**
 * The relying party: every exchange with a provider goes through openid-client (discovery, the
 * authorization URL with PKCE and nonce, the code exchange with the RFC 9207 `iss` check and the ID token
 * validation, the userinfo and API calls). Nothing here touches the database.
 */

/** A provider as the relying party needs it: what to call, and as whom. */
export interface ProviderSettings extends Endpoints {
  key: string;
  type: ProviderType;
  clientId: string;
  /** Opened only when the provider's configuration is built, not on every sign-in. */
  clientSecret: () => string;
}

/** What the service learns of the person who signed in. */
export interface Profile {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  firstName: string | null;
  lastName: string | null;
  name: string | null;
  /** Every claim the provider sent (an SSO connection reads its groups claim from them). */
  claims: Record<string, unknown>;
}

/** The callback error codes the browser is sent back with (`?error=`). */
export type CallbackErrorCode =
  | 'access_denied' | 'provider_error' | 'provider_unavailable' | 'invalid_response' | 'state_mismatch'
  | 'provider_not_found' | 'email_required' | 'email_invalid' | 'name_required' | 'email_taken' | 'user_banned' | 'sso_required';

/** A failed exchange with the provider: the code the browser gets, and what happened (for the log only). */
export class OAuthFailure extends Error {
  constructor(readonly code: CallbackErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export interface AuthorizationSecrets { codeVerifier: string; nonce: string | null }

// Discovery documents change rarely; a provider's configuration is refetched after an hour, or at once when
// the provider is edited (the cache key carries its last update).
const CONFIGURATION_TTL_MS = 60 * 60_000;

const causes = (err: unknown): unknown[] => {
  const chain: unknown[] = [];
  for (let e = err; e !== undefined && chain.length < 10; e = (e as { cause?: unknown })?.cause) chain.push(e);
  return chain;
};

/** Sorts a failure of openid-client or of the network into the code the browser is told. */
/** openid-client, loaded by the first exchange with a provider: a service without external sign-in never holds it in memory. */
let client: typeof OpenIdClient | undefined;
const loadClient = async () => (client ??= await import('openid-client'));

export function classifyFailure(err: unknown): OAuthFailure {
  if (err instanceof OAuthFailure) return err;
  const chain = causes(err);
  const refused = chain.find((e) => e instanceof RefusedTarget);
  if (refused) return new OAuthFailure('provider_unavailable', `the provider was not contacted: ${(refused as Error).message}`, { cause: err });
  const unreachable = chain.some((e) => e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError' || (e instanceof TypeError && /fetch failed/.test(e.message))));
  // By its tag: the responses come from undici's fetch (identityProviderFetch), another copy of the global Response class.
  const serverError = chain.some((e) => (Object.prototype.toString.call(e) === '[object Response]' && (e as Response).status >= 500) || (client !== undefined && e instanceof client.ResponseBodyError && e.status >= 500));
  if (unreachable || serverError) return new OAuthFailure('provider_unavailable', `the provider did not answer usefully: ${(err as Error).message}`, { cause: err });
  if (client !== undefined && err instanceof client.ResponseBodyError) return new OAuthFailure('provider_error', `the provider refused: ${err.error} ${err.error_description ?? ''}`, { cause: err });
  return new OAuthFailure('invalid_response', `the provider's answer failed validation: ${(err as Error).message}`, { cause: err });
}

const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

/** The profile from OpenID Connect claims (the ID token, completed by userinfo). */
function profileFromClaims(claims: Record<string, unknown>): Profile {
  const subject = claims.sub;
  if (typeof subject !== 'string' || subject === '') throw new OAuthFailure('invalid_response', 'the profile has no subject');
  return {
    subject, email: text(claims.email), emailVerified: claims.email_verified === true || claims.email_verified === 'true',
    firstName: text(claims.given_name), lastName: text(claims.family_name), name: text(claims.name), claims,
  };
}

/** The profile from a plain OAuth2 userinfo answer: `sub` or `id` names the user. */
function profileFromUserInfo(info: Record<string, unknown>): Profile {
  const id = info.sub ?? info.id;
  return profileFromClaims({ ...info, sub: typeof id === 'number' ? String(id) : id });
}

interface GitHubEmail { email: string; primary: boolean; verified: boolean }

/**
 * The client secret as the provider's metadata asks for it: client_secret_basic, the OpenID default, unless
 * the provider lists only client_secret_post. Decided per call, so the discovered configuration is kept
 * as openid-client made it (for Microsoft's multi-tenant issuer it carries the tenant check).
 */
const secretAuth = (client: typeof OpenIdClient, secret: string): OpenIdClient.ClientAuth => (as, c, body, headers) => {
  const methods = as.token_endpoint_auth_methods_supported;
  const auth = !methods || methods.includes('client_secret_basic') ? client.ClientSecretBasic(secret) : client.ClientSecretPost(secret);
  return auth(as, c, body, headers);
};

export function createRelyingParty({ clock, timeoutSeconds }: { clock: Clock; timeoutSeconds: number }) {
  const configurations = createCache<OpenIdClient.Configuration>(clock, { ttlMs: CONFIGURATION_TTL_MS, maxEntries: 10_000 });

  async function configure(provider: ProviderSettings): Promise<OpenIdClient.Configuration> {
    const client = await loadClient();
    const insecure = [provider.issuer, provider.authorizationUrl, provider.tokenUrl, provider.userInfoUrl]
      .some((url) => url?.startsWith('http:') && isLoopback(new URL(url)));
    const execute = insecure ? [client.allowInsecureRequests] : [];
    let config: OpenIdClient.Configuration;
    const clientSecret = provider.clientSecret();
    if (provider.oidc) {
      // OpenID Connect lets a client trust an ID token from the token endpoint on TLS alone; non-repudiation
      // checks verify its signature against the provider's JWKS as well, so a token it did not sign never counts.
      config = await client.discovery(new URL(provider.issuer!), provider.clientId, { client_secret: clientSecret }, secretAuth(client, clientSecret),
        { execute: [...execute, client.enableNonRepudiationChecks], timeout: timeoutSeconds, [client.customFetch]: identityProviderFetch });
    } else {
      const server: OpenIdClient.ServerMetadata = {
        // A plain OAuth2 server may still send `iss` (RFC 9207); without a configured issuer it is its origin.
        issuer: provider.issuer ?? new URL(provider.authorizationUrl!).origin,
        authorization_endpoint: provider.authorizationUrl!, token_endpoint: provider.tokenUrl!, userinfo_endpoint: provider.userInfoUrl!,
      };
      config = new client.Configuration(server, provider.clientId, { client_secret: clientSecret }, client.ClientSecretPost(clientSecret));
      for (const apply of execute) apply(config);
    }
    config.timeout = timeoutSeconds;
    config[client.customFetch] = identityProviderFetch;
    return config;
  }

  async function configuration(provider: ProviderSettings) {
    const cached = configurations.get(provider.key);
    if (cached) return cached;
    const generation = configurations.generation();
    const config = await configure(provider);
    configurations.set(provider.key, config, generation);
    return config;
  }

  /** A JSON resource of the provider's API, read with the access token. */
  async function getJson<T>(config: OpenIdClient.Configuration, accessToken: string, url: string, accept = 'application/json'): Promise<T> {
    const headers = new Headers({ accept, 'user-agent': 'Gatehouse' });
    const response = await (await loadClient()).fetchProtectedResource(config, accessToken, new URL(url), 'GET', undefined, headers);
    if (!response.ok) throw new OAuthFailure(response.status >= 500 ? 'provider_unavailable' : 'provider_error', `the provider answered ${response.status} on ${url}`);
    return response.json() as Promise<T>;
  }

  async function githubProfile(config: OpenIdClient.Configuration, provider: ProviderSettings, accessToken: string): Promise<Profile> {
    const accept = 'application/vnd.github+json';
    const user = await getJson<Record<string, unknown>>(config, accessToken, provider.userInfoUrl!, accept);
    const emails = await getJson<GitHubEmail[]>(config, accessToken, `${provider.userInfoUrl}/emails`, accept);
    // Only an address GitHub verified counts; the primary one first.
    const verified = emails.find((e) => e.primary && e.verified) ?? emails.find((e) => e.verified);
    const [first, ...rest] = text(user.name)?.split(/\s+/) ?? [];
    return {
      ...profileFromUserInfo(user), email: verified?.email.toLowerCase() ?? null, emailVerified: verified !== undefined,
      name: text(user.name) ?? text(user.login), firstName: first ?? null, lastName: rest.join(' ') || null,
    };
  }

  return {
    /** The provider's authorization URL for a new attempt, and the secrets its callback must present. */
    async authorizationUrl(provider: ProviderSettings, redirectUri: string, state: string): Promise<{ url: URL; secrets: AuthorizationSecrets }> {
      const config = await configuration(provider).catch((err: unknown) => { throw classifyFailure(err); });
      const client = await loadClient();
      const codeVerifier = client.randomPKCECodeVerifier();
      const nonce = provider.oidc ? client.randomNonce() : null;
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri, scope: provider.scopes.join(' '), state,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256',
        ...(nonce && { nonce }),
      });
      return { url, secrets: { codeVerifier, nonce } };
    },

    /**
     * Exchanges the code and reads who signed in. `callbackUrl` is the full URL the provider sent the
     * browser to (the registered redirect URI and the provider's parameters).
     */
    async signIn(provider: ProviderSettings, callbackUrl: URL, state: string, secrets: AuthorizationSecrets): Promise<Profile> {
      try {
        const config = await configuration(provider);
        const client = await loadClient();
        const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: secrets.codeVerifier, expectedState: state, idTokenExpected: provider.oidc,
          ...(secrets.nonce && { expectedNonce: secrets.nonce }),
        });
        if (provider.type === 'github') return await githubProfile(config, provider, tokens.access_token);
        if (!provider.oidc) return profileFromUserInfo(await getJson(config, tokens.access_token, provider.userInfoUrl!));
        const claims = tokens.claims()!;
        // Many providers put only `sub` in the ID token and the rest behind the userinfo endpoint.
        const needsUserInfo = claims.email === undefined && config.serverMetadata().userinfo_endpoint;
        return profileFromClaims(needsUserInfo ? { ...(await client.fetchUserInfo(config, tokens.access_token, claims.sub)), ...claims } : claims);
      } catch (err) {
        throw classifyFailure(err);
      }
    },
  };
}
export type RelyingParty = ReturnType<typeof createRelyingParty>;

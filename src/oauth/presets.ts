import type { ProviderType } from './schemas.js';

/** What a provider type brings when the configuration leaves it out. */
interface Preset {
  /** OpenID Connect: discovered from the issuer, signs in with the ID token. */
  oidc: boolean;
  issuer?: string;
  authorizationUrl?: string;
  tokenUrl?: string;
  userInfoUrl?: string;
  scopes: string[];
}

const OIDC_SCOPES = ['openid', 'email', 'profile'];

export const PRESETS: Record<ProviderType, Preset> = {
  oidc: { oidc: true, scopes: OIDC_SCOPES },
  google: { oidc: true, issuer: 'https://accounts.google.com', scopes: OIDC_SCOPES },
  // `common` takes work and personal accounts of any tenant; openid-client checks the ID token's issuer
  // against the tenant it names (`tid`). A single-tenant app sets its own tenant's issuer.
  microsoft: { oidc: true, issuer: 'https://login.microsoftonline.com/common/v2.0', scopes: OIDC_SCOPES },
  github: {
    oidc: false,
    authorizationUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    userInfoUrl: 'https://api.github.com/user',
    scopes: ['read:user', 'user:email'],
  },
  oauth2: { oidc: false, scopes: [] },
};

/** The settings a provider runs with: the configured values over its type's preset. */
export interface Endpoints {
  oidc: boolean;
  issuer: string | null;
  authorizationUrl: string | null;
  tokenUrl: string | null;
  userInfoUrl: string | null;
  scopes: string[];
}

export function resolveEndpoints(type: ProviderType, configured: Partial<Omit<Endpoints, 'oidc'>>): Endpoints {
  const preset = PRESETS[type];
  const scopes = configured.scopes ?? preset.scopes;
  return {
    oidc: preset.oidc,
    issuer: configured.issuer ?? preset.issuer ?? null,
    authorizationUrl: configured.authorizationUrl ?? preset.authorizationUrl ?? null,
    tokenUrl: configured.tokenUrl ?? preset.tokenUrl ?? null,
    userInfoUrl: configured.userInfoUrl ?? preset.userInfoUrl ?? null,
    // An OpenID Connect provider answers with an ID token only when asked for `openid`.
    scopes: preset.oidc && !scopes.includes('openid') ? ['openid', ...scopes] : scopes,
  };
}

/** The fields a type cannot run without, as [{path, message}]. */
export function missingEndpoints(type: ProviderType, endpoints: Endpoints): { path: string; message: string }[] {
  const required: (keyof Endpoints)[] = PRESETS[type].oidc ? ['issuer'] : ['authorizationUrl', 'tokenUrl', 'userInfoUrl'];
  return required.filter((field) => !endpoints[field]).map((field) => ({ path: `/${field}`, message: `is required for a provider of type ${type}` }));
}

const LOOPBACK = /^(localhost|[^:]+\.localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

/** Whether the URL is on a loopback host, the only place plain http is accepted (local development, tests). */
export const isLoopback = (url: URL) => LOOPBACK.test(url.hostname);

/** An endpoint the service calls or sends browsers to: https, or http on a loopback host; no credentials or fragment. */
export function endpointProblem(value: string): string | undefined {
  let url: URL;
  try { url = new URL(value); } catch { return 'must be an absolute URL'; }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url))) return 'must use https (http only on a loopback host)';
  if (url.username || url.password || url.hash) return 'must not carry credentials or a fragment';
  return undefined;
}

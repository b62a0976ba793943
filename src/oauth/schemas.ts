import { Type, type Static } from 'typebox';
import { DateTime, Nullable, Uuid } from '../platform/http/common-schemas.js';

const ProviderTypeLiteral = Type.Union([Type.Literal('oidc'), Type.Literal('oauth2'), Type.Literal('google'), Type.Literal('github'), Type.Literal('microsoft')]);
export type ProviderType = Static<typeof ProviderTypeLiteral>;

const ProviderId = Type.String({
  pattern: '^[a-z0-9][a-z0-9_-]{0,62}$',
  description: 'The environment\'s own name for the provider ("google", "corp-sso"): 1 to 63 of a-z, 0-9, "_" and "-". It is the path segment of the client-plane routes.',
});
const EndpointUrl = Type.String({ minLength: 1, maxLength: 2048, description: 'https, or http on a loopback host (local development).' });

export const ProviderParams = Type.Object({ id: Uuid, providerId: ProviderId }, { additionalProperties: false });
export type ProviderParams = Static<typeof ProviderParams>;

export const PutProviderBody = Type.Object({
  type: Type.Unsafe<ProviderType>({
    ...ProviderTypeLiteral,
    description: '`oidc`: any OpenID Connect provider, from `issuer` (discovery). `oauth2`: a plain OAuth2 server with explicit `authorizationUrl`, `tokenUrl` and `userInfoUrl`. '
      + '`google`, `microsoft`: OpenID Connect presets (`issuer` may name a Microsoft tenant). `github`: GitHub\'s OAuth2 with its user and email API.',
  }),
  name: Type.String({ minLength: 1, maxLength: 100, description: 'Shown on the sign-in page ("Sign in with …").' }),
  clientId: Type.String({ minLength: 1, maxLength: 512 }),
  clientSecret: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Stored sealed and never returned. Required when the provider is created; when omitted on a replace, the stored secret is kept.' })),
  issuer: Type.Optional(EndpointUrl),
  authorizationUrl: Type.Optional(EndpointUrl),
  tokenUrl: Type.Optional(EndpointUrl),
  userInfoUrl: Type.Optional(EndpointUrl),
  scopes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+$' }), { maxItems: 50, uniqueItems: true, description: 'Default per type; `openid` is always requested from OpenID Connect providers.' })),
  enabled: Type.Boolean({ default: true }),
}, { additionalProperties: false });
export type PutProviderBody = Static<typeof PutProviderBody>;

export const Provider = Type.Object({
  id: Type.String(),
  type: ProviderTypeLiteral,
  name: Type.String(),
  clientId: Type.String(),
  issuer: Nullable(Type.String({ description: 'OpenID Connect: the issuer discovered from; plain OAuth2: the `iss` the authorization response may carry (RFC 9207).' })),
  authorizationUrl: Nullable(Type.String()),
  tokenUrl: Nullable(Type.String()),
  userInfoUrl: Nullable(Type.String()),
  scopes: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  callbackUrl: Type.String({ description: 'The redirect URI to register at the provider: {frontend_url}/_svc/auth/oauth2/{providerId}/callback.' }),
  createdAt: DateTime,
  updatedAt: DateTime,
}, { title: 'OAuthProvider', description: 'An external sign-in provider of the environment (never its client secret).' });
export type Provider = Static<typeof Provider>;
export const ProviderList = Type.Object({ items: Type.Array(Provider) });

export const ClientProvider = Type.Object({ id: Type.String(), name: Type.String(), type: Type.String() }, { title: 'OAuthProviderSummary' });
export const ClientProviderList = Type.Object({ items: Type.Array(ClientProvider) });

export const ClientProviderParams = Type.Object({ provider: ProviderId }, { additionalProperties: false });

export const AuthorizeQuery = Type.Object({
  redirect_url: Type.String({ minLength: 1, maxLength: 2048, description: 'Where the browser lands after the callback, signed in or with `?error=<code>`. Its origin must be an allowed origin.' }),
}, { additionalProperties: false });

/** The authorization response as the provider sends it back; anything else it adds is ignored. */
export const CallbackQuery = Type.Object({
  state: Type.Optional(Type.String({ maxLength: 512 })),
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  iss: Type.Optional(Type.String({ maxLength: 2048 })),
  error: Type.Optional(Type.String({ maxLength: 256 })),
}, { additionalProperties: true });

export const Identity = Type.Object({
  id: Uuid,
  provider: Type.String({ description: 'The provider id in this environment.' }),
  subject: Type.String({ description: "The user's id at the provider (`sub`, or GitHub's numeric id)." }),
  email: Nullable(Type.String()),
  emailVerified: Type.Boolean({ description: 'Whether the provider said the email is verified.' }),
  createdAt: DateTime,
  lastSignInAt: DateTime,
}, { title: 'Identity', description: 'A user\'s account at an external provider.' });
export type Identity = Static<typeof Identity>;
export const IdentityList = Type.Object({ items: Type.Array(Identity) });

export const IdentityParams = Type.Object({ identityId: Uuid }, { additionalProperties: false });
export const UserIdentityParams = Type.Object({ userId: Uuid }, { additionalProperties: false });

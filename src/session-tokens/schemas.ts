import { Type, type Static } from 'typebox';
import { DateTime, JsonObject, Nullable, Uuid } from '../platform/http/common-schemas.js';

export const SessionJwt = Type.Object({
  token: Type.String({ description: 'An ES256 JWT of the current session; verify it against the JWKS.' }),
  expiresAt: DateTime,
}, { title: 'SessionJwt', description: 'A short-lived JWT of the current session.' });

const PublicJwk = Type.Object({
  kty: Type.Literal('EC'), crv: Type.Literal('P-256'), x: Type.String(), y: Type.String(),
  kid: Type.String(), alg: Type.Literal('ES256'), use: Type.Literal('sig'),
});
export type PublicJwk = Static<typeof PublicJwk>;
export const Jwks = Type.Object({ keys: Type.Array(PublicJwk) }, { title: 'JWKS', description: 'RFC 7517 JSON Web Key Set' });

export const OpenIdConfiguration = Type.Object({
  issuer: Type.String(),
  jwks_uri: Type.String(),
  response_types_supported: Type.Array(Type.String()),
  subject_types_supported: Type.Array(Type.String()),
  id_token_signing_alg_values_supported: Type.Array(Type.String()),
  claims_supported: Type.Array(Type.String()),
}, { title: 'OpenIdConfiguration', description: 'OpenID Connect discovery for the environment\'s session tokens.' });

export const VerifyTokenBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 16_384 }) }, { additionalProperties: false });

export const VerifiedToken = Type.Object({
  claims: JsonObject,
  session: Type.Object({ id: Uuid, userId: Uuid }),
}, { title: 'VerifiedSessionToken', description: 'The token\'s claims and its live session.' });

export const SigningKeyStatus = Type.Union([Type.Literal('active'), Type.Literal('retired'), Type.Literal('expired'), Type.Literal('revoked')]);
export const SigningKey = Type.Object({
  id: Type.String({ description: 'The kid' }),
  status: SigningKeyStatus,
  createdAt: DateTime,
  retiredAt: Nullable(DateTime),
  publishedUntil: Nullable(DateTime),
  revokedAt: Nullable(DateTime),
  publicJwk: PublicJwk,
}, { title: 'SigningKey' });
export type SigningKey = Static<typeof SigningKey>;
export const SigningKeyList = Type.Object({ items: Type.Array(SigningKey) });
export const SigningKeyParams = Type.Object({ id: Uuid, keyId: Uuid }, { additionalProperties: false });

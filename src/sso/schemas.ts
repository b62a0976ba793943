import { Type, type Static } from 'typebox';
import { DateTime, Nullable, Uuid } from '../platform/http/common-schemas.js';

const GroupRoles = Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.String({ minLength: 1, maxLength: 64 }), {
  description: 'Maps a group the IdP sends (in `groupsAttribute`, compared case-insensitively) to a role key of the organization. A user '
    + "a first SSO sign-in makes a member gets the highest mapped role (earliest in the role set), else the organization's default role.",
});
const GroupsAttribute = Type.String({ minLength: 1, maxLength: 256, description: 'The SAML attribute or OpenID claim that lists the user\'s groups [groups].' });
const Name = Type.String({ minLength: 1, maxLength: 256, description: 'What the connection is, e.g. "Okta".' });
const HttpsUrl = Type.String({ minLength: 1, maxLength: 2048, format: 'uri' });
const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 20, description: 'OpenID scopes [openid, email, profile].' });

export const ConnectionType = Type.Union([Type.Literal('saml'), Type.Literal('oidc')]);

export const Connection = Type.Object({
  id: Uuid, organizationId: Uuid, type: ConnectionType, name: Type.String(), enabled: Type.Boolean(),
  enforced: Type.Boolean({ description: "Users whose email is at one of the organization's verified domains must sign in through this connection: a password, passkey or social sign-in, a sign-up and an invitation sign-up answer sso_required." }),
  groupsAttribute: Type.String(), groupRoles: GroupRoles,
  spEntityId: Nullable(Type.String({ description: 'SAML: the service provider entity ID (audience) to enter at the IdP.' })),
  acsUrl: Nullable(Type.String({ description: 'SAML: the Assertion Consumer Service URL (HTTP-POST) to enter at the IdP.' })),
  metadataUrl: Nullable(Type.String({ description: 'SAML: the service provider metadata, for IdPs that import it.' })),
  idpEntityId: Nullable(Type.String()), idpSsoUrl: Nullable(Type.String()), idpMetadataUrl: Nullable(Type.String()),
  idpCertificateCount: Nullable(Type.Integer({ description: 'SAML: how many signing certificates of the IdP are trusted.' })),
  issuer: Nullable(Type.String()), clientId: Nullable(Type.String()), scopes: Nullable(Type.Array(Type.String())),
  redirectUri: Nullable(Type.String({ description: 'OpenID Connect: the redirect URI to register at the IdP.' })),
  createdAt: DateTime, updatedAt: DateTime,
}, { title: 'SsoConnection', additionalProperties: false, description: "An organization's enterprise sign-in connection (never its client secret)." });
export type Connection = Static<typeof Connection>;

const SamlIdp = {
  idpMetadataXml: Type.Optional(Type.String({ minLength: 1, maxLength: 256 * 1024, description: "The IdP's SAML metadata XML (EntityDescriptor)." })),
  idpMetadataUrl: Type.Optional(HttpsUrl),
  idpEntityId: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  idpSsoUrl: Type.Optional(HttpsUrl),
  idpCertificate: Type.Optional(Type.String({ minLength: 1, maxLength: 16 * 1024, description: 'PEM or base64 DER X.509 certificate the IdP signs with.' })),
};
const Common = {
  name: Type.Optional(Name), enabled: Type.Optional(Type.Boolean()), enforced: Type.Optional(Type.Boolean()),
  groupsAttribute: Type.Optional(GroupsAttribute), groupRoles: Type.Optional(GroupRoles),
};

const OidcClient = {
  issuer: Type.Optional(HttpsUrl), clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  clientSecret: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })), scopes: Type.Optional(Scopes),
};

export const CreateConnectionBody = Type.Object({ type: ConnectionType, ...Common, ...SamlIdp, ...OidcClient }, {
  additionalProperties: false,
  description: 'SAML: the IdP by `idpMetadataXml`, by `idpMetadataUrl` (fetched now), or by `idpEntityId`, `idpSsoUrl` and `idpCertificate`. '
    + 'OpenID Connect: `issuer`, `clientId` and `clientSecret` (required), `scopes`. Fields of the other type are refused.',
});
export type CreateConnectionBody = Static<typeof CreateConnectionBody>;

export const UpdateConnectionBody = Type.Object({ ...Common, ...SamlIdp, ...OidcClient }, {
  additionalProperties: false, description: 'The fields to change; IdP fields of the other type are refused.',
});
export type UpdateConnectionBody = Static<typeof UpdateConnectionBody>;

export const ConnectionList = Type.Object({ items: Type.Array(Connection) }, { title: 'SsoConnectionList', additionalProperties: false });
export const ConnectionsParams = Type.Object({ organizationId: Uuid }, { additionalProperties: false });
export const ConnectionParams = Type.Object({ organizationId: Uuid, connectionId: Uuid }, { additionalProperties: false });

export const SsoConnectionParams = Type.Object({ connectionId: Type.String({ maxLength: 64 }) }, { additionalProperties: false });
export const SsoAuthorizeQuery = Type.Object({
  redirect_url: Type.String({ minLength: 1, maxLength: 2048 }),
  email: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
  organization_id: Type.Optional(Type.String({ maxLength: 64 })),
}, { description: 'Either `email` (its verified domain finds the organization) or `organization_id`.' });
export type SsoAuthorizeQuery = Static<typeof SsoAuthorizeQuery>;
export const AcsBody = Type.Object({ SAMLResponse: Type.String({ minLength: 1 }), RelayState: Type.Optional(Type.String()) });

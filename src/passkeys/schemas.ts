import { Type, type Static } from 'typebox';
import { DateTime, Nullable, Uuid } from '../platform/http/common-schemas.js';

const Base64Url = Type.String({ pattern: '^[A-Za-z0-9_-]*$', maxLength: 4096, description: 'base64url, unpadded.' });
const Transports = Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 });
const CredentialDescriptor = Type.Object({ id: Base64Url, type: Type.Literal('public-key'), transports: Type.Optional(Transports) });
const UserVerification = Type.Union([Type.Literal('required'), Type.Literal('preferred'), Type.Literal('discouraged')]);

export const PasskeyName = Type.String({ minLength: 1, maxLength: 100 });

export const Passkey = Type.Object({
  id: Uuid, name: Type.String(), createdAt: DateTime, lastUsedAt: Nullable(DateTime),
  deviceType: Type.Union([Type.Literal('singleDevice'), Type.Literal('multiDevice')], {
    description: 'multiDevice: backup eligible, synced between devices (a password manager, iCloud Keychain); singleDevice: bound to one authenticator.',
  }),
  backedUp: Type.Boolean({ description: 'The authenticator reported the key backed up at its last use.' }),
}, { title: 'Passkey', description: 'A discoverable WebAuthn credential of the user (only its public key is kept).' });
export type Passkey = Static<typeof Passkey>;

export const PasskeyList = Type.Object({ items: Type.Array(Passkey) }, { title: 'PasskeyList' });

export const PasskeyParams = Type.Object({ passkeyId: Uuid }, { additionalProperties: false });

export const CreationOptions = Type.Object({
  challenge: Base64Url,
  rp: Type.Object({ name: Type.String(), id: Type.String() }),
  user: Type.Object({ id: Base64Url, name: Type.String(), displayName: Type.String() }),
  pubKeyCredParams: Type.Array(Type.Object({ alg: Type.Integer(), type: Type.Literal('public-key') })),
  timeout: Type.Integer(),
  attestation: Type.String(),
  excludeCredentials: Type.Array(CredentialDescriptor),
  authenticatorSelection: Type.Object({ residentKey: Type.String(), requireResidentKey: Type.Boolean(), userVerification: UserVerification }),
  extensions: Type.Object({ credProps: Type.Optional(Type.Boolean()) }),
  hints: Type.Array(Type.String()),
}, {
  title: 'PublicKeyCredentialCreationOptionsJSON',
  description: 'For navigator.credentials.create() (after PublicKeyCredential.parseCreationOptionsFromJSON, or @simplewebauthn/browser startRegistration).',
});

export type CreationOptions = Static<typeof CreationOptions>;

export const RequestOptions = Type.Object({
  challenge: Base64Url,
  rpId: Type.String(),
  timeout: Type.Integer(),
  userVerification: UserVerification,
  allowCredentials: Type.Optional(Type.Array(CredentialDescriptor)),
}, {
  title: 'PublicKeyCredentialRequestOptionsJSON',
  description: 'For navigator.credentials.get() (after PublicKeyCredential.parseRequestOptionsFromJSON, or @simplewebauthn/browser startAuthentication).',
});

export type RequestOptions = Static<typeof RequestOptions>;

const ClientExtensionResults = Type.Record(Type.String(), Type.Unknown());
const Attachment = Type.Optional(Type.Union([Type.Literal('platform'), Type.Literal('cross-platform')]));

/** What PublicKeyCredential.toJSON() answers after navigator.credentials.create(). */
export const RegistrationResponse = Type.Object({
  id: Base64Url, rawId: Base64Url, type: Type.Literal('public-key'), authenticatorAttachment: Attachment, clientExtensionResults: ClientExtensionResults,
  response: Type.Object({
    clientDataJSON: Base64Url, attestationObject: Base64Url,
    authenticatorData: Type.Optional(Base64Url), transports: Type.Optional(Transports),
    publicKeyAlgorithm: Type.Optional(Type.Integer()), publicKey: Type.Optional(Base64Url),
  }),
}, { title: 'RegistrationResponseJSON' });

/** What PublicKeyCredential.toJSON() answers after navigator.credentials.get(). */
export const AuthenticationResponse = Type.Object({
  id: Base64Url, rawId: Base64Url, type: Type.Literal('public-key'), authenticatorAttachment: Attachment, clientExtensionResults: ClientExtensionResults,
  response: Type.Object({
    clientDataJSON: Base64Url, authenticatorData: Base64Url, signature: Base64Url, userHandle: Type.Optional(Base64Url),
  }),
}, { title: 'AuthenticationResponseJSON' });

export const RegisterPasskeyBody = Type.Object({
  response: RegistrationResponse,
  name: Type.Optional(PasskeyName),
}, { additionalProperties: false });
export type RegisterPasskeyBody = Static<typeof RegisterPasskeyBody>;

export const RenamePasskeyBody = Type.Object({ name: PasskeyName }, { additionalProperties: false });

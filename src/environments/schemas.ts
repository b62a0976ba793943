import { Type, type Static } from 'typebox';
import { DateTime, Email, Nullable, Uuid } from '../platform/http/common-schemas.js';
import { EnvironmentSettings } from './settings.js';

const FrontendHost = Type.String({
  minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+(:[0-9]{1,5})?$',
  description: 'Host (and port) of the client plane, e.g. "app.example.com" or "dev.localhost:3000".',
});

/** Settings in a request: any subset; objects deep-merge into the stored settings, null restores a default. */
const SettingsPatch = Type.Record(Type.String(), Type.Unknown(), { description: 'Partial EnvironmentSettings; deep-merged.' });

export const CreateEnvironmentBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  frontendHost: Type.Optional(FrontendHost),
  settings: Type.Optional(SettingsPatch),
}, { additionalProperties: false });
export type CreateEnvironmentBody = Static<typeof CreateEnvironmentBody>;

export const UpdateEnvironmentBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  frontendHost: Type.Optional(FrontendHost),
  settings: Type.Optional(SettingsPatch),
}, { additionalProperties: false });
export type UpdateEnvironmentBody = Static<typeof UpdateEnvironmentBody>;

export const Environment = Type.Object({
  id: Uuid, name: Type.String(), frontendHost: Type.String(), settings: EnvironmentSettings, createdAt: DateTime,
}, { title: 'Environment', description: 'An environment: its frontend host and resolved settings.' });
export type Environment = Static<typeof Environment>;

export const CreatedEnvironment = Type.Object({
  id: Uuid, name: Type.String(), frontendHost: Type.String(), settings: EnvironmentSettings, createdAt: DateTime,
  secretKey: Type.String({ description: 'Shown only in this response; only its hash is stored.' }),
  secretKeyId: Type.String({ format: 'uuid', description: 'Id of that first secret key, for DELETE /secret-keys/{keyId}.' }),
}, { title: 'CreatedEnvironment', description: 'The new environment and its first secret key, shown only here.' });
export type CreatedEnvironment = Static<typeof CreatedEnvironment>;

export const EnvironmentParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const KeyParams = Type.Object({ keyId: Uuid }, { additionalProperties: false });
export const CreatedSecretKey = Type.Object({ id: Uuid, secretKey: Type.String() });

export const SecretKeySummary = Type.Object({
  id: Uuid,
  hint: Nullable(Type.String({ description: 'The key\'s last four characters as "sk_…abcd", to tell keys apart; null for a key issued before hints were kept.' })),
  createdAt: DateTime,
  revokedAt: Nullable(DateTime),
}, { title: 'SecretKeySummary', description: 'A secret key as listed: never the key itself nor its hash.' });
export const SecretKeyList = Type.Object({ items: Type.Array(SecretKeySummary) });
export type SecretKeyList = Static<typeof SecretKeyList>;

export const OutboxQuery = Type.Object({ to: Type.Optional(Email) }, { additionalProperties: false });
export const OutboxMessage = Type.Object({
  id: Uuid, to: Type.String(), subject: Type.String(), text: Type.String(), html: Type.String(), createdAt: DateTime,
});
export const Outbox = Type.Object({
  items: Type.Array(OutboxMessage, { description: 'Mail caught in the outbox, newest first (kept an hour); always empty while `mode` is `delivering`.' }),
  mode: Type.Union([Type.Literal('catching'), Type.Literal('delivering')], {
    description: '`catching`: no SMTP server is configured, so mail is kept here to read (development only); '
      + '`delivering`: GATEHOUSE_SMTP_URL is set, mail goes out by SMTP and none is kept to read.',
  }),
});

export const AllowedOrigins = Type.Object({
  origins: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
    maxItems: 100, description: 'Full origins such as "https://app.example.com" or "capacitor://localhost".',
  }),
}, { additionalProperties: false, title: 'AllowedOrigins', description: 'The origins the environment\'s apps run on.' });
export type AllowedOrigins = Static<typeof AllowedOrigins>;

/** What a sign-in UI draws itself from (GET /_svc/environment): public, no secret and no allowed-origin list. */
export const PublicEnvironment = Type.Object({
  name: Type.String(),
  signUp: Type.Object({
    enabled: Type.Boolean(),
    requiredFields: Type.Array(Type.Union([Type.Literal('email'), Type.Literal('name')])),
    emailVerificationRequired: Type.Boolean(),
  }),
  passwordPolicy: Type.Object({ minLength: Type.Integer(), maxLength: Type.Integer() }),
  oauthProviders: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), type: Type.String() })),
  mfa: Type.Object({
    policy: Type.Union([Type.Literal('off'), Type.Literal('optional'), Type.Literal('required')]),
    factors: Type.Array(Type.String(), { description: 'The second factors a user may enrol.' }),
  }),
  passkeys: Type.Object({ enabled: Type.Boolean() }),
  organizations: Type.Object({ selfServiceEnabled: Type.Boolean({ description: 'Whether signed-in users may create organizations (POST /_svc/organizations).' }) }),
  selfDeletionEnabled: Type.Boolean({ description: 'Whether users may delete their own account (DELETE /_svc/me).' }),
  locales: Type.Array(Type.String(), { description: 'The languages the hosted pages and mail speak.' }),
}, { additionalProperties: false, title: 'PublicEnvironment' });
export type PublicEnvironment = Static<typeof PublicEnvironment>;

export const EscapeHatchOrigins = Type.Object({
  origins: Type.Array(Type.String()),
}, { additionalProperties: false, title: 'EscapeHatchOrigins', description: 'The origins accepted beyond the allowed-origins list.' });

export const EnvironmentList = Type.Object({ items: Type.Array(Environment) });

import { Type, type Static } from 'typebox';
import { DateTime, Email, JsonObject, Nullable, NullableInput, PageQuery, Uuid } from '../platform/http/common-schemas.js';
import { SessionActor } from '../sessions/schemas.js';

export const UserStatus = Type.Union([Type.Literal('active'), Type.Literal('banned'), Type.Literal('deleted')]);
export type UserStatus = Static<typeof UserStatus>;
export const Locale = Type.Union([Type.Literal('en'), Type.Literal('da')]);
const RegistrationState = Type.Union([Type.Literal('pending_email_verification'), Type.Literal('complete')]);
const NameField = Type.String({ minLength: 1, maxLength: 200 });
const Password = Type.String({ minLength: 1, description: "Checked against the environment's password policy." });

const userFields = {
  id: Uuid,
  environmentId: Uuid,
  name: Nullable(Type.String()),
  firstName: Nullable(Type.String()),
  lastName: Nullable(Type.String()),
  locale: Nullable(Locale),
  status: UserStatus,
  registrationState: RegistrationState,
  createdAt: DateTime,
  updatedAt: DateTime,
  email: Nullable(Type.String()),
  emailVerifiedAt: Nullable(DateTime),
  deletedAt: Nullable(DateTime),
  publicMetadata: JsonObject,
  unsafeMetadata: JsonObject,
};

/** Server API representation: includes private metadata. */
export const User = Type.Object({ ...userFields, privateMetadata: JsonObject }, {
  title: 'User', description: 'A user of the environment in Server API form (with private metadata).',
  examples: [{
    id: '01934f2a-7c1e-7d3a-9b2f-5e8c1a2b3c4d', environmentId: '01934f29-0000-7000-8000-000000000001', name: 'Ada Lovelace', firstName: 'Ada',
    lastName: 'Lovelace', locale: 'en', status: 'active', registrationState: 'complete', createdAt: '2026-11-24T10:00:00.000Z',
    updatedAt: '2026-11-24T10:00:00.000Z', email: 'ada@example.com', emailVerifiedAt: '2026-11-24T10:00:00.000Z', deletedAt: null,
    publicMetadata: { plan: 'pro' }, unsafeMetadata: {}, privateMetadata: { stripeCustomerId: 'cus_123' },
  }],
});
export type User = Static<typeof User>;

/** Client plane representation: never carries private metadata. */
export const ClientUser = Type.Object(userFields, { title: 'ClientUser', description: 'A user in client form: never private metadata.' });
export type ClientUser = Static<typeof ClientUser>;

/** The signed-in user (`/_svc/me`): the client form, and who acts behind the session when it is impersonated. */
export const CurrentUser = Type.Object({ ...userFields, actor: Nullable(SessionActor) }, { title: 'CurrentUser', description: 'The signed-in user in client form, and who acts behind the session when it is impersonated.' });

export const UserParams = Type.Object({ userId: Uuid }, { additionalProperties: false });

export const CreateUserBody = Type.Object({
  email: Type.Optional(Email),
  password: Type.Optional(Password),
  firstName: Type.Optional(NameField),
  lastName: Type.Optional(NameField),
  publicMetadata: Type.Optional(JsonObject),
  privateMetadata: Type.Optional(JsonObject),
  unsafeMetadata: Type.Optional(JsonObject),
}, { additionalProperties: false });
export type CreateUserBody = Static<typeof CreateUserBody>;

export const UpdateUserBody = Type.Object({
  email: Type.Optional(Email),
  password: Type.Optional(Password),
  firstName: Type.Optional(NullableInput(NameField)),
  lastName: Type.Optional(NullableInput(NameField)),
  name: Type.Optional(NullableInput(NameField)),
  locale: Type.Optional(NullableInput(Locale)),
}, { additionalProperties: false, minProperties: 1 });
export type UpdateUserBody = Static<typeof UpdateUserBody>;

export const MetadataPatchBody = Type.Object({
  publicMetadata: Type.Optional(JsonObject),
  privateMetadata: Type.Optional(JsonObject),
  unsafeMetadata: Type.Optional(JsonObject),
}, { additionalProperties: false });
export type MetadataPatchBody = Static<typeof MetadataPatchBody>;

/** Client PATCH /_svc/me: profile fields and unsafe metadata only; anything else is refused. */
export const UpdateMeBody = Type.Object({
  firstName: Type.Optional(NullableInput(NameField)),
  lastName: Type.Optional(NullableInput(NameField)),
  name: Type.Optional(NullableInput(NameField)),
  locale: Type.Optional(NullableInput(Locale)),
  unsafeMetadata: Type.Optional(JsonObject),
}, { additionalProperties: false });
export type UpdateMeBody = Static<typeof UpdateMeBody>;

const EmailSearch = Type.String({
  minLength: 1, maxLength: 320, pattern: '\\S', description: 'Case-insensitive literal substring of the email; not blank.',
});

const NameSearch = Type.String({
  minLength: 1, maxLength: 200, pattern: '^[^\\n\\r]*\\S[^\\n\\r]*$',
  description: 'Case-insensitive literal substring of the name, first name or last name (any of them); not blank, one line.',
});

export const ListUsersQuery = Type.Object({
  ...PageQuery.properties,
  emailSearch: Type.Optional(EmailSearch),
  nameSearch: Type.Optional(NameSearch),
  status: Type.Optional(Type.Array(UserStatus, { description: 'Any of these statuses (repeat the parameter).' })),
}, { additionalProperties: false });
export type ListUsersQuery = Static<typeof ListUsersQuery>;

export const SearchUsersBody = Type.Object({
  emailSearch: Type.Optional(NullableInput(EmailSearch)),
  nameSearch: Type.Optional(NullableInput(NameSearch)),
  statuses: Type.Optional(Type.Array(UserStatus, { uniqueItems: true })),
  publicMetadata: Type.Optional(NullableInput(JsonObject)),
  privateMetadata: Type.Optional(NullableInput(JsonObject)),
}, { additionalProperties: false });
export type SearchUsersBody = Static<typeof SearchUsersBody>;

export interface UserFilter {
  emailSearch?: string | null;
  nameSearch?: string | null;
  statuses?: UserStatus[];
  publicMetadata?: Record<string, unknown> | null;
  privateMetadata?: Record<string, unknown> | null;
}

import { Type, type Static } from 'typebox';
import { DateTime, Email, JsonObject, Nullable, NullableInput, PageQuery, Uuid } from '../platform/http/common-schemas.js';

export const InvitationStatus = Type.Union(
  [Type.Literal('PENDING'), Type.Literal('ACCEPTED'), Type.Literal('REVOKED'), Type.Literal('EXPIRED')],
  { description: 'A PENDING invitation past expiresAt is EXPIRED everywhere at once.' },
);
export type InvitationStatus = Static<typeof InvitationStatus>;

const summaryFields = {
  id: Uuid,
  environmentId: Uuid,
  email: Type.String(),
  status: InvitationStatus,
  expiresAt: DateTime,
  createdAt: DateTime,
  acceptedAt: Nullable(DateTime),
  revokedAt: Nullable(DateTime),
};

/** Create, list, search, revoke and resend answer with this: never metadata. */
export const InvitationSummary = Type.Object(summaryFields, { title: 'InvitationSummary', additionalProperties: false, description: 'An invitation without its metadata (list form).' });
export type InvitationSummary = Static<typeof InvitationSummary>;

/** Get by id and the metadata merge answer with both bags. */
export const Invitation = Type.Object(
  { ...summaryFields, publicMetadata: JsonObject, privateMetadata: JsonObject },
  { title: 'Invitation', additionalProperties: false, description: 'An invitation to sign up, with its metadata.' },
);
export type Invitation = Static<typeof Invitation>;

export const InvitationParams = Type.Object({ invitationId: Uuid }, { additionalProperties: false });

export const CreateInvitationBody = Type.Object({
  email: Email,
  expiresInDays: Type.Optional(NullableInput(Type.Integer({ minimum: 1, maximum: 365, description: 'Days until the invitation expires; 1 to 365, default 30.' }))),
  redirectUrl: Type.Optional(NullableInput(Type.String({
    maxLength: 2048, description: "Passed to the sign-up page as redirect_url; its origin must be one of the allowed origins or signUpUrl's.",
  }))),
  publicMetadata: JsonObject,
  privateMetadata: JsonObject,
}, { additionalProperties: false });
export type CreateInvitationBody = Static<typeof CreateInvitationBody>;

export const MetadataPatchBody = Type.Object({
  publicMetadata: Type.Optional(JsonObject),
  privateMetadata: Type.Optional(JsonObject),
}, { additionalProperties: false, description: 'Deep merge: objects merge, other values replace, null removes a key.' });
export type MetadataPatchBody = Static<typeof MetadataPatchBody>;

const EmailSearch = Type.String({
  minLength: 1, maxLength: 320, pattern: '\\S', description: 'Case-insensitive literal substring of the email (%, _ and \\ are plain characters); not blank.',
});

export const ListInvitationsQuery = Type.Object({
  ...PageQuery.properties,
  status: Type.Optional(Type.Array(InvitationStatus, { description: 'Any of these statuses (repeat the parameter).' })),
  search: Type.Optional(EmailSearch),
}, { additionalProperties: false });
export type ListInvitationsQuery = Static<typeof ListInvitationsQuery>;

export const SearchInvitationsBody = Type.Object({
  statuses: Type.Optional(Type.Array(InvitationStatus, { uniqueItems: true, description: 'ORed.' })),
  emailSearch: Type.Optional(NullableInput(EmailSearch)),
  publicMetadata: Type.Optional(NullableInput(JsonObject)),
  privateMetadata: Type.Optional(NullableInput(JsonObject)),
}, { additionalProperties: false, description: 'Every supplied dimension must match (AND); metadata matches by JSON containment (@>).' });
export type SearchInvitationsBody = Static<typeof SearchInvitationsBody>;

export interface InvitationFilter {
  statuses?: InvitationStatus[];
  emailSearch?: string | null;
  publicMetadata?: Record<string, unknown> | null;
  privateMetadata?: Record<string, unknown> | null;
}

export const InvitationSignUpBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'The invitation_token from the invitation link.' }),
  password: Type.String({ minLength: 1, description: "Checked against the environment's password policy." }),
  name: Type.Optional(NullableInput(Type.String({ minLength: 1, maxLength: 200 }))),
  legalConsentAccepted: Type.Boolean({ description: 'Must be true.' }),
}, { additionalProperties: false });
export type InvitationSignUpBody = Static<typeof InvitationSignUpBody>;

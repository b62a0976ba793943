import { Type, type Static } from 'typebox';
import { DateTime, Email, Uuid } from '../platform/http/common-schemas.js';
import { InvitationStatus } from '../invitations/schemas.js';
import { Role } from '../organizations/schemas.js';

const fields = {
  id: Uuid, organizationId: Uuid, email: Type.String(), role: Type.String(), status: InvitationStatus, expiresAt: DateTime, createdAt: DateTime,
};

/** An organization invitation as owners and admins list it: never its token. */
export const OrganizationInvitation = Type.Object(fields, { title: 'OrganizationInvitation', additionalProperties: false, description: 'An invitation to join an organization with a role.' });
export type OrganizationInvitation = Static<typeof OrganizationInvitation>;

export const EmailDelivery = Type.Union([Type.Literal('dispatched'), Type.Literal('not_configured')], {
  description: '`dispatched`: mailed to the invitee with a link to the environment\'s invitationAcceptUrl or hosted page (best effort); `not_configured`: no accept URL, no mail, the token is the only way in.',
});

/** The answer to creating one: the token, shown only here, and whether a mail went out. */
export const CreatedOrganizationInvitation = Type.Object({
  id: Uuid, organizationId: Uuid, email: Type.String(), role: Type.String(),
  token: Type.String({ description: 'Shown once; only its hash is stored.' }), expiresAt: DateTime, emailDelivery: EmailDelivery,
}, { title: 'CreatedOrganizationInvitation', additionalProperties: false });
export type CreatedOrganizationInvitation = Static<typeof CreatedOrganizationInvitation>;

export const CreateOrganizationInvitationBody = Type.Object({ email: Email, role: Role }, { additionalProperties: false });
export type CreateOrganizationInvitationBody = Static<typeof CreateOrganizationInvitationBody>;

export const OrganizationInvitationParams = Type.Object({ organizationId: Uuid, invitationId: Uuid }, { additionalProperties: false });


const Token = Type.String({ minLength: 1, maxLength: 200, description: 'The organization invitation token.' });
export const AcceptBody = Type.Object({ token: Token }, { additionalProperties: false });

export const OrganizationInvitationSignUpBody = Type.Object({
  token: Token,
  password: Type.String({ minLength: 1 }),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  legalConsentAccepted: Type.Boolean(),
}, { additionalProperties: false });
export type OrganizationInvitationSignUpBody = Static<typeof OrganizationInvitationSignUpBody>;

/** The membership an accepted invitation made, as its new member sees it. */
export const JoinedMembership = Type.Object({
  organizationId: Uuid, userId: Uuid, role: Type.String(), roleName: Type.Union([Type.String(), Type.Null()]), joinedAt: DateTime,
}, { title: 'JoinedMembership', additionalProperties: false });

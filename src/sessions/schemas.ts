import { Type, type Static } from 'typebox';
import { DateTime, Nullable, NullableInput, PageQuery, Uuid } from '../platform/http/common-schemas.js';

export const SessionStatus = Type.Union([Type.Literal('active'), Type.Literal('revoked'), Type.Literal('expired')]);

/**
 * Who acts behind an impersonated session, as audit events name actors: a user of the environment (the Server
 * API mint's actorUserId), or a dashboard operator (a mint made with the operator's session).
 */
export const SessionActor = Type.Object({
  type: Type.Union([Type.Literal('user'), Type.Literal('operator')], { description: '`user`: a user of this environment; `operator`: an operator of the Gatehouse dashboard.' }),
  id: Uuid,
  impersonatorId: Uuid,
}, { title: 'SessionActor', description: 'Set on an impersonated session: the operator who impersonates is its id and impersonatorId. Null otherwise.' });
export type SessionActor = Static<typeof SessionActor>;

/** A session as the Server API and the session list show it. */
export const Session = Type.Object({
  id: Uuid,
  userId: Uuid,
  status: SessionStatus,
  actor: Nullable(SessionActor),
  ipAddress: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
  createdAt: DateTime,
  lastActiveAt: DateTime,
  expiresAt: DateTime,
  revokedAt: Nullable(DateTime),
  amr: Type.Array(Type.String(), { description: 'How the user proved who they are (RFC 8176): pwd, otp, mfa, fed, hwk, swk, email (an emailed code).' }),
  activeOrganizationId: Nullable(Uuid),
}, {
  title: 'Session',
  description: 'A client session. `activeOrganizationId`: the organization whose claims (org_id, org_role, org_slug) its JWTs carry; '
    + 'null for none, and again once the user\'s membership there ends.',
});
export type Session = Static<typeof Session>;

/** The session part of every response that starts one. */
export const StartedSession = Type.Object({
  id: Uuid, userId: Uuid, createdAt: DateTime, expiresAt: DateTime, actor: Nullable(SessionActor),
  amr: Type.Array(Type.String(), { description: 'How the user proved who they are (RFC 8176): pwd, otp, mfa, fed, hwk, swk, email (an emailed code).' }),
  enrolmentOnly: Type.Boolean({ description: 'true under the mfa.policy "required" for a user without a second factor: the session may only enrol one (403 mfa_enrolment_required elsewhere).' }),
});
export type StartedSession = Static<typeof StartedSession>;

export const SessionParams = Type.Object({ sessionId: Uuid }, { additionalProperties: false });
export const UserSessionParams = Type.Object({ userId: Uuid, sessionId: Uuid }, { additionalProperties: false });

export const ListSessionsQuery = Type.Object({
  ...PageQuery.properties,
  status: Type.Optional(SessionStatus),
}, { additionalProperties: false });
export type ListSessionsQuery = Static<typeof ListSessionsQuery>;

export const ActiveOrganizationBody = Type.Object({ organizationId: NullableInput(Uuid) }, {
  additionalProperties: false, description: '`organizationId`: one of the signed-in user\'s organizations, or null for none.',
});
export type ActiveOrganizationBody = Static<typeof ActiveOrganizationBody>;

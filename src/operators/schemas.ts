import { Type, type Static } from 'typebox';
import { DateTime, Email, Nullable, Page, PageQuery, Uuid } from '../platform/http/common-schemas.js';

const Password = Type.String({ minLength: 1, description: "Checked against the operators' password policy (as end-users': at least 8 characters, not a common password, not the email)." });

export const CreateOperatorBody = Type.Object({
  email: Email,
  password: Type.Optional(Password),
}, { additionalProperties: false, title: 'CreateOperator' });
export type CreateOperatorBody = Static<typeof CreateOperatorBody>;

export const Operator = Type.Object({
  id: Uuid,
  email: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('banned'), Type.Literal('deleted')]),
  createdAt: DateTime,
}, { title: 'Operator', description: 'A person who signs in to the dashboard and operates the service.' });
export type Operator = Static<typeof Operator>;

export const CreatedOperator = Type.Object({
  operator: Operator,
  setPasswordUrl: Nullable(Type.String({
    description: 'Without a password: the one-time link that sets one ({base_url}/dashboard/set-password?token=...), valid 7 days, shown only here. Null when a password was given.',
  })),
}, { title: 'CreatedOperator' });
export type CreatedOperator = Static<typeof CreatedOperator>;

export const OperatorList = Page(Operator);
export const ListOperatorsQuery = PageQuery;

export const OperatorSignInBody = Type.Object({ email: Email, password: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false, title: 'OperatorSignIn' });
export type OperatorSignInBody = Static<typeof OperatorSignInBody>;

export const OperatorSecondFactorBody = Type.Object({
  challengeToken: Type.String({ minLength: 1, maxLength: 200 }),
  code: Type.String({ minLength: 1, maxLength: 20, description: 'A 6-digit TOTP code or an unused backup code.' }),
}, { additionalProperties: false, title: 'OperatorSecondFactor' });
export type OperatorSecondFactorBody = Static<typeof OperatorSecondFactorBody>;

export const OperatorSession = Type.Object({
  operator: Operator,
  session: Type.Object({ id: Uuid, createdAt: DateTime, expiresAt: DateTime }),
}, { title: 'OperatorSession', description: 'The signed-in operator and their session; the session token is only in the HttpOnly cookie.' });
export type OperatorSession = Static<typeof OperatorSession>;

export const OperatorMfaRequired = Type.Object({
  mfaRequired: Type.Literal(true),
  challengeToken: Type.String({ description: 'Answer it with POST /api/admin/v1/operator-sessions/mfa within 5 minutes.' }),
  factors: Type.Array(Type.String()),
}, { title: 'OperatorMfaRequired' });

export const SetOperatorPasswordBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'The token of the one-time link.' }),
  password: Password,
}, { additionalProperties: false, title: 'SetOperatorPassword' });
export type SetOperatorPasswordBody = Static<typeof SetOperatorPasswordBody>;

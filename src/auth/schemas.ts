import { Type, type Static } from 'typebox';
import { AuthenticationResponse } from '../passkeys/schemas.js';
import { Email } from '../platform/http/common-schemas.js';
import { StartedSession } from '../sessions/schemas.js';
import { ClientUser } from '../users/schemas.js';

const NameField = Type.String({ minLength: 1, maxLength: 200 });

export const NativeQuery = Type.Object({
  _is_native: Type.Boolean({ default: false, description: 'true: return sessionToken in the body instead of setting the __session cookie.' }),
}, { additionalProperties: false });

export const SignUpBody = Type.Object({
  email: Email,
  password: Type.String({ minLength: 1 }),
  firstName: Type.Optional(NameField),
  lastName: Type.Optional(NameField),
  name: Type.Optional(NameField),
  legalConsentAccepted: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });
export type SignUpBody = Static<typeof SignUpBody>;

export const SignInBody = Type.Object({ email: Email, password: Type.String({ minLength: 1 }) }, { additionalProperties: false });
export type SignInBody = Static<typeof SignInBody>;

const MailedCode = Type.String({ pattern: '^[0-9]{6}$', description: 'The 6-digit code from the email.' });

export const VerifyEmailBody = Type.Object({ email: Email, code: MailedCode }, { additionalProperties: false });
export type VerifyEmailBody = Static<typeof VerifyEmailBody>;

export const ResetPasswordBody = Type.Object({
  email: Email,
  code: MailedCode,
  newPassword: Type.String({ minLength: 1, description: "Must meet the environment's password policy; checked before the code is tried." }),
}, { additionalProperties: false });
export type ResetPasswordBody = Static<typeof ResetPasswordBody>;

export const EmailOnlyBody = Type.Object({ email: Email }, { additionalProperties: false });

/** Every response that starts a session. */
export const SessionResponse = Type.Object({
  user: ClientUser,
  session: StartedSession,
  sessionToken: Type.Optional(Type.String({ description: 'Only with _is_native=true; send it back as "Authorization: Bearer <sessionToken>".' })),
}, { title: 'SessionResponse', description: 'The signed-in user and the new session (its token in `sessionToken` for a native app; a browser gets the `__session` cookie).' });
export type SessionResponse = Static<typeof SessionResponse>;

export const PendingVerification = Type.Object({
  user: ClientUser,
  verification: Type.Object({ status: Type.Literal('pending') }),
}, { title: 'PendingVerification', description: 'The account waits for the emailed code; no session yet.' });

export const MfaVerifyBody = Type.Object({
  challengeToken: Type.String({ minLength: 1, maxLength: 200 }),
  code: Type.String({ minLength: 1, maxLength: 20, description: 'A 6-digit TOTP code, or a backup code (case, spaces and the dash do not matter).' }),
}, { additionalProperties: false });

/** What a sign-in of a user with a second factor answers instead of a session. */
export const MfaRequired = Type.Object({
  mfaRequired: Type.Literal(true),
  challengeToken: Type.String({ description: 'Single use, 5 minutes: send it with a code to POST /_svc/auth/mfa/verify.' }),
  factors: Type.Array(Type.Union([Type.Literal('totp'), Type.Literal('backup_code')]), { description: 'The kinds of code the user can give.' }),
}, { title: 'MfaRequired', description: 'The password (or provider) was right and the user has a second factor: no session yet.' });

export const PasskeyOptionsBody = Type.Object({
  email: Type.Optional(Email),
}, { additionalProperties: false, description: 'An email binds the challenge to that account; the options are the same either way.' });

export const PasskeySignInBody = Type.Object({ response: AuthenticationResponse }, { additionalProperties: false });

export const Accepted = Type.Object({ status: Type.Literal('accepted'), message: Type.String() });

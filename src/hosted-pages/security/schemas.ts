import { Type, type Static } from 'typebox';
import { AuthenticationResponse, PasskeyName } from '../../passkeys/schemas.js';
import { PageQuery } from '../schemas.js';

// Form posts of the security tab: strings as the browser sends them, length-bounded; the services check the rest.
const Csrf = Type.String({ maxLength: 100 });
const Password = Type.String({ minLength: 1, maxLength: 1024 });
const Id = Type.String({ format: 'uuid' });

/**
 * The tab's query: the carried one, plus the outcome of the step that led here (Post/Redirect/Get), or of the
 * passkey script. Both are codes looked up in the catalogue, never text shown as given.
 */
export const SecurityQuery = Type.Object({
  ...PageQuery.properties,
  done: Type.Optional(Type.String({ pattern: '^[a-z_]{1,40}$' })),
  problem: Type.Optional(Type.String({ pattern: '^[a-z_]{1,64}$' })),
});
export type SecurityQuery = Static<typeof SecurityQuery>;

export const CsrfOnly = Type.Object({ csrf: Csrf }, { additionalProperties: false });

export const ChangePasswordForm = Type.Object({
  csrf: Csrf, currentPassword: Type.Optional(Type.String({ maxLength: 1024 })), newPassword: Password,
  signOutOtherSessions: Type.Optional(Type.Literal('true')),
}, { additionalProperties: false });
export type ChangePasswordForm = Static<typeof ChangePasswordForm>;

export const ReauthenticateForm = Type.Object({ csrf: Csrf, password: Password }, { additionalProperties: false });

export const ConfirmTotpForm = Type.Object({ csrf: Csrf, factorId: Id, code: Type.String({ minLength: 1, maxLength: 20 }) }, { additionalProperties: false });

export const RenamePasskeyForm = Type.Object({ csrf: Csrf, name: PasskeyName }, { additionalProperties: false });

export const FactorParams = Type.Object({ factorId: Id });
export const PasskeyParams = Type.Object({ passkeyId: Id });
export const SessionParams = Type.Object({ sessionId: Id });

/** What the passkeys script posts to /sign-in/passkey: the page's CSRF token and navigator.credentials.get()'s answer as JSON. */
export const PasskeySignInPost = Type.Object({ csrf: Csrf, response: AuthenticationResponse }, { additionalProperties: false });

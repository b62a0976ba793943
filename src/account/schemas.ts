import { Type, type Static } from 'typebox';

const Password = Type.String({ minLength: 1 });

export const ChangePasswordBody = Type.Object({
  currentPassword: Type.Optional(Type.String({ minLength: 1, description: 'Required when the account has a password.' })),
  newPassword: Type.String({ minLength: 1, description: "Must meet the environment's password policy (checked first)." }),
  signOutOtherSessions: Type.Boolean({ default: false, description: 'true: every other session of the user ends; this one stays.' }),
}, { additionalProperties: false });
export type ChangePasswordBody = Static<typeof ChangePasswordBody>;

export const ReauthenticateBody = Type.Object({
  password: Type.Optional(Password),
  code: Type.Optional(Type.String({ minLength: 1, maxLength: 20, description: 'A TOTP code or a backup code of the user\'s second factor.' })),
}, { additionalProperties: false, minProperties: 1, maxProperties: 1, description: 'Exactly one of `password` and `code`.' });
export type ReauthenticateBody = Static<typeof ReauthenticateBody>;

import { Type, type Static } from 'typebox';

/**
 * What every page reads from its query. Unknown parameters (a campaign tag) are ignored, and an unknown
 * locale falls back as a missing one would: a link with either still opens the page.
 */
export const PageQuery = Type.Object({
  redirect_url: Type.Optional(Type.String({ maxLength: 2048 })),
  locale: Type.Optional(Type.String({ maxLength: 35 })),
});
export type PageQuery = Static<typeof PageQuery>;

export const InvitationQuery = Type.Object({ ...PageQuery.properties, invitation_token: Type.Optional(Type.String({ maxLength: 200 })) });

// Form posts: the fields are strings as the browser sends them, length-bounded; the auth services check the rest.
const Csrf = Type.String({ maxLength: 100 });
const Email = Type.String({ minLength: 1, maxLength: 320 });
const Password = Type.String({ minLength: 1, maxLength: 1024 });
const MailedCode = Type.String({ minLength: 1, maxLength: 20 });
const Name = Type.String({ maxLength: 200 });

export const SignInForm = Type.Union([
  Type.Object({ csrf: Csrf, email: Email, password: Password }, { additionalProperties: false }),
  Type.Object({ csrf: Csrf, challengeToken: Type.String({ minLength: 1, maxLength: 200 }), code: MailedCode }, { additionalProperties: false }),
]);
export type SignInForm = Static<typeof SignInForm>;

export const SignUpForm = Type.Object({
  csrf: Csrf, email: Email, password: Password, name: Type.Optional(Name), legalConsentAccepted: Type.Optional(Type.Literal('true')),
}, { additionalProperties: false });
export type SignUpForm = Static<typeof SignUpForm>;

export const VerifyEmailForm = Type.Object({ csrf: Csrf, email: Email, code: MailedCode }, { additionalProperties: false });
export type VerifyEmailForm = Static<typeof VerifyEmailForm>;

export const EmailForm = Type.Object({ csrf: Csrf, email: Email }, { additionalProperties: false });
export type EmailForm = Static<typeof EmailForm>;

export const ResetPasswordForm = Type.Object({ csrf: Csrf, email: Email, code: MailedCode, newPassword: Password }, { additionalProperties: false });
export type ResetPasswordForm = Static<typeof ResetPasswordForm>;

export const AcceptInvitationForm = Type.Object({
  csrf: Csrf, token: Type.String({ minLength: 1, maxLength: 200 }), password: Password, name: Type.Optional(Name),
  legalConsentAccepted: Type.Optional(Type.Literal('true')),
}, { additionalProperties: false });
export type AcceptInvitationForm = Static<typeof AcceptInvitationForm>;

const InvitationToken = Type.String({ minLength: 1, maxLength: 200 });

/** The organization invitation page's forms: join while signed in, sign up, sign in, or the sign-in's second step. */
export const OrganizationInvitationForm = Type.Union([
  Type.Object({ csrf: Csrf, token: InvitationToken, intent: Type.Literal('join') }, { additionalProperties: false }),
  Type.Object({ ...AcceptInvitationForm.properties, intent: Type.Literal('sign_up') }, { additionalProperties: false }),
  Type.Object({ csrf: Csrf, token: InvitationToken, intent: Type.Literal('sign_in'), email: Email, password: Password }, { additionalProperties: false }),
  Type.Object({ csrf: Csrf, token: InvitationToken, challengeToken: Type.String({ minLength: 1, maxLength: 200 }), code: MailedCode }, { additionalProperties: false }),
]);
export type OrganizationInvitationForm = Static<typeof OrganizationInvitationForm>;

export const CsrfOnlyForm = Type.Object({ csrf: Csrf }, { additionalProperties: false });

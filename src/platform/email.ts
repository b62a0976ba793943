/**
 * The one rule an email must meet to be a user's: what the API's `Email` schema checks (its `format: 'email'`
 * is this syntax, its lengths these bounds), and what every flow that creates a user from someone else's word
 * (an IdP's assertion, a provider's profile, a directory) checks itself. users/accounts.ts exports it to them.
 */
export const EMAIL_LENGTH = { min: 3, max: 320 } as const;

// ajv-formats' "full" email format, which the API applied before this rule had a name of its own: a dot-atom
// local part, so no quoted local part ("a b"@corp.test) and no second @ (a@b.test@corp.test), and a host name.
const EMAIL_SYNTAX = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

/** The syntax alone, as the schemas' `email` format (their minLength and maxLength bound the length). */
export const isEmailSyntax = (value: string) => EMAIL_SYNTAX.test(value);

/** Whether a user may have this email: its length first (so an unbounded value is never matched), then its syntax. */
export const isAcceptableEmail = (value: string) =>
  value.length >= EMAIL_LENGTH.min && value.length <= EMAIL_LENGTH.max && isEmailSyntax(value);
